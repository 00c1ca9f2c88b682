"""Natural keys: what identifies a resource in its cloud, and the creates a diff refuses because a delete of the
same update still holds their key (the create would fail, or be undone, before the delete)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from eks_karpenter.tools.cli import main
from eks_karpenter.tools.engine import PlanDocument, PlannedResource
from eks_karpenter.tools.engine.diff import diff_plans, render_diff_markdown
from eks_karpenter.tools.engine.identity import GENERATED_IDENTITY, key_spec, natural_key

from tests.support import STACKS, plan_stack

ROLE = "aws:iam/role:Role"
ENTRY = "aws:eks/accessEntry:AccessEntry"


def res(type_: str, name: str, inputs: dict[str, Any], options: dict[str, Any] | None = None,
        parent: str = "c") -> PlannedResource:
    return PlannedResource(urn=f"urn:pulumi:dev::p::{parent}${type_}::{name}", type=type_, name=name, parent="",
                           custom=True, inputs=inputs, options=options or {})


def doc(*resources: PlannedResource) -> PlanDocument:
    return PlanDocument(project="p", stack="dev", resources=sorted(resources, key=lambda r: r.urn))


@pytest.mark.parametrize("stack", STACKS)
def test_every_planned_type_has_a_natural_key_or_a_generated_identity(stack: str) -> None:
    types = {r.type for r in plan_stack(stack).resources if r.custom and not r.type.startswith("pulumi:providers:")}
    unclassified = sorted(t for t in types if key_spec(t) is None and t not in GENERATED_IDENTITY)
    assert not unclassified, "add these types to identity.NATURAL_KEYS or GENERATED_IDENTITY"
    assert not {t for t in GENERATED_IDENTITY if key_spec(t) is not None}


def test_keys_of_each_kind() -> None:
    entry = res(ENTRY, "e", {"clusterName": "c", "principalArn": "arn:aws:iam::1:role/x", "type": "STANDARD"})
    assert natural_key(entry) == ("EKS access entry", "c", "arn:aws:iam::1:role/x")
    assert natural_key(res(ROLE, "r", {"name": "ops"})) == ("IAM role", "ops")
    # Auto-named (Pulumi's random suffix, or a prefix): nothing can share the name.
    assert natural_key(res(ROLE, "r", {"namePrefix": "ops-"})) is None
    # Kubernetes: the group, not the version; namespace and name.
    v1 = res("kubernetes:apps/v1:Deployment", "d", {"apiVersion": "apps/v1", "kind": "Deployment",
                                                   "metadata": {"name": "x", "namespace": "ns"}})
    beta = res("kubernetes:apps/v1beta2:Deployment", "d2", {"apiVersion": "apps/v1beta2", "kind": "Deployment",
                                                           "metadata": {"name": "x", "namespace": "ns"}})
    assert natural_key(v1) == natural_key(beta) == ("Kubernetes object", "apps", "Deployment", "x", "ns")
    core = res("kubernetes:core/v1:ConfigMap", "m", {"apiVersion": "v1", "kind": "ConfigMap",
                                                     "metadata": {"name": "x", "namespace": "ns"}})
    assert natural_key(core) == ("Kubernetes object", "", "ConfigMap", "x", "ns")
    patch = res("kubernetes:apps/v1:DeploymentPatch", "p", {"apiVersion": "apps/v1", "kind": "Deployment",
                                                           "metadata": {"name": "x", "namespace": "ns"}})
    assert natural_key(patch) is not None and natural_key(patch) != natural_key(v1)
    release = res("kubernetes:helm.sh/v3:Release", "r", {"name": "karpenter", "namespace": "kube-system"})
    assert natural_key(release) == ("Helm release", "kube-system", "karpenter")
    rule = res("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", "r", {
        "securityGroupId": "sg-1", "ipProtocol": "tcp", "fromPort": 443.0, "toPort": 443, "cidrIpv4": "10.0.0.0/8",
        "description": "not part of the key"})
    assert natural_key(rule) == ("security group rule", "sg-1", "tcp", "443", "443", "10.0.0.0/8", "", "", "")
    assert natural_key(res("aws:ec2/vpc:Vpc", "v", {"cidrBlock": "10.0.0.0/16"})) is None


def test_a_create_on_a_deleted_resources_key_is_refused_with_its_fix() -> None:
    old = doc(res(ROLE, "controller", {"name": "ops"}))
    new = doc(res(ROLE, "controller-role", {"name": "ops"}))
    diff = diff_plans(old, new)
    (collision,) = diff.collisions
    assert (collision.created.name, collision.held_by.name) == ("controller-role", "controller")
    (refusal,) = diff.refused
    assert refusal.key == "IAM role ops"
    assert "creates a new URN before it deletes an old one" in refusal.message
    assert "EntityAlreadyExists" in refusal.message
    assert "alias to the old URN" in refusal.message and "two steps" in refusal.message
    text = render_diff_markdown(diff)
    assert "Refused" in text and "needs an alias (`pulumi.Alias`)" not in text  # said once, in the refusal


def test_an_aliased_rename_is_one_resource_and_not_refused() -> None:
    old = doc(res(ROLE, "controller", {"name": "ops"}))
    new = doc(res(ROLE, "controller-role", {"name": "ops"},
                  {"aliases": ["urn:pulumi:dev::p::c$aws:iam/role:Role::controller"]}))
    diff = diff_plans(old, new)
    assert diff.refused == () and not diff.has_changes and len(diff.aliased) == 1


def test_auto_named_and_different_keys_do_not_collide() -> None:
    old = doc(res(ROLE, "a", {"namePrefix": "ops-"}), res(ROLE, "b", {"name": "one"}))
    new = doc(res(ROLE, "a2", {"namePrefix": "ops-"}), res(ROLE, "b2", {"name": "two"}))
    assert diff_plans(old, new).refused == ()


def test_attach_style_resources_say_the_delete_undoes_the_create() -> None:
    attach = "aws:iam/rolePolicyAttachment:RolePolicyAttachment"
    inputs = {"role": "ops", "policyArn": "arn:aws:iam::aws:policy/X"}
    (refusal,) = diff_plans(doc(res(attach, "a", inputs)), doc(res(attach, "b", inputs))).refused
    assert "the create succeeds" in refusal.message and "the role loses the policy" in refusal.message


def test_a_retained_holder_needs_an_alias_or_a_hand_step() -> None:
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "batch"}}
    old = doc(res("kubernetes:core/v1:Namespace", "namespaces-batch", ns, {"retainOnDelete": True}))
    new = doc(res("kubernetes:core/v1:Namespace", "team-batch", ns))
    (refusal,) = diff_plans(old, new).refused
    assert "forgotten (`retainOnDelete`)" in refusal.message and "pulumi import" in refusal.message
    # Importing the retained object under the new URN adopts it: one object, nothing collides.
    adopted = doc(res("kubernetes:core/v1:Namespace", "team-batch", ns, {"import": "batch"}))
    assert diff_plans(old, adopted).refused == ()
    # Beside a delete, an import still collides: the delete would remove what was just adopted.
    deleted = doc(res("kubernetes:core/v1:Namespace", "namespaces-batch", ns))
    assert len(diff_plans(deleted, adopted).refused) == 1


def test_the_diff_command_exits_3_on_a_collision(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    entry = {"clusterName": "c", "principalArn": "arn:aws:iam::1:role/ci", "type": "STANDARD"}
    (tmp_path / "old.json").write_text(doc(res(ENTRY, "cluster-deployer-ci", entry, parent="cluster")).to_json())
    (tmp_path / "new.json").write_text(doc(res(ENTRY, "access-entry-1-role-ci", entry, parent="access")).to_json())
    assert main(["diff", str(tmp_path / "old.json"), str(tmp_path / "new.json")]) == 3
    err = capsys.readouterr().err
    assert "error: refused: EKS access entry c/arn:aws:iam::1:role/ci:" in err
    assert "one access entry per principal (ResourceInUseException)" in err and "docs/UPGRADING.md" in err
