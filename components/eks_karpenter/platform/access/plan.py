"""Access entries and policy associations as plain data, and ARN parsing. No Pulumi here."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
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
    policy: Literal["clusterAdmin", "admin", "edit", "view"]
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


DEPLOYER_POLICIES: dict[str, Literal["clusterAdmin", "view"]] = {"deploy": "clusterAdmin", "preview": "view"}
"""A deployer's role -> its access policy (cluster scope). A preview gets AmazonEKSViewPolicy, which reads no
Secret, and the rest of what it reads through PREVIEW_GROUP's roles (`preview_rbac`)."""

PREVIEW_GROUP = "eks-karpenter:preview"
"""Kubernetes group of the `preview` deployers' entries, bound to the reads a preview needs beyond the view policy."""

PREVIEW_CLUSTER_READS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("", ("namespaces", "nodes", "persistentvolumes")),
    ("apiextensions.k8s.io", ("customresourcedefinitions",)),
    ("rbac.authorization.k8s.io", ("clusterroles", "clusterrolebindings", "roles", "rolebindings")),
    ("admissionregistration.k8s.io", ("validatingadmissionpolicies", "validatingadmissionpolicybindings",
                                      "validatingwebhookconfigurations", "mutatingwebhookconfigurations")),
    ("flowcontrol.apiserver.k8s.io", ("flowschemas", "prioritylevelconfigurations")),
    ("scheduling.k8s.io", ("priorityclasses",)),
    ("storage.k8s.io", ("storageclasses", "csidrivers")),
    (KARPENTER_GROUP, ("nodepools", "nodeclaims")),
    ("karpenter.k8s.aws", ("ec2nodeclasses",)),
    ("monitoring.coreos.com", ("servicemonitors", "podmonitors", "prometheusrules")),
)
"""What a preview reads that AmazonEKSViewPolicy does not: the cluster-scoped kinds the stack manages (and the
roles and custom resources its charts and observability create). No Secrets: those only in the platform's own
namespaces (`preview_rbac`)."""

_READ = ["get", "list", "watch"]


def deployer_entries(deployers: list[Deployer], cluster_admins: Sequence[str] = ()) -> list[PlannedEntry]:
    """The access entry of each deployer (previews in PREVIEW_GROUP), then of each cluster admin: cluster scope,
    keyed by its principal (`entry_key`), the entries of everyone who may run `pulumi up`."""
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


def preview_rbac(platform_namespaces: Sequence[str]) -> list[dict[str, Any]]:
    """The preview group's reads beyond the view policy: a ClusterRole and binding for PREVIEW_CLUSTER_READS, and
    in each of the platform's own namespaces (where Helm keeps each release's record as a Secret) a Role and
    binding that read Secrets there. Teams' namespaces get nothing: their Secrets stay unread."""
    name = "eks-karpenter:preview"
    subject = [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": PREVIEW_GROUP}]
    out: list[dict[str, Any]] = [
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": name},
         "rules": [{"apiGroups": [group], "resources": list(kinds), "verbs": _READ}
                   for group, kinds in PREVIEW_CLUSTER_READS]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": name},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
         "subjects": subject},
    ]
    for namespace in sorted(set(platform_namespaces)):
        role = f"{name}:helm-releases"
        out += [
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
             "metadata": {"name": role, "namespace": namespace},
             "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": _READ}]},
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
             "metadata": {"name": role, "namespace": namespace},
             "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role},
             "subjects": subject},
        ]
    return out


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
