"""Create and destroy order on the plan JSON graph: start-up races, namespaces, finalizers and delete timeouts.

`pulumi up` creates a resource after everything in its `dependencies`; `pulumi destroy` deletes it before them.
So "X is still there while Y is deleted" and "Y starts only after X exists" are the same check: X is in the
transitive closure of Y's dependencies.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from eks_karpenter.tools.engine import PlanDocument, PlannedResource, plan_program

from tests.support import REPO, STACKS, plan_stack, stack_config

RELEASE = "kubernetes:helm.sh/v3:Release"
NAMESPACE = "kubernetes:core/v1:Namespace"
NODEPOOL = "kubernetes:karpenter.sh/v1:NodePool"
NODECLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
ATTACHMENT = "aws:iam/rolePolicyAttachment:RolePolicyAttachment"


def closure(doc: PlanDocument, start: PlannedResource) -> set[str]:
    """Every URN `start` transitively depends on."""
    by_urn = {r.urn: r for r in doc.resources}
    seen: set[str] = set()
    todo = list(start.dependencies)
    while todo:
        urn = todo.pop()
        if urn in seen:
            continue
        seen.add(urn)
        todo += by_urn[urn].dependencies if urn in by_urn else []
    return seen


def controller_needs(doc: PlanDocument) -> dict[str, str]:
    """What the Karpenter controller must not start without (and must outlive on destroy), URN by label."""
    role = doc.get("aws:iam/role:Role", "karpenter-iam-controller")
    needs = {f"attachment {r.name}": r.urn for r in doc.by_type(ATTACHMENT) if r.parent == role.urn}
    needs["controller role (IRSA trust)"] = role.urn
    for r in doc.by_type("aws:eks/podIdentityAssociation:PodIdentityAssociation"):
        if r.parent.endswith("::karpenter-iam"):
            needs["pod identity association"] = r.urn
    needs["node access entry"] = doc.get("aws:eks/accessEntry:AccessEntry", "karpenter-iam-node-access").urn
    for type_ in ("aws:sqs/queue:Queue", "aws:sqs/queuePolicy:QueuePolicy"):
        for r in doc.by_type(type_):
            if r.parent.endswith("::interruption"):
                needs[type_] = r.urn
    return needs


@pytest.mark.slow
@pytest.mark.parametrize("stack", STACKS)
def test_controller_starts_after_its_iam_identity_access_entry_and_queue(stack: str) -> None:
    doc = plan_stack(stack)
    needs = controller_needs(doc)
    assert len([k for k in needs if k.startswith("attachment")]) >= 5
    assert "aws:sqs/queuePolicy:QueuePolicy" in needs
    if stack_config(stack).get("eks-karpenter:karpenter", {}).get("identity", "podIdentity") == "podIdentity":
        assert "pod identity association" in needs
    for name in ("karpenter-controller", "karpenter-crd"):
        release = doc.get(RELEASE, name)
        missing = {label for label, urn in needs.items() if urn not in closure(doc, release)}
        assert not missing, f"{name} may start before: {sorted(missing)}"


@pytest.mark.slow
@pytest.mark.parametrize("stack", STACKS)
def test_pools_and_classes_are_deleted_while_karpenter_still_runs(stack: str) -> None:
    doc = plan_stack(stack)
    needs = controller_needs(doc)
    needs["controller release"] = doc.get(RELEASE, "karpenter-controller").urn
    node_role = doc.get("aws:iam/role:Role", "karpenter-node-role")
    objects = [*doc.by_type(NODEPOOL), *doc.by_type(NODECLASS)]
    assert objects
    for obj in objects:
        reached = closure(doc, obj)
        missing = {label for label, urn in needs.items() if urn not in reached}
        assert not missing, f"{obj.name} may be deleted after: {sorted(missing)}"
        for attachment in doc.by_type(ATTACHMENT):
            if attachment.parent == node_role.urn:
                assert attachment.urn in reached, f"{obj.name} may outlive {attachment.name}"


@pytest.mark.slow
@pytest.mark.parametrize("stack", STACKS)
def test_finalized_objects_and_releases_have_a_bounded_delete(stack: str) -> None:
    doc = plan_stack(stack)
    for r in [*doc.by_type(NODEPOOL), *doc.by_type(NODECLASS),
              doc.get(RELEASE, "karpenter-controller"), doc.get(RELEASE, "karpenter-crd")]:
        assert r.options.get("customTimeouts") == {"delete": "15m"}, r.name


def _override(stack: str, key: str, **values: Any) -> dict[str, str]:
    return {f"eks-karpenter:{key}": json.dumps({**stack_config(stack).get(f"eks-karpenter:{key}", {}), **values})}


def test_delete_timeout_comes_from_config() -> None:
    doc = plan_program(REPO, "dev", config_overrides=_override("dev", "karpenter", deleteTimeout="40m"))
    for r in [*doc.by_type(NODEPOOL), *doc.by_type(NODECLASS)]:
        assert r.options["customTimeouts"] == {"delete": "40m"}
    assert doc.get(RELEASE, "karpenter-controller").options["customTimeouts"] == {"delete": "40m"}


@pytest.mark.slow
def test_a_karpenter_namespace_is_created_before_both_releases() -> None:
    doc = plan_program(REPO, "dev", config_overrides=_override("dev", "karpenter", namespace="karpenter"))
    ns = doc.get(NAMESPACE, "namespaces-karpenter")
    assert ns.inputs["metadata"]["name"] == "karpenter"
    assert "retainOnDelete" not in ns.options  # only the platform's releases live there
    for name in ("karpenter-controller", "karpenter-crd"):
        release = doc.get(RELEASE, name)
        assert release.inputs["namespace"] == "karpenter"
        assert ns.urn in closure(doc, release)
    pia = doc.by_type("aws:eks/podIdentityAssociation:PodIdentityAssociation")
    assert [p.inputs["namespace"] for p in pia if p.parent.endswith("::karpenter-iam")] == ["karpenter"]


def test_an_nth_namespace_is_created_before_its_release() -> None:
    doc = plan_program(REPO, "dev", config_overrides=_override("dev", "nodeTerminationHandler", namespace="nth"))
    ns = doc.get(NAMESPACE, "namespaces-nth")
    release = doc.get(RELEASE, "node-termination-handler-release")
    assert release.inputs["namespace"] == "nth"
    assert "createNamespace" not in release.inputs  # a namespace nothing manages would be left behind
    assert ns.urn in closure(doc, release)


@pytest.mark.slow
@pytest.mark.parametrize("stack", STACKS)
def test_every_release_namespace_exists_or_is_built_in(stack: str) -> None:
    doc = plan_stack(stack)
    created = {r.inputs["metadata"]["name"]: r.urn for r in doc.by_type(NAMESPACE)}
    for release in doc.by_type(RELEASE):
        namespace = release.inputs["namespace"]
        if namespace not in {"kube-system", "default"}:
            assert created[namespace] in closure(doc, release), release.name
