"""Cross-field rules for the cluster config."""

from __future__ import annotations

import ipaddress
from datetime import date

from eks_karpenter import versions
from eks_karpenter.arns import arn_issues
from eks_karpenter.catalogue.names import NameProblem, type_problem
from eks_karpenter.config.errors import Issue, KeyPath, render_path
from eks_karpenter.config.model import aliases
from eks_karpenter.platform.cluster import plan as P
from eks_karpenter.platform.cluster.config import ClusterConfig
from eks_karpenter.platform.nodepool.instances import family_arch

_CREATE_ONLY = ("version", "upgrade_policy", "authentication_mode", "endpoint_private_access",
                "endpoint_public_access", "public_access_cidrs", "api_access", "log_types", "log_retention_in_days",
                "secrets_encryption", "kms_key_arn", "system_node_group", "spot_node_groups", "addon_versions")


def validate_cluster(cfg: ClusterConfig, at: KeyPath, protected: bool) -> list[Issue]:
    """The cluster section's own rules: create-only keys on an adopted cluster; authentication, endpoint,
    protection and node group rules on a created one."""
    if cfg.existing:
        return _adopted_cluster_issues(cfg, at)
    return [*_created_only_issues(cfg, at), *_authentication_issues(cfg, at), *_endpoint_issues(cfg, at),
            *_api_access_issues(cfg, at + ("apiAccess",), protected), *_protection_issues(cfg, at, protected),
            *_node_group_issues(cfg, at)]


def _adopted_cluster_issues(cfg: ClusterConfig, at: KeyPath) -> list[Issue]:
    """An adopted cluster (existing: true): keys that only shape a created one, and repeated security groups."""
    alias = aliases(ClusterConfig)
    issues = [Issue(at + (alias[name],), "does not apply to an existing cluster (existing: true); this stack does "
                    "not manage the cluster itself", cfg.written(name)) for name in _CREATE_ONLY if cfg.is_set(name)]
    ids = cfg.node_security_group_ids
    issues += [Issue(at + ("nodeSecurityGroupIds", i), "listed twice", sg)
               for i, sg in enumerate(ids) if ids.index(sg) != i]
    return issues


def _created_only_issues(cfg: ClusterConfig, at: KeyPath) -> list[Issue]:
    """Keys that only apply to an adopted cluster."""
    issues = []
    if cfg.node_security_group_ids:
        issues.append(Issue(at + ("nodeSecurityGroupIds",), "only applies to an existing cluster (existing: true): "
                            "a created cluster's nodes all share its cluster security group",
                            cfg.node_security_group_ids))
    if cfg.is_set("preflight"):
        issues.append(Issue(at + ("preflight",), "only applies to an existing cluster (existing: true): a cluster "
                            "this stack creates has nothing installed to check", cfg.preflight))
    return issues


def _authentication_issues(cfg: ClusterConfig, at: KeyPath) -> list[Issue]:
    """aws-auth is not for a cluster this stack creates (awsAuthCompatibility itself is refused by the access
    rules, which say why)."""
    issues = []
    if cfg.authentication_mode == "API_AND_CONFIG_MAP" and not cfg.aws_auth_compatibility:
        issues.append(Issue(at + ("authenticationMode",), "API_AND_CONFIG_MAP keeps the aws-auth ConfigMap "
                            "alive, which nothing on a cluster this stack creates uses (nodes and people get access "
                            "entries): use API, the default", cfg.authentication_mode))
    return issues


def _endpoint_issues(cfg: ClusterConfig, at: KeyPath) -> list[Issue]:
    """The API endpoint: reachable at all, by whom, and the keys that only apply to one kind of endpoint."""
    issues = []
    if not cfg.endpoint_private_access and not cfg.endpoint_public_access:
        issues.append(Issue(at + ("endpointPrivateAccess",), "at least one of endpointPrivateAccess and "
                            "endpointPublicAccess must be true", False))
    if cfg.endpoint_public_access and not cfg.public_access_cidrs:
        issues.append(Issue(at + ("publicAccessCidrs",), "a public endpoint needs an explicit allow-list",
                            [], ))
    if cfg.public_access_cidrs and not cfg.endpoint_public_access:
        issues.append(Issue(at + ("publicAccessCidrs",), "only applies with endpointPublicAccess: true",
                            cfg.public_access_cidrs))
    if cfg.endpoint_private_access and not cfg.endpoint_public_access and not cfg.api_access.sources:
        issues.append(Issue(at + ("apiAccess",), "the API endpoint is private-only and nothing is admitted to it "
                            "on tcp/443, so `pulumi up` could not reach it (its Helm releases would time out after "
                            "the cluster is built): set apiAccess.cidrs or apiAccess.securityGroupIds to the "
                            "network `pulumi up` runs from (a runner in or peered with the VPC), or "
                            "endpointPublicAccess: true with publicAccessCidrs (see docs/deploy.md, private-only "
                            "bootstrap)", None, has_value=False))
    if cfg.api_access.sources and not cfg.endpoint_private_access:
        issues.append(Issue(at + ("apiAccess",), "admits sources to the private endpoint, which "
                            "endpointPrivateAccess: false turns off", cfg.written("api_access")))
    return issues


def _protection_issues(cfg: ClusterConfig, at: KeyPath, protected: bool) -> list[Issue]:
    """A protected (production) cluster: no endpoint open to the internet, secrets encrypted with KMS."""
    issues = []
    if protected and OPEN_CIDR in cfg.public_access_cidrs:
        issues.append(Issue(at + ("publicAccessCidrs",), "a protected (production) cluster's public endpoint "
                            "may not be open to the internet: list your CIDRs or use the private endpoint",
                            cfg.public_access_cidrs))
    if protected and not cfg.secrets_encryption:
        issues.append(Issue(at + ("secretsEncryption",), "a protected (production) cluster must encrypt "
                            "secrets with KMS", False))
    if cfg.kms_key_arn and not cfg.secrets_encryption:
        issues.append(Issue(at + ("kmsKeyArn",), "only applies with secretsEncryption: true", cfg.kms_key_arn))
    return issues


def _node_group_issues(cfg: ClusterConfig, at: KeyPath) -> list[Issue]:
    """The system node group's sizes, and each spot node group's name, instance types and sizes."""
    issues = []
    group = cfg.system_node_group
    if not group.min_size <= group.desired_size <= group.max_size:
        issues.append(Issue(at + ("systemNodeGroup", "desiredSize"), f"must be between minSize ({group.min_size}) "
                            f"and maxSize ({group.max_size})", group.desired_size))
    names = [g.name for g in cfg.spot_node_groups]
    for i, g in enumerate(cfg.spot_node_groups):
        spath = at + ("spotNodeGroups", i)
        if names.count(g.name) > 1:
            issues.append(Issue(spath + ("name",), "spot node group names must be unique", g.name))
        if g.name == P.SYSTEM_GROUP:
            issues.append(Issue(spath + ("name",), "is the system node group's name prefix; choose another",
                                g.name))
        if not g.instance_types:
            issues.append(Issue(spath + ("instanceTypes",), "a spot group needs at least one instance type "
                                "(several, of one size, for capacity diversity)", []))
        elif len(set(g.instance_types)) != len(g.instance_types):
            issues.append(Issue(spath + ("instanceTypes",), "instance types must be unique", g.instance_types))
        if not g.min_size <= g.desired_size <= g.max_size:
            issues.append(Issue(spath + ("desiredSize",), f"must be between minSize ({g.min_size}) and "
                                f"maxSize ({g.max_size})", g.desired_size))
    return issues


def _api_access_issues(cfg: ClusterConfig, at: KeyPath, protected: bool) -> list[Issue]:
    """Sources of the private endpoint that open it to the internet, or that can never reach it."""
    issues: list[Issue] = []
    cidrs = cfg.api_access.cidrs
    for i, cidr in enumerate(cidrs):
        if protected and ipaddress.ip_network(cidr).prefixlen == 0:
            issues.append(Issue(at + ("cidrs", i), "admits the whole internet on tcp/443 to the cluster security "
                                "group, which the control plane and every node share; a protected (production) "
                                "stack may not: list the networks `pulumi up` runs from", cidr))
    private_only = cfg.endpoint_private_access and not cfg.endpoint_public_access
    if private_only and cidrs and not cfg.api_access.security_group_ids and all(
            ipaddress.ip_network(c).is_global for c in cidrs):
        issues.append(Issue(at + ("cidrs",), "every source is a public address, but the endpoint is private-only: "
                            "it answers inside the VPC (and networks routed to it), where traffic from a public "
                            "address never arrives, so `pulumi up` could not reach it. List the private range "
                            "the deployers come from (a runner's subnet, a VPN), or set endpointPublicAccess: true "
                            "with publicAccessCidrs for a public address", cidrs))
    return issues


def addon_version_warnings(cfg: ClusterConfig, at: KeyPath) -> list[Issue]:
    """Add-on overrides that may not exist for the cluster's Kubernetes minor, where the version alone cannot
    say (kube-proxy's carries the minor and is refused instead): a vpc-cni or CoreDNS build whose minor is two
    or more away from this library's pin for the cluster's minor belongs to another era of EKS builds."""
    if cfg.existing:
        return []
    pinned = versions.ADDON_VERSIONS.get(cfg.version, {})
    warnings = []
    for name in ("vpc-cni", "coredns"):
        given, pin = cfg.addon_versions.get(name), pinned.get(name)
        if given is None or pin is None:
            continue
        (g_major, g_minor), (p_major, p_minor) = (_addon_minor(given), _addon_minor(pin))
        if g_major != p_major or abs(g_minor - p_minor) >= 2:
            warnings.append(Issue(at + ("addonVersions", name), f"this library pins {pin} for Kubernetes "
                                  f"{cfg.version}: a build of another era may not be offered for it (EKS refuses "
                                  "the add-on at apply); check `aws eks describe-addon-versions --kubernetes-version "
                                  f"{cfg.version} --addon-name {name}`", given))
    return warnings


def _addon_minor(version: str) -> tuple[int, int]:
    major, minor = version.removeprefix("v").split(".")[:2]
    return int(major), int(minor)


def al2_unavailable(version: str) -> bool:
    """EKS publishes no Amazon Linux 2 AMIs for this Kubernetes minor."""
    return _minor(version) > _minor(versions.AL2_LAST_KUBERNETES_VERSION)


def _minor(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split(".")[:2])


def validate_kubernetes_version(cfg: ClusterConfig, at: KeyPath, today: date) -> list[Issue]:
    """The created cluster's version against EKS's support calendar (as of `today`) and the pins that depend on
    the version: add-on versions and managed node group AMI types. Nothing for an existing cluster, whose
    version this stack neither sets nor knows offline."""
    if cfg.existing:
        return []
    issues: list[Issue] = []
    v = cfg.version
    support = versions.EKS_KUBERNETES_SUPPORT.get(v)
    if support is None:
        issues.append(Issue(at + ("version",), "has no EKS support dates in eks_karpenter/versions.py", v))
    elif today > support.end_of_extended:
        issues.append(Issue(at + ("version",), f"Kubernetes {v} reached the end of EKS extended support on "
                            f"{support.end_of_extended}: EKS no longer runs it (a running cluster has been "
                            "upgraded by EKS: run `pulumi refresh`, then set the version it runs); choose a newer "
                            "version", v))
    # Leaving standard support is a warning (`version_warnings`), never a refusal: the stack may be the running
    # cluster that needs an emergency change today, and EKS may already have upgraded it.

    pinned = versions.ADDON_VERSIONS.get(v)
    if pinned is None:
        issues.append(Issue(at + ("version",), "eks_karpenter/versions.py pins no EKS add-on versions for this "
                            "Kubernetes minor", v))
    proxy = cfg.addon_versions.get("kube-proxy")
    if proxy is not None and not proxy.startswith(f"v{v}."):
        issues.append(Issue(at + ("addonVersions", "kube-proxy"), f"kube-proxy must match the cluster's "
                            f"Kubernetes minor {v} (v{v}.x-eksbuild.N)", proxy))

    groups = [(at + ("systemNodeGroup", "amiType"), cfg.system_node_group.ami_type)]
    groups += [(at + ("spotNodeGroups", i, "amiType"), g.ami_type) for i, g in enumerate(cfg.spot_node_groups)]
    for path, ami_type in groups:
        if ami_type.startswith("AL2_") and al2_unavailable(v):
            issues.append(Issue(path, f"EKS publishes no Amazon Linux 2 AMIs for Kubernetes {v} (the last is "
                                f"{versions.AL2_LAST_KUBERNETES_VERSION}): use an AL2023 or Bottlerocket type",
                                ami_type))
    return issues


OPEN_CIDR = "0.0.0.0/0"


def endpoint_warnings(cfg: ClusterConfig) -> list[str]:
    """A public endpoint open to the internet: legal (a laptop bootstrap, a hosted CI runner), printed on
    every plan so it is not forgotten. Protected stacks refuse it instead (`validate_cluster`)."""
    if cfg.existing or not cfg.endpoint_public_access or OPEN_CIDR not in cfg.public_access_cidrs:
        return []
    return [f"cluster.publicAccessCidrs: the API endpoint of {cfg.name} is open to the internet ({OPEN_CIDR}); "
            "IAM still authenticates every request, but list the deployers' networks instead once you know them "
            "(docs/deploy.md)"]


SUPPORT_WARNING_DAYS = 90
"""How long before the end of standard support the plan starts warning."""


def version_warnings(cfg: ClusterConfig, today: date) -> list[str]:
    """Legal but costly or soon-forced version states, one line each (printed, never fatal)."""
    support = versions.EKS_KUBERNETES_SUPPORT.get(cfg.version)
    if cfg.existing or support is None or today > support.end_of_extended:
        return []
    where = f"cluster.version {cfg.version}"
    refresh = ("run `pulumi refresh` first, so the stack sees the version EKS runs, then upgrade (node groups and "
               "add-ons included)")
    if today > support.end_of_standard:
        if cfg.upgrade_policy.support_type == "EXTENDED":
            return [f"{where}: in EKS extended support (billed at six times the standard hourly rate) until "
                    f"{support.end_of_extended}, when EKS upgrades the control plane itself: plan the upgrade"]
        return [f"{where}: left EKS standard support on {support.end_of_standard}; with upgradePolicy STANDARD "
                "EKS may upgrade the control plane to the next minor itself at any time: " + refresh + ". To "
                "stay on it, opt in to extended support (six times the standard hourly rate) with "
                "upgradePolicy.supportType: EXTENDED"]
    left = (support.end_of_standard - today).days
    if left > SUPPORT_WARNING_DAYS:
        return []
    then = ("EKS upgrades the control plane itself (upgradePolicy STANDARD)"
            if cfg.upgrade_policy.support_type == "STANDARD" else "extended support is billed (upgradePolicy EXTENDED)")
    return [f"{where}: EKS standard support ends on {support.end_of_standard} ({left} days); after that {then}: "
            "upgrade first, node groups and add-ons included"]

def _ami_type_arch(ami_type: str) -> str:
    return "arm64" if "ARM_64" in ami_type else "amd64"


def _arch_issues(types: list[str], at: KeyPath, ami_type: str) -> list[Issue]:
    """Instance types of one managed node group: all of its amiType's architecture (EKS also refuses a mix)."""
    want = _ami_type_arch(ami_type)
    arches = {t: family_arch(t.partition(".")[0]) for t in types}
    why = f"but amiType {ami_type} is {want}: no node of this group could boot"
    if len({a for a in arches.values() if a}) > 1:
        why += "; EKS needs one architecture per node group"
    return [Issue(at + (i,), f"{t} is {a}, {why}", t) for i, (t, a) in enumerate(arches.items()) if a and a != want]


def validate_cluster_environment(cfg: ClusterConfig, region: str | None, accounts: tuple[str, ...],
                                 at: KeyPath) -> list[Issue]:
    """Rules that relate the cluster to the account and region it is deployed to, and to instance facts."""
    issues: list[Issue] = []
    if cfg.existing:
        return issues
    if cfg.kms_key_arn and region:
        issues += arn_issues(cfg.kms_key_arn, at + ("kmsKeyArn",), service="kms", region=region, accounts=accounts,
                             what="KMS key")
    group = cfg.system_node_group
    issues += _arch_issues(list(group.instance_types), at + ("systemNodeGroup", "instanceTypes"), group.ami_type)
    for i, spot in enumerate(cfg.spot_node_groups):
        issues += _arch_issues(list(spot.instance_types), at + ("spotNodeGroups", i, "instanceTypes"), spot.ami_type)
    issues += [Issue(at + path, problem.message, value) for path, value, problem in _catalogue_names(cfg)
               if not problem.warning]
    return issues


def _catalogue_names(cfg: ClusterConfig) -> list[tuple[KeyPath, str, NameProblem]]:
    """Node group instance types the catalogue does not have (typos, or types newer than it)."""
    system = cfg.system_node_group
    groups: list[tuple[KeyPath, list[str]]] = [(("systemNodeGroup", "instanceTypes"), system.instance_types)]
    groups += [(("spotNodeGroups", i, "instanceTypes"), g.instance_types) for i, g in enumerate(cfg.spot_node_groups)]
    found: list[tuple[KeyPath, str, NameProblem]] = []
    for path, types in groups:
        for k, itype in enumerate(types):
            problem = type_problem(itype)
            if problem is not None:
                found.append((path + (k,), itype, problem))
    return found


def instance_type_warnings(cfg: ClusterConfig) -> list[str]:
    """Node group instance types that may be newer than the catalogue: printed, never fatal."""
    if cfg.existing:
        return []
    return [f"cluster.{render_path(path)}: {value}: {problem.message}" for path, value, problem in _catalogue_names(cfg)
            if problem.warning]


DOCUMENTATION_NETWORKS = tuple(ipaddress.ip_network(n) for n in (
    "192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24",  # RFC 5737: TEST-NET-1, -2 and -3
    "2001:db8::/32"))  # RFC 3849
"""Address ranges reserved for documentation: no real network has them, so an allow-list naming one is an
example copied and not yet filled in (the shipped prod stack's commented bootstrap line uses 203.0.113.10/32)."""


def example_range(cidr: str) -> str | None:
    """The documentation range `cidr` lies in, or None."""
    network = ipaddress.ip_network(cidr, strict=False)
    return next((str(doc) for doc in DOCUMENTATION_NETWORKS
                 if doc.version == network.version and network.subnet_of(doc)), None)  # type: ignore[arg-type]


def example_range_issues(cidrs: list[tuple[KeyPath, str]]) -> list[Issue]:
    """Each allow-listed CIDR (key path, value) in a documentation range, once per value: refused in a real run,
    like the example account (platform/refusals.py), since no deployer's traffic can come from it."""
    issues: dict[str, Issue] = {}
    for path, cidr in cidrs:
        found = example_range(cidr)
        if found and cidr not in issues:
            issues[cidr] = Issue(path, f"{cidr} is in {found}, an example range reserved for documentation (RFC "
                                 f"{3849 if ':' in found else 5737}) that no real network uses: put the address "
                                 "your deployers or runners reach the API server from", cidr)
    return list(issues.values())


def allow_listed_cidrs(cfg: ClusterConfig, at: KeyPath) -> list[tuple[KeyPath, str]]:
    """The cluster's API allow-lists: `publicAccessCidrs` and `apiAccess.cidrs`, with their key paths."""
    return [*((at + ("publicAccessCidrs", i), c) for i, c in enumerate(cfg.public_access_cidrs)),
            *((at + ("apiAccess", "cidrs", i), c) for i, c in enumerate(cfg.api_access.cidrs))]
