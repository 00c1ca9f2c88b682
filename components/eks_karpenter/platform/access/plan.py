"""Access entries and policy associations as plain data, and ARN parsing. No Pulumi here."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from eks_karpenter.labels import KARPENTER_GROUP
from eks_karpenter.platform.access.config import AccessConfig, Deployer

POLICIES = {
    "clusterAdmin": "AmazonEKSClusterAdminPolicy",
    "admin": "AmazonEKSAdminPolicy",
    "edit": "AmazonEKSEditPolicy",
    "view": "AmazonEKSViewPolicy",
}
"""Access policy short names -> EKS access policy names."""

SSO_PATH = "aws-reserved/sso.amazonaws.com/"

_ARN = re.compile(r"^arn:(?P<partition>[^:]*):(?P<service>[^:]*):(?P<region>[^:]*):(?P<account>[^:]*):"
                  r"(?P<resource>.*)$")


@dataclass(frozen=True)
class Principal:
    """An IAM principal ARN, split."""

    partition: str
    region: str
    """Empty for IAM (a global service); anything else is refused by the rules."""
    account: str
    kind: str
    """`role` or `user` (anything else is refused by the rules)."""
    path: str
    """The path between the kind and the name, without slashes at either end (`` when none)."""
    name: str

    @property
    def is_sso(self) -> bool:
        return self.kind == "role" and (self.path + "/").startswith(SSO_PATH)


def parse_principal(arn: str) -> Principal | None:
    """Split `arn:<partition>:iam::<account>:<kind>/<path>/<name>`; None when it is not an IAM ARN at all."""
    match = _ARN.fullmatch(arn)
    if not match or match["service"] != "iam" or "/" not in match["resource"]:
        return None
    kind, _, rest = match["resource"].partition("/")
    path, _, name = rest.rpartition("/")
    return Principal(match["partition"], match["region"], match["account"], kind, path, name)


def policy_arn(partition: str, short: str) -> str:
    """`arn:<partition>:eks::aws:cluster-access-policy/<policy>` for a short name in POLICIES."""
    return f"arn:{partition}:eks::aws:cluster-access-policy/{POLICIES[short]}"


@dataclass(frozen=True)
class PlannedEntry:
    """One access entry and its one policy association."""

    key: str
    """Stable resource-name key: the principal's (`entry_key`), independent of list and order."""
    principal_arn: str
    policy: Literal["clusterAdmin", "admin", "edit", "view"] | None
    """None: no access policy, the entry's `groups` alone (a `preview` deployer's)."""
    namespaces: tuple[str, ...]
    """Empty: cluster scope."""
    team: str | None
    groups: tuple[str, ...] = ()
    """Kubernetes groups of the entry (bound by RBAC objects of `team_rbac`)."""


def team_group(team: str) -> str:
    return f"eks-karpenter:team:{team}"


def team_node_pool_cluster_role(team: str) -> dict[str, Any]:
    """The ClusterRole for a team with `nodePools: true`: NodePools and EC2NodeClasses, and reading NodeClaims
    (to see its nodes come and go). Karpenter's objects are cluster-scoped, so the access is cluster-wide for
    those kinds only."""
    verbs = ["get", "list", "watch", "create", "update", "patch", "delete"]
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": f"eks-karpenter:team:{team}:node-pools"},
        "rules": [
            {"apiGroups": [KARPENTER_GROUP], "resources": ["nodepools"], "verbs": verbs},
            {"apiGroups": ["karpenter.k8s.aws"], "resources": ["ec2nodeclasses"], "verbs": verbs},
            {"apiGroups": [KARPENTER_GROUP], "resources": ["nodeclaims"], "verbs": ["get", "list", "watch"]},
        ],
    }


def team_node_pool_binding(team: str) -> dict[str, Any]:
    """Binds `team_node_pool_cluster_role` to the team's Kubernetes group."""
    name = f"eks-karpenter:team:{team}:node-pools"
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": team_group(team)}],
    }


def _slug(principal_arn: str) -> str:
    p = parse_principal(principal_arn)
    if p is None:
        return re.sub(r"[^a-z0-9]+", "-", principal_arn.lower()).strip("-")
    return f"{p.account}-{p.kind}-{p.name}".lower()


def entry_key(principal_arn: str) -> str:
    """Resource-name key of a principal's access entry and its policy association: derived from the principal
    alone, so the entry keeps its name whichever list (`deployers`, `clusterAdmins`, a team) holds it."""
    return f"entry-{_slug(principal_arn)}"


ENTRY_HOMES = ("cluster", "access")
"""The components an access entry may live in: `cluster` (the deployers' and cluster admins', which the
Kubernetes provider waits for) and `access` (teams', and cluster admins' before they moved beside the
deployers)."""


def former_entry_keys(principal_arn: str, *, deployer: str | None = None,
                      teams: Sequence[str] = ()) -> list[tuple[str, str]]:
    """Every (home, resource-name key) the principal's entry may have had: its key in the other home, and the
    keys of releases before entries were named by principal (`deployer-<name>`, `admin-<slug>`,
    `team-<team>-<slug>`). The entry aliases all of them, so a principal moved between lists, or a stack
    upgraded from those releases, keeps its one entry (EKS allows one per principal). A deployer's old name is
    known only while it is a deployer: moved elsewhere in the same change as the upgrade, it is not (the plan
    diff refuses that collision; docs/UPGRADING.md)."""
    slug = _slug(principal_arn)
    keys = [(home, entry_key(principal_arn)) for home in ENTRY_HOMES]
    keys.append(("access", f"admin-{slug}"))
    keys += [("access", f"team-{team}-{slug}") for team in teams]
    if deployer is not None:
        keys.append(("cluster", f"deployer-{deployer}"))
    return keys


def access_entries(cfg: AccessConfig) -> list[PlannedEntry]:
    """Every entry of `clusterAdmins` and `teams`: cluster admins (cluster scope), then each team's principals
    (namespace scope). The admins' entries are made beside the deployers' (`deployer_entries`), the teams' by the
    Access component (`team_entries`)."""
    return [PlannedEntry(entry_key(arn), arn, "clusterAdmin", (), None) for arn in cfg.cluster_admins] + \
        team_entries(cfg)


def team_entries(cfg: AccessConfig) -> list[PlannedEntry]:
    """Each team's principals' entries (namespace scope)."""
    out: list[PlannedEntry] = []
    for team in cfg.teams:
        groups = (team_group(team.name),) if team.node_pools else ()
        out += [PlannedEntry(entry_key(arn), arn, team.policy, tuple(team.namespaces), team.name, groups)
                for arn in team.principal_arns]
    return out


DEPLOYER_POLICIES: dict[str, Literal["clusterAdmin"] | None] = {"deploy": "clusterAdmin", "preview": None}
"""A deployer's role -> its access policy (cluster scope). A preview gets none: every EKS access policy that reads
reads teams' namespaced objects too (pod specs, ConfigMaps, events). It reads only through PREVIEW_GROUP's roles
(`preview_rbac`)."""

PREVIEW_GROUP = "eks-karpenter:preview"
"""Kubernetes group of the `preview` deployers' entries, bound to exactly the reads a preview needs (`preview_rbac`)."""


@dataclass(frozen=True)
class ReadAs:
    """How a preview reads an object the stack manages: the API group and resource it GETs, and whether it lives in
    a namespace."""

    group: str
    resource: str
    namespaced: bool


MANAGED_KINDS: dict[tuple[str, str], ReadAs] = {
    ("", "Namespace"): ReadAs("", "namespaces", False),
    ("", "ConfigMap"): ReadAs("", "configmaps", True),
    ("apps", "DeploymentPatch"): ReadAs("apps", "deployments", True),
    # Helm keeps each release's record as a Secret in the release's namespace: that is what a refresh reads.
    ("helm.sh", "Release"): ReadAs("", "secrets", True),
    ("rbac.authorization.k8s.io", "ClusterRole"): ReadAs("rbac.authorization.k8s.io", "clusterroles", False),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): ReadAs("rbac.authorization.k8s.io", "clusterrolebindings",
                                                                False),
    ("rbac.authorization.k8s.io", "Role"): ReadAs("rbac.authorization.k8s.io", "roles", True),
    ("rbac.authorization.k8s.io", "RoleBinding"): ReadAs("rbac.authorization.k8s.io", "rolebindings", True),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"):
        ReadAs("admissionregistration.k8s.io", "validatingadmissionpolicies", False),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"):
        ReadAs("admissionregistration.k8s.io", "validatingadmissionpolicybindings", False),
    (KARPENTER_GROUP, "NodePool"): ReadAs(KARPENTER_GROUP, "nodepools", False),
    ("karpenter.k8s.aws", "EC2NodeClass"): ReadAs("karpenter.k8s.aws", "ec2nodeclasses", False),
    ("monitoring.coreos.com", "PrometheusRule"): ReadAs("monitoring.coreos.com", "prometheusrules", True),
}
"""Every Kubernetes kind the platform registers, by the (API group, kind) of its Pulumi type
(`kubernetes:<group>/<version>:<kind>`, `core` for ""), and how a preview's refresh reads it back. The one list
the preview's roles are made from: a kind the program starts to register goes here, or the preview cannot
refresh it (the plan tests check every planned object against the roles)."""

PREVIEW_OWN_KINDS: tuple[ReadAs, ...] = (
    ReadAs("apiextensions.k8s.io", "customresourcedefinitions", False),
    ReadAs(KARPENTER_GROUP, "nodeclaims", False),
)
"""Cluster-scoped reads beyond the managed objects: the CRDs (the preflight and the Prometheus Operator look-up
list them; the `karpenter-crd` release installs Karpenter's) and Karpenter's NodeClaims (the stack's own kind)."""

_READ = ["get", "list", "watch"]


def deployer_entries(deployers: list[Deployer], cluster_admins: Sequence[str] = ()) -> list[PlannedEntry]:
    """The access entry of each deployer (previews in PREVIEW_GROUP, with no access policy), then of each cluster
    admin: cluster scope, keyed by its principal (`entry_key`), the entries of everyone who may run `pulumi up`."""
    return [*(PlannedEntry(entry_key(d.principal_arn), d.principal_arn, DEPLOYER_POLICIES[d.role], (), None,
                           (PREVIEW_GROUP,) if d.role == "preview" else ()) for d in deployers),
            *(PlannedEntry(entry_key(arn), arn, "clusterAdmin", (), None) for arn in cluster_admins)]


def caller_role_arn(caller_arn: str) -> str | None:
    """The IAM role behind an STS caller ARN (`...:assumed-role/<name>/<session>` -> `...:role/<name>`).

    The role's path is not in an assumed-role ARN, so callers compare by account and name only.
    """
    match = re.fullmatch(r"arn:([^:]+):sts::([0-9]{12}):assumed-role/([^/]+)/.+", caller_arn)
    if not match:
        return None
    return f"arn:{match[1]}:iam::{match[2]}:role/{match[3]}"


def read_as(type_token: str) -> ReadAs | None:
    """How a preview reads an object of the Pulumi type `kubernetes:<group>/<version>:<kind>` (None: a kind the
    platform does not register, or not a Kubernetes object)."""
    api, _, kind = type_token.removeprefix("kubernetes:").rpartition(":")
    group = api.rpartition("/")[0]
    return MANAGED_KINDS.get(("" if group == "core" else group, kind))


def preview_rbac(managed: Mapping[str, Iterable[tuple[str, str]]]) -> list[dict[str, Any]]:
    """The preview group's reads, and nothing else: a ClusterRole (and binding) reading the cluster-scoped kinds of
    MANAGED_KINDS and PREVIEW_OWN_KINDS, and per namespace of `managed` (namespace -> the (API group, kind) of the
    objects the stack manages there) a Role (and binding) reading those kinds there, and the Role itself.
    Namespaces not in `managed`, teams' among them, get nothing."""
    name = "eks-karpenter:preview"
    subject = [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": PREVIEW_GROUP}]
    cluster = [k for k in MANAGED_KINDS.values() if not k.namespaced] + list(PREVIEW_OWN_KINDS)
    out: list[dict[str, Any]] = [
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": name},
         "rules": _rules(cluster)},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": name},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
         "subjects": subject},
    ]
    own = {("rbac.authorization.k8s.io", "Role"), ("rbac.authorization.k8s.io", "RoleBinding")}
    for namespace in sorted(managed):
        kinds = [MANAGED_KINDS[k] for k in sorted(set(managed[namespace]) | own)]
        if any(not k.namespaced for k in kinds):
            raise ValueError(f"{namespace}: a cluster-scoped kind read as namespaced")
        out += [
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
             "metadata": {"name": name, "namespace": namespace}, "rules": _rules(kinds)},
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
             "metadata": {"name": name, "namespace": namespace},
             "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
             "subjects": subject},
        ]
    return out


def preview_reads(*, karpenter: str, termination_handler: str | None, prometheus_rule: bool,
                  cluster_autoscaler: str | None) -> dict[str, set[tuple[str, str]]]:
    """Namespace -> the (API group, kind) of each namespaced object the platform registers there, for
    `preview_rbac`: in Karpenter's namespace its Helm releases, the destroy guard's and the dashboard's ConfigMaps
    and (with the Prometheus Operator) the PrometheusRule; the termination handler's release in its namespace (None:
    not deployed); the Cluster Autoscaler Deployment the migration scales (None: no migration). Teams' namespaces
    hold none of them."""
    reads: dict[str, set[tuple[str, str]]] = {karpenter: {("helm.sh", "Release"), ("", "ConfigMap")}}
    if prometheus_rule:
        reads[karpenter].add(("monitoring.coreos.com", "PrometheusRule"))
    if termination_handler is not None:
        reads.setdefault(termination_handler, set()).add(("helm.sh", "Release"))
    if cluster_autoscaler is not None:
        reads.setdefault(cluster_autoscaler, set()).add(("apps", "DeploymentPatch"))
    return reads


def _rules(kinds: Iterable[ReadAs]) -> list[dict[str, Any]]:
    """One read-only rule per API group, its resources sorted."""
    groups: dict[str, set[str]] = {}
    for k in kinds:
        groups.setdefault(k.group, set()).add(k.resource)
    return [{"apiGroups": [group], "resources": sorted(resources), "verbs": list(_READ)}
            for group, resources in sorted(groups.items())]


@dataclass(frozen=True)
class AwsIdentity:
    """Who the AWS provider acts as, from its stack config: the role it ends up in and the profile it starts from
    (None: the process's own credentials)."""

    role_arn: str | None = None
    profile: str | None = None


def aws_provider_identity(config: Mapping[str, str]) -> AwsIdentity:
    """The AWS provider's identity from `aws:profile`, `aws:assumeRoles` (the last role of the chain is the one it
    acts as) and `aws:assumeRoleWithWebIdentity`. Malformed values are the provider's to report: read as unset."""
    role: str | None = None
    for key in ("aws:assumeRoleWithWebIdentity", "aws:assumeRoles"):
        try:
            value = json.loads(config.get(key) or "null")
        except ValueError:
            continue
        chain = value if isinstance(value, list) else [value]
        arns = [str(r["roleArn"]) for r in chain if isinstance(r, dict) and r.get("roleArn")]
        if arns:
            role = arns[-1]
    return AwsIdentity(role, config.get("aws:profile") or None)


def same_principal(a: str, b: str) -> bool:
    """Two principal ARNs name one IAM role or user (paths aside: an assumed role's ARN carries none)."""
    pa, pb = parse_principal(a), parse_principal(b)
    if pa is None or pb is None:
        return a == b
    return (pa.partition, pa.account, pa.kind, pa.name) == (pb.partition, pb.account, pb.kind, pb.name)


def consumer_access_warnings(team: str, namespace: str, team_namespaces: Mapping[str, Sequence[str]], *,
                             team_key: str, namespace_key: str, platform: str,
                             platform_key: str = "eks-karpenter:access") -> list[str]:
    """What a consumer stack (a team's project on the platform) deploys where the platform gives it no access:
    a team the platform's `access.teams` does not list, or a namespace the platform does not create for that
    team. `team_namespaces` is the platform's `teamNamespaces` output; each warning names the consumer's key
    and the platform's (`platform_key`, in the platform stack `platform`), so both sides know what to change."""
    if team not in team_namespaces:
        known = ", ".join(sorted(team_namespaces)) or "none"
        return [f"{team_key} {team!r}: the platform ({platform}) grants this team no access: add it under "
                f"{platform_key} teams there (teams it knows: {known}), or fix {team_key}"]
    owned = list(team_namespaces[team])
    if namespace not in owned:
        return [f"{namespace_key} {namespace!r}: the platform ({platform}) does not create this namespace for team "
                f"{team!r} ({platform_key} teams[{team}].namespaces: {', '.join(owned) or 'none'}): add it there, "
                f"or fix {namespace_key}"]
    return []
