"""Rules on `eks-karpenter:access`: ARNs (partition, account, resource type), duplicates, team namespaces."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from eks_karpenter.arns import partition_of
from eks_karpenter.config.errors import Issue, KeyPath
from eks_karpenter.platform.access.config import AccessConfig, ProviderCredentials, Team
from eks_karpenter.platform.access.plan import SSO_PATH, AwsIdentity, entry_key, parse_principal, same_principal
from eks_karpenter.platform.namespaces.plan import BUILTIN_NAMESPACES

_NAME = re.compile(r"^[A-Za-z0-9_+=,.@-]{1,128}$")
_PATH_PART = re.compile(r"^[\x21-\x7e]+$")
_SSO_NAME = re.compile(r"^AWSReservedSSO_[A-Za-z0-9_+=,.@-]+_[0-9a-f]{16}$")


def check_principal(arn: str, at: KeyPath, region: str, kinds: tuple[str, ...] = ("role", "user")) -> list[Issue]:
    """One principal ARN: IAM, this region's partition, a 12-digit account, a role or user (not a session)."""
    if re.fullmatch(r"arn:[^:]*:sts::[^:]*:assumed-role/.*", arn):
        return [Issue(at, "a session ARN (assumed-role) changes with every login: give the role, "
                      "arn:<partition>:iam::<account>:role/<name>", arn)]
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
    levels: dict[str, Team] = {}
    for t, team in enumerate(cfg.teams):
        here = at + ("teams", t)
        for namespace in team.namespaces:
            other = levels.setdefault(namespace, team)
            if other.pod_security != team.pod_security:
                issues.append(Issue(here + ("podSecurity",), f"namespace {namespace!r} is also team {other.name}'s, "
                                    f"at podSecurity {other.pod_security}: a namespace has one level; give both "
                                    "teams the same, or each its own namespace", team.pod_security))
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


def tenant_imds_issues(teams: Sequence[Team], spot_hop_limits: Sequence[int], class_hop_limits: Sequence[int],
                       at_cluster: KeyPath, at_classes: KeyPath) -> list[Issue]:
    """With teams on the cluster, an IMDS hop limit above 1 on nodes a team's pods can land on hands any such pod
    the node role's credentials (and, through them, the kubelet's identity): refuse it on the spot node groups
    (`spot_hop_limits`, in order) and on the platform's node classes (`class_hop_limits`), which team pools may
    use."""
    if not teams:
        return []
    why = ("a team's pods can land on these nodes, and above 1 any pod (not only a host-network one) reaches IMDS "
           "and the node role's credentials: set 1 (add-ons that need IMDS run on the host network)")
    issues = [Issue(at_cluster + ("spotNodeGroups", i, "httpPutResponseHopLimit"), why, limit)
              for i, limit in enumerate(spot_hop_limits) if limit > 1]
    issues += [Issue(at_classes + (i, "metadataOptions", "httpPutResponseHopLimit"), why, limit)
               for i, limit in enumerate(class_hop_limits) if limit > 1]
    return issues


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
    this stack creates, that identity (when the stack file names it) must be a declared deployer: otherwise the
    cluster is built by one identity and its Helm releases are applied by another, which has no access entry."""
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
    if cluster_created and role and cfg.deployers and \
            not any(same_principal(role, d.principal_arn) for d in cfg.deployers):
        issues.append(Issue(at + ("deployers",), f"{role} (aws:assumeRoles) runs `pulumi up` here but is not "
                            "a declared deployer: it would get no access entry, and the first Kubernetes object "
                            "would fail with 401; add it", [d.principal_arn for d in cfg.deployers]))
    return issues


def with_provider_identity(cfg: AccessConfig, aws: AwsIdentity) -> AccessConfig:
    """The access config with the Kubernetes provider's credentials defaulted to the AWS provider's identity."""
    creds = cfg.provider_credentials
    if (creds.role_arn or aws.role_arn) == creds.role_arn and (creds.profile or aws.profile) == creds.profile:
        return cfg
    values: dict[str, Any] = {"role_arn": creds.role_arn or aws.role_arn, "profile": creds.profile or aws.profile}
    merged = ProviderCredentials.model_construct(None, **{k: v for k, v in values.items() if v is not None})
    return cfg.model_copy(update={"provider_credentials": merged})
