"""The `preview` deployer reads what a preview, the preflight and the drift check need, and no team's workloads:
no EKS access policy, only its Kubernetes group's roles, checked on the plans against every object they manage."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from eks_karpenter.platform.access.plan import (
    MANAGED_KINDS,
    PREVIEW_GROUP,
    preview_rbac,
    read_as,
)
from eks_karpenter.platform.adopted import CRDS_TOKEN
from eks_karpenter.platform.observability.monitors import OPERATOR_CRDS
from eks_karpenter.tools.engine import run_plan
from eks_karpenter.tools.engine.document import PlanDocument

from tests.support import REPO, plan_config, plan_stack, stack_config

RBAC = "kubernetes:rbac.authorization.k8s.io/v1:"
READ = ("get", "list", "watch")
UNREAD_IN_TEAM_NAMESPACES = {("", "pods"), ("", "pods/log"), ("", "configmaps"), ("", "secrets"), ("", "events")}
"""What a preview never reads in a team's namespace: the team's workloads, their logs, configuration, secrets and
events."""
PREVIEW_ARN = "arn:aws:iam::123456789012:role/github-preview-brownfield"


def _with_preview(stack: str, tmp_path: Path) -> PlanDocument:
    """The stack's plan, with a `preview` deployer added where the stack file declares none (an adopted cluster)."""
    config = stack_config(stack)
    deployers = config.setdefault("eks-karpenter:access", {}).setdefault("deployers", [])
    if any(d.get("role") == "preview" for d in deployers):
        return plan_stack(stack)
    # The offline plan runs as this user: declared beside the preview, as a deploy role would be.
    deployers += [{"name": "plan", "principalArn": "arn:aws:iam::123456789012:user/plan"},
                  {"name": "preview", "principalArn": PREVIEW_ARN, "role": "preview"}]
    result = plan_config(config, tmp_path, stack=stack)
    assert result.error is None, result.error
    return result.document


def _plan(stack: str, tmp_path: Path) -> PlanDocument:
    """`prod+operator`: prod on a cluster that has the Prometheus Operator's CRDs (its PrometheusRule planned)."""
    if stack == "prod+operator":
        answer = {CRDS_TOKEN: {"reachable": True, "crds": sorted(OPERATOR_CRDS.values())}}
        return run_plan(REPO, "prod", invoke_results=answer).document
    return _with_preview(stack, tmp_path)


def _rbac(doc: PlanDocument) -> list[dict[str, Any]]:
    return [{"kind": r.type.rpartition(":")[2], **r.inputs} for r in doc.resources if r.type.startswith(RBAC)]


def allowed(objects: list[dict[str, Any]], group: str, resource: str, verb: str, namespace: str | None,
            subject: str = PREVIEW_GROUP) -> bool:
    """Kubernetes RBAC for a member of the group `subject`: may it `verb` `resource` in `namespace` (None: a
    cluster-scoped object, or every namespace at once)?"""
    roles = {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]): o.get("rules") or []
             for o in objects if o["kind"] in ("Role", "ClusterRole")}
    for binding in objects:
        if binding["kind"] not in ("RoleBinding", "ClusterRoleBinding"):
            continue
        if not any(s["kind"] == "Group" and s["name"] == subject for s in binding.get("subjects") or []):
            continue
        where = binding["metadata"].get("namespace")
        if binding["kind"] == "RoleBinding" and where != namespace:
            continue  # a RoleBinding grants only inside its own namespace
        ref = binding["roleRef"]
        for rule in roles.get((ref["kind"], where if ref["kind"] == "Role" else None, ref["name"]), []):
            if all(want in have or "*" in have for want, have in
                   ((group, rule["apiGroups"]), (resource, rule["resources"]), (verb, rule["verbs"]))):
                return True
    return False


def _team_namespaces(stack: str) -> set[str]:
    return {ns for t in stack_config(stack).get("eks-karpenter:access", {}).get("teams", []) for ns in t["namespaces"]}


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_preview_deployer_has_no_access_policy_only_its_group(stack: str) -> None:
    doc = plan_stack(stack)
    [preview] = [d["principalArn"] for d in stack_config(stack)["eks-karpenter:access"]["deployers"]
                 if d.get("role") == "preview"]
    [entry] = [r for r in doc.by_type("aws:eks/accessEntry:AccessEntry") if r.inputs["principalArn"] == preview]
    assert entry.inputs["kubernetesGroups"] == [PREVIEW_GROUP]
    assert not [r for r in doc.by_type("aws:eks/accessPolicyAssociation:AccessPolicyAssociation")
                if r.parent == entry.urn], "an EKS access policy reads teams' pods, ConfigMaps or Secrets"


@pytest.mark.parametrize("stack", ["dev", "prod", "prod+operator", "brownfield"])
def test_the_preview_reads_every_object_the_plan_manages(stack: str, tmp_path: Path) -> None:
    doc = _plan(stack, tmp_path)
    if stack == "prod+operator":
        assert doc.by_type("kubernetes:monitoring.coreos.com/v1:PrometheusRule")
    rbac = _rbac(doc)
    assert rbac
    managed = [r for r in doc.resources if r.type.startswith("kubernetes:") and r.custom]
    assert managed
    for r in managed:
        how = read_as(r.type)
        assert how is not None, f"{r.type}: a kind the preview's roles do not know (access.plan.MANAGED_KINDS)"
        metadata = r.inputs.get("metadata") or {}
        namespace = metadata.get("namespace") or r.inputs.get("namespace")  # a Helm release names its own
        assert how.namespaced == (namespace is not None), r.type
        for verb in ("get", "list"):
            assert allowed(rbac, how.group, how.resource, verb, namespace), (stack, r.type, r.name, verb, namespace)


@pytest.mark.parametrize("stack", ["dev", "prod", "brownfield"])
def test_the_preview_reads_no_teams_workloads_and_writes_nothing(stack: str, tmp_path: Path) -> None:
    rbac = _rbac(_with_preview(stack, tmp_path))
    namespaces = {o["metadata"].get("namespace") for o in rbac}
    for how in MANAGED_KINDS.values():
        for verb in ("create", "update", "patch", "delete", "*"):
            assert not any(allowed(rbac, how.group, how.resource, verb, ns) for ns in namespaces), (how, verb)
    for o in rbac:
        if o["metadata"]["name"] == PREVIEW_GROUP:
            for rule in o.get("rules") or []:
                assert tuple(rule["verbs"]) == READ, o["metadata"]
                assert "*" not in rule["resources"] and "*" not in rule["apiGroups"], o["metadata"]
    for namespace in _team_namespaces(stack) | {"a-team-namespace"}:
        for group, resource in UNREAD_IN_TEAM_NAMESPACES:
            for verb in READ:
                assert not allowed(rbac, group, resource, verb, namespace), (namespace, resource, verb)
    for group, resource in UNREAD_IN_TEAM_NAMESPACES:
        assert not allowed(rbac, group, resource, "list", None), f"{resource} readable in every namespace"


def test_team_namespaces_get_no_role() -> None:
    rbac = _rbac(plan_stack("dev"))
    teams = _team_namespaces("dev")
    assert teams
    assert not teams & {o["metadata"].get("namespace") for o in rbac if o["metadata"]["name"].startswith(
        PREVIEW_GROUP)}


def test_every_managed_kind_is_read_as_its_own_resource() -> None:
    # The roles name each kind as the API serves it: its lowercase plural, a patch as the object it patches, and a
    # Helm release as the Secrets Helm keeps its records in.
    special = {"DeploymentPatch": "deployments", "Release": "secrets"}
    for (_, kind), how in MANAGED_KINDS.items():
        plural = kind.lower() + ("es" if kind.endswith("s") else "s")
        plural = plural.replace("policys", "policies").replace("policyes", "policies")
        assert how.resource == special.get(kind, plural), kind


def test_a_namespace_role_reads_only_the_kinds_managed_there() -> None:
    objs = preview_rbac({"karpenter": {("helm.sh", "Release")}, "cas": {("apps", "DeploymentPatch")}})
    assert allowed(objs, "", "secrets", "get", "karpenter")
    assert not allowed(objs, "", "secrets", "get", "cas")
    assert allowed(objs, "apps", "deployments", "get", "cas")
    assert not allowed(objs, "apps", "deployments", "get", "karpenter")
    assert not allowed(objs, "", "configmaps", "get", "karpenter")
    with pytest.raises(ValueError, match="cluster-scoped"):
        preview_rbac({"karpenter": {("", "Namespace")}})
