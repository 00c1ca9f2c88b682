"""Rules on `eks-karpenter:access`: ARNs (partition, account, resource type, IAM Identity Center paths),
duplicates, team namespaces, who may deploy a cluster this stack creates, and the identity a run acts as."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from eks_karpenter.arns import partition_of
from eks_karpenter.config.errors import Issue, KeyPath
from eks_karpenter.platform.access.config import AccessConfig, Deployer, ProviderCredentials, Team
from eks_karpenter.platform.access.guardrails import closing_taint_keys
from eks_karpenter.platform.access.plan import (
    MANAGED_KINDS,
    SSO_PATH,
    AwsIdentity,
    caller_role_arn,
    entry_key,
    parse_principal,
    same_principal,
)
from eks_karpenter.platform.adopted import AdoptedGroup
from eks_karpenter.platform.namespaces.plan import BUILTIN_NAMESPACES
from eks_karpenter.platform.nodepool.class_config import NodeClassConfig

_NAME = re.compile(r"^[A-Za-z0-9_+=,.@-]{1,128}$")
_PATH_PART = re.compile(r"^[\x21-\x7e]+$")
_SSO_NAME = re.compile(r"^AWSReservedSSO_[A-Za-z0-9_+=,.@-]+_[0-9a-f]{16}$")
SSO_ROLE_PREFIX = "AWSReservedSSO_"
"""The name prefix of the roles IAM Identity Center creates (under the path `SSO_PATH`) for permission sets."""


def sso_lookup_hint(name: str) -> str:
    """How to find an IAM Identity Center role's ARN with its path (the session ARN has no path)."""
    return (f"`aws iam get-role --role-name {name} --query Role.Arn` prints it, or `aws iam list-roles "
            f"--path-prefix /{SSO_PATH} --query 'Roles[].Arn'` lists them all")


def session_message(arn: str) -> str:
    """Why an `assumed-role` session ARN (what `aws sts get-caller-identity` prints) is not a principal, and the
    role to give instead."""
    role = caller_role_arn(arn)
    if role is None:
        return ("a session ARN (assumed-role) changes with every login: give the role, "
                "arn:<partition>:iam::<account>:role/<name>")
    name = role.rsplit("/", 1)[1]
    if name.startswith(SSO_ROLE_PREFIX):
        return ("a session ARN (assumed-role, as `aws sts get-caller-identity` prints it) changes with every login "
                f"and has no IAM path: give the IAM Identity Center role with its path, "
                f"{role.replace(':role/', ':role/' + SSO_PATH + '[<region>/]')}: {sso_lookup_hint(name)}")
    return (f"a session ARN (assumed-role) changes with every login: give the role, {role} (with its path, if it "
            f"has one: `aws iam get-role --role-name {name} --query Role.Arn`)")


def check_principal(arn: str, at: KeyPath, region: str, kinds: tuple[str, ...] = ("role", "user")) -> list[Issue]:
    """One principal ARN: IAM, this region's partition, a 12-digit account, a role or user (not a session), an IAM
    Identity Center role with its path."""
    if re.fullmatch(r"arn:[^:]*:sts::[^:]*:assumed-role/.*", arn):
        return [Issue(at, session_message(arn), arn)]
    p = parse_principal(arn)
    if p is None:
        return [Issue(at, "not an IAM principal ARN (arn:<partition>:iam::<account>:role/<name> or :user/<name>)",
                      arn)]
    issues: list[Issue] = []
    try:
        want = partition_of(region)
    except ValueError:
        want = p.partition  # a bad region is reported at aws:region
    if p.partition != want:
        issues.append(Issue(at, f"partition must be {want!r} for region {region}", arn))
    if p.region or not re.fullmatch(r"[0-9]{12}", p.account):
        issues.append(Issue(at, "the account must be 12 digits (IAM ARNs have no region)", arn))
    if p.kind not in kinds:
        issues.append(Issue(at, f"must be an IAM {' or '.join(kinds)} ARN (access entries take no {p.kind}s)",
                            arn))
    elif not _NAME.fullmatch(p.name) or (p.path and not all(_PATH_PART.fullmatch(x) for x in p.path.split("/"))):
        issues.append(Issue(at, f"not a valid IAM {p.kind} name or path", arn))
    elif p.kind == "role" and p.name.startswith(SSO_ROLE_PREFIX) and not p.is_sso:
        issues.append(Issue(at, "an IAM Identity Center role without its path: EKS refuses it (\"principalArn is "
                            "invalid\") when it creates the access entry, ten minutes into the first `up`. Give the "
                            f"ARN IAM shows, arn:{p.partition}:iam::{p.account}:role/{SSO_PATH}[<region>/]{p.name}: "
                            f"{sso_lookup_hint(p.name)}", arn))
    elif (p.path + "/").startswith("aws-reserved/") and not p.is_sso:
        issues.append(Issue(at, "an aws-reserved role other than IAM Identity Center's", arn))
    elif p.is_sso and not _SSO_NAME.fullmatch(p.name):
        issues.append(Issue(at, f"an IAM Identity Center role (path {SSO_PATH}) is named "
                            "AWSReservedSSO_<permission set>_<16 hex digits>", arn))
    return issues


def validate_access(cfg: AccessConfig, at: KeyPath, region: str) -> list[Issue]:
    """Every rule on the access config, with the key path to fix."""
    issues: list[Issue] = []
    seen: dict[str, KeyPath] = {}

    def principal(arn: str, where: KeyPath) -> None:
        issues.extend(check_principal(arn, where, region))
        # One role or user whatever the path or case (IAM names are unique per account, case-insensitively),
        # which is also the entry's resource name (`entry_key`).
        key = entry_key(arn)
        if key in seen:
            issues.append(Issue(where, "EKS allows one access entry per principal, and this one is already at "
                                f"{'.'.join(str(x) for x in seen[key][1:])}", arn))
        else:
            seen[key] = where

    deployer_names: set[str] = set()
    for d, deployer in enumerate(cfg.deployers):
        if deployer.name in deployer_names:
            issues.append(Issue(at + ("deployers", d, "name"), "deployer listed twice", deployer.name))
        deployer_names.add(deployer.name)
        principal(deployer.principal_arn, at + ("deployers", d, "principalArn"))
    for i, arn in enumerate(cfg.cluster_admins):
        principal(arn, at + ("clusterAdmins", i))
    names: set[str] = set()
    owners: dict[str, tuple[int, int]] = {}
    for t, team in enumerate(cfg.teams):
        here = at + ("teams", t)
        for n, namespace in enumerate(team.namespaces):
            first, index = owners.setdefault(namespace, (t, n))
            if first != t:
                # Each team would get its rights (Secrets, exec) in the other's namespace, and both teams'
                # workload policies would hold its pods, which could then tolerate neither team's taint.
                issues.append(Issue(here + ("namespaces", n), f"already team {cfg.teams[first].name}'s (at "
                                    f"teams[{first}].namespaces[{index}]): a namespace belongs to one team; give "
                                    "each team its own, or make them one team", namespace))
        if team.name in names:
            issues.append(Issue(here + ("name",), "team listed twice", team.name))
        names.add(team.name)
        for n, namespace in enumerate(team.namespaces):
            if namespace in BUILTIN_NAMESPACES:
                issues.append(Issue(here + ("namespaces", n), "a built-in namespace: access there is cluster-wide "
                                    "in effect (kube-system holds the controllers' credentials); give the team "
                                    "its own", namespace))
            if team.namespaces.index(namespace) != n:
                issues.append(Issue(here + ("namespaces", n), "listed twice", namespace))
        for i, arn in enumerate(team.principal_arns):
            principal(arn, here + ("principalArns", i))
    role = cfg.provider_credentials.role_arn
    if role is not None:
        issues += check_principal(role, at + ("providerCredentials", "roleArn"), region, kinds=("role",))
    return issues


def team_prefix_issues(teams: Sequence[Team], at: KeyPath) -> list[Issue]:
    """A team whose name starts with another team's name and a dash: the other team's admission policy owns
    objects named `<team>-...`, so it could change or delete this team's pools and classes."""
    return [Issue(at + ("teams", t, "name"), f"inside team {other.name!r}'s prefix: team {other.name} owns NodePools "
                  f"and EC2NodeClasses named '{other.name}-...', this team's among them; choose a name that does "
                  f"not start with '{other.name}-'", team.name)
            for t, team in enumerate(teams) for other in teams if team.name.startswith(other.name + "-")]


def tenant_imds_issues(teams: Sequence[Team], system_hop_limit: int, spot_hop_limits: Sequence[int],
                       class_hop_limits: Sequence[int], at_cluster: KeyPath, at_classes: KeyPath) -> list[Issue]:
    """With teams on the cluster, an IMDS hop limit above 1 on nodes a team's pods can reach hands any such pod
    the node role's credentials (and, through them, the kubelet's identity): refuse it on the system node group
    (`system_hop_limit`: its taint keeps team pods off, but one slip in that guard would then hand over the nodes
    the Karpenter controller runs on), on the spot node groups (`spot_hop_limits`, in order) and on the
    platform's node classes (`class_hop_limits`), which team pools may use."""
    if not teams:
        return []
    why = ("a team's pods can land on these nodes, and above 1 any pod (not only a host-network one) reaches IMDS "
           "and the node role's credentials: set 1 (add-ons that need IMDS run on the host network)")
    issues = []
    if system_hop_limit > 1:
        issues.append(Issue(at_cluster + ("systemNodeGroup", "httpPutResponseHopLimit"),
                            "with teams on the cluster, above 1 any pod that reaches these nodes (the Karpenter "
                            "controller's) takes the node role's credentials and the kubelet's identity: set 1 "
                            "(add-ons that need IMDS run on the host network)", system_hop_limit))
    issues += [Issue(at_cluster + ("spotNodeGroups", i, "httpPutResponseHopLimit"), why, limit)
               for i, limit in enumerate(spot_hop_limits) if limit > 1]
    issues += [Issue(at_classes + (i, "metadataOptions", "httpPutResponseHopLimit"), why, limit)
               for i, limit in enumerate(class_hop_limits) if limit > 1]
    return issues


def adopted_group_imds_issue(group: AdoptedGroup, cluster: str, teams: Sequence[str], at: KeyPath) -> Issue | None:
    """With teams (`teams`, at `at`: `access.teams`), an adopted cluster's node group whose nodes answer pods on
    IMDS (IMDSv1 on, or a hop limit above 1) hands any team pod landing there the node role's credentials. It
    passes only when a NoSchedule or NoExecute taint keeps team pods off: that taint's key is then one no team pod
    may tolerate (`guardrails.platform_taint_keys`)."""
    if not group.exposed or closing_taint_keys(group):
        return None
    how = f"httpTokens {group.http_tokens}, hop limit {group.hop_limit}, from {group.source}"
    return Issue(at, f"node group {group.name!r} of cluster {cluster!r} has no taint that keeps team pods off, "
                 f"and its nodes answer every pod on IMDS ({how}): a team pod scheduled there takes the node role's "
                 "credentials. Close it before teams use the cluster: give it a launch template version with "
                 "httpTokens required and httpPutResponseHopLimit 1 (a new node group where it has EKS's default "
                 "template); or taint it NoSchedule (`aws eks update-nodegroup-config --cluster-name "
                 f"{cluster} --nodegroup-name {group.name} --taints 'addOrUpdateTaints=[{{key=<key>,"
                 "effect=NO_SCHEDULE}]'`, and the same toleration on what must still run there), which no team pod "
                 "may then tolerate; or configure no teams until the migration retires the group", list(teams))


def platform_objects_in_team_prefix(teams: Sequence[Team], pools: Sequence[str], classes: Sequence[str],
                                    at_pools: KeyPath, at_classes: KeyPath) -> list[Issue]:
    """A platform NodePool or EC2NodeClass named `<team>-...` for a team with pool rights: the team's admission
    policy would let it change or delete the platform's object."""
    owners = [team.name for team in teams if team.node_pools]
    issues = []
    for names, at, kind in ((pools, at_pools, "NodePool"), (classes, at_classes, "EC2NodeClass")):
        for i, name in enumerate(names):
            owner = next((o for o in owners if name.startswith(o + "-")), None)
            if owner is not None:
                issues.append(Issue(at + (i, "name"), f"a platform {kind} inside team {owner!r}'s prefix: the team "
                                    f"may change or delete objects named '{owner}-...' (nodePools: true); rename "
                                    "it", name))
    return issues


def deployer_issues(cfg: AccessConfig, cluster_created: bool, at: KeyPath) -> list[Issue]:
    """A cluster this stack creates needs its deployers listed: EKS gives its creator no access entry here."""
    if not cluster_created or cfg.deployers:
        return []
    return [Issue(at + ("deployers",), "required for a cluster this stack creates: EKS gives its creator no access "
                  "entry here (bootstrapClusterCreatorAdminPermissions is off), so list every identity that runs "
                  "`pulumi up` or `pulumi preview` (your SSO role for a laptop, the CI deploy role, the PR preview "
                  "role; docs/deploy.md)", None, has_value=False)]


def team_namespace_issues(teams: Sequence[Team], platform: Mapping[str, str], at: KeyPath) -> list[Issue]:
    """A team namespace that is one of the platform's own (`platform`: namespace -> the key that names it)."""
    return [Issue(at + ("teams", t, "namespaces", n), f"the platform's own namespace ({platform[namespace]}): "
                  "give the team its own", namespace)
            for t, team in enumerate(teams) for n, namespace in enumerate(team.namespaces) if namespace in platform]


def provider_identity_issues(cfg: AccessConfig, aws: AwsIdentity, at: KeyPath, cluster_created: bool) -> list[Issue]:
    """The Kubernetes provider's token must come from the identity the AWS provider acts as, and, for a cluster
    this stack creates, that identity (when the stack file names it) must be a declared `deploy` deployer or
    cluster admin: otherwise the cluster is built by one identity and its Helm releases are applied by another,
    which has no access entry (or only a read-only one)."""
    issues: list[Issue] = []
    creds = cfg.provider_credentials
    at_creds = at + ("providerCredentials",)
    if creds.role_arn is not None and (aws.role_arn is None or not same_principal(creds.role_arn, aws.role_arn)):
        acts = f"as {aws.role_arn} (aws:assumeRoles)" if aws.role_arn else \
            "as the process's own credentials (no aws:assumeRoles)"
        issues.append(Issue(at_creds + ("roleArn",), f"the AWS provider acts {acts}; the Kubernetes token must "
                            "come from the same identity: remove this (it follows aws:assumeRoles) or assume this "
                            "role in aws:assumeRoles too", creds.role_arn))
    if creds.profile is not None and creds.profile != aws.profile:
        uses = f"profile {aws.profile!r} (aws:profile)" if aws.profile else "no profile (aws:profile is unset)"
        issues.append(Issue(at_creds + ("profile",), f"the AWS provider uses {uses}; the Kubernetes token must "
                            "come from the same identity: remove this (it follows aws:profile) or set aws:profile "
                            "to it", creds.profile))
    role = aws.role_arn
    acting = next((d for d in cfg.deployers if role and same_principal(role, d.principal_arn)), None)
    admin = role is not None and any(same_principal(role, a) for a in cfg.cluster_admins)
    if cluster_created and role and cfg.deployers and acting is None and not admin:
        issues.append(Issue(at + ("deployers",), f"{role} (aws:assumeRoles) runs `pulumi up` here but is not "
                            "a declared deployer or cluster admin: it would get no access entry, and the first "
                            "Kubernetes object would fail with 401; add it", [d.principal_arn for d in cfg.deployers]))
    if acting is not None and acting.role == "preview":
        issues.append(Issue(("aws:assumeRoles",), f"the last role is the read-only preview deployer {acting.name!r}: "
                            "every `pulumi up` of this stack would act as it and fail on the first Kubernetes "
                            "object (its AmazonEKSAdminViewPolicy writes nothing). Assume a `deploy` deployer's role "
                            "here; previews take the preview role from their environment (the PR workflow's OIDC "
                            "credentials)", role))
    return issues


def created_cluster_issues(cfg: AccessConfig, at: KeyPath, *, aws_auth_compatibility: bool,
                           at_cluster: KeyPath) -> list[Issue]:
    """A cluster this stack creates is built and filled by its `deploy` deployers alone: its creator gets no
    bootstrap admin, so something that needs the creator to be an admin cannot work."""
    issues: list[Issue] = []
    if cfg.deployers and not any(d.role == "deploy" for d in cfg.deployers):
        issues.append(Issue(at + ("deployers",), "no `deploy` deployer: the only ones listed are read-only "
                            "`preview` identities (AmazonEKSAdminViewPolicy), so the first `pulumi up` could "
                            "create the cluster but not one Kubernetes object in it. List the identity that runs "
                            "`pulumi up` with `role: deploy` (the default)",
                            [d.principal_arn for d in cfg.deployers]))
    if aws_auth_compatibility:
        issues.append(Issue(at_cluster + ("awsAuthCompatibility",), "not on a cluster this stack creates: pulumi-eks "
                            "writes the aws-auth ConfigMap as the cluster's creator, which has no admin here "
                            "(bootstrapClusterCreatorAdminPermissions is off), so the `up` stops on a 401 with the "
                            "cluster half-built. Drop it (and use authenticationMode: API): nodes join through "
                            "their EC2_LINUX access entries, people through access.deployers and clusterAdmins",
                            True))
    return issues


def with_provider_identity(cfg: AccessConfig, aws: AwsIdentity) -> AccessConfig:
    """The access config with the Kubernetes provider's credentials defaulted to the AWS provider's identity."""
    creds = cfg.provider_credentials
    if (creds.role_arn or aws.role_arn) == creds.role_arn and (creds.profile or aws.profile) == creds.profile:
        return cfg
    values: dict[str, Any] = {"role_arn": creds.role_arn or aws.role_arn, "profile": creds.profile or aws.profile}
    merged = ProviderCredentials.model_construct(None, **{k: v for k, v in values.items() if v is not None})
    return cfg.model_copy(update={"provider_credentials": merged})


def caller_issues(caller_arn: str, cfg: AccessConfig, at: KeyPath, *, dry_run: bool,
                  cluster_created: bool) -> list[Issue]:
    """The identity running this `pulumi preview` or `up` (`caller_arn`, as STS names it) must be declared: a
    deployer (a `preview` one for previews only) or a cluster admin. Anyone else has no cluster-wide access entry,
    so the first Kubernetes call fails (401 or 403) with the cluster half-changed. An assumed role's session ARN
    carries no IAM path, so roles are matched by account and name. Checked on a cluster this stack creates, and
    on an adopted one that lists deployers (otherwise its access is the cluster's own business)."""
    if not cluster_created and not cfg.deployers:
        return []
    who = caller_role_arn(caller_arn) or caller_arn
    run = "`pulumi preview`" if dry_run else "`pulumi up` (or destroy)"
    for d, deployer in enumerate(cfg.deployers):
        if not same_principal(who, deployer.principal_arn):
            continue
        if deployer.role == "preview" and not dry_run:
            return [Issue(at + ("deployers", d, "role"), f"{caller_arn} is the read-only deployer "
                          f"{deployer.name!r}: it may run `pulumi preview`, not `pulumi up` or destroy "
                          "(AmazonEKSAdminViewPolicy writes nothing, so the first Kubernetes change would fail "
                          "half-way). Run this as a `deploy` deployer", deployer.role)]
        return []
    if any(same_principal(who, admin) for admin in cfg.cluster_admins):
        return []
    declared = [d.principal_arn for d in cfg.deployers] + list(cfg.cluster_admins)
    behind = f" (role {who})" if who != caller_arn else ""
    return [Issue(at + ("deployers",), f"{run} runs as {caller_arn}{behind}, which is not a declared deployer or "
                  "cluster admin: it has no access entry, so its first Kubernetes call would fail with 401. Run as "
                  "a declared deployer (AWS_PROFILE, aws:profile or aws:assumeRoles), or add this identity to "
                  "deployers as IAM shows it (a role with its path: `aws iam get-role --role-name <name> --query "
                  "Role.Arn`)", declared)]


def preview_builtin_namespace_warnings(deployers: Sequence[Deployer], reads: Mapping[str, Iterable[tuple[str, str]]],
                                       keys: Mapping[KeyPath, str]) -> list[Issue]:
    """A `preview` deployer beside platform objects in a built-in namespace (`kube-system`): its Role there reads
    every object of their kinds, the cluster's own among them. Helm's release records are Secrets a refresh lists
    by label, which RBAC cannot narrow (a Role names resources, not labels or types). `reads`: `preview_reads`;
    `keys`: the key path of each setting that puts the platform in a namespace -> that namespace. One warning per
    namespace, at its first key."""
    previews = [d.name for d in deployers if d.role == "preview"]
    by_namespace: dict[str, list[KeyPath]] = {}
    for at, namespace in keys.items():
        if previews and namespace in BUILTIN_NAMESPACES and namespace in reads:
            by_namespace.setdefault(namespace, []).append(at)
    found: list[Issue] = []
    for namespace, paths in by_namespace.items():
        kinds = ", ".join(sorted({MANAGED_KINDS[k].resource for k in reads[namespace]}))
        found.append(Issue(paths[0], f"is a built-in namespace, and the preview deployers ({', '.join(previews)}), "
                           "which pull-request previews run as, read every object of the kinds the stack keeps "
                           f"there ({kinds}), not only the stack's: Helm's release records are Secrets a preview "
                           "lists by label, which RBAC cannot narrow, so they read every Secret there (legacy "
                           "service account tokens, other add-ons' keys). A new stack: set karpenter.namespace "
                           "(and nodeTerminationHandler.namespace) to a namespace of the platform's own. A running "
                           "stack: `eks-karpenter diff` refuses that move; accept these reads knowingly, or drop the "
                           "preview deployer (docs/deploy.md)", namespace))
    return found


def open_reservation_warnings(teams: Sequence[Team], classes: Sequence[NodeClassConfig],
                              at_classes: KeyPath) -> list[Issue]:
    """Platform classes with capacity reservations beside teams with pool rights, said once: an `open`
    reservation (EC2's default) takes any matching on-demand launch in the account, a team pool's included; a
    team class cannot select reservations, but nothing keeps its launches out of open ones."""
    pool_teams = [t.name for t in teams if t.node_pools]
    # A class whose every term asks for `targeted` reservations selects none that an unaimed launch can take.
    reserving = [i for i, c in enumerate(classes) if any(
        t.instance_match_criteria != "targeted" for t in c.capacity_reservation_selector_terms or [])]
    if not pool_teams or not reserving:
        return []
    i = reserving[0]
    terms = [t.dump() for t in classes[i].capacity_reservation_selector_terms or []]
    return [Issue(at_classes + (i, "capacityReservationSelectorTerms"), "selects capacity reservations while teams "
                  f"with pool rights ({', '.join(pool_teams)}) launch on-demand nodes in the account: an open "
                  "reservation (EC2's default) is used by any matching on-demand launch, a team pool's included. "
                  "Create the platform's reservations with `instanceMatchCriteria: targeted` to keep them for its "
                  "classes (docs/operations.md, Tenancy)", terms)]
