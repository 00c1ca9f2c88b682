"""The whole stack config: every `eks-karpenter:*` key of a stack file, loaded and validated in one pass.

It composes every concern's config and rules, so it sits above the concerns, beside `build.py`. Loading is pure
(raw strings in, a frozen `StackConfig` or one `ConfigError` out), so the program can refuse a bad stack file
before registering a single resource, and tests can check every rule without an engine. `read_stack_config` is
the running program's entry: values from the Pulumi runtime, lines from the stack file.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Mapping
from datetime import UTC, date, datetime
from typing import Any

import pulumi
from pulumi.runtime import config as _runtime_config
from pydantic import Field, TypeAdapter, ValidationError

from eks_karpenter.arns import allowed_accounts, region_issues
from eks_karpenter.config.errors import ConfigError, Issue, KeyPath, issues_from_validation_error, line_of
from eks_karpenter.config.model import Model, aliases, build_validators, empty_dict
from eks_karpenter.config.namespaces import (
    AWS_NAMESPACE,
    ENGINE_NAMESPACE,
    PROJECT,
    UNREAD_NAMESPACES,
    in_namespace,
    namespace_issues,
    near_miss_namespace,
)
from eks_karpenter.config.running import locate_stack_file
from eks_karpenter.config.stackfile import or_json_text, provider_config_keys, read_stack_file
from eks_karpenter.platform.access.config import AccessConfig, Arn
from eks_karpenter.platform.access.guardrails import pool_rights_issues
from eks_karpenter.platform.access.plan import aws_provider_identity
from eks_karpenter.platform.access.rules import (
    created_cluster_issues,
    deployer_issues,
    platform_objects_in_team_prefix,
    provider_identity_issues,
    team_namespace_issues,
    team_prefix_issues,
    tenant_imds_issues,
    validate_access,
    with_provider_identity,
)
from eks_karpenter.platform.cluster.config import Cidr, ClusterConfig, ClusterName
from eks_karpenter.platform.cluster.rules import (
    addon_version_warnings,
    validate_cluster,
    validate_cluster_environment,
    validate_kubernetes_version,
)
from eks_karpenter.platform.iam.names import IamNameStyle
from eks_karpenter.platform.iam.rules import permissions_boundary_issues
from eks_karpenter.platform.interruption.config import InterruptionConfig
from eks_karpenter.platform.karpenter.config import KarpenterConfig
from eks_karpenter.platform.karpenter.rules import (
    validate_karpenter,
    validate_karpenter_environment,
    validate_karpenter_placement,
)
from eks_karpenter.platform.migration.config import MigrationConfig
from eks_karpenter.platform.migration.rules import validate_adopted_placement, validate_migration
from eks_karpenter.platform.network.config import NetworkConfig, default_availability_zones
from eks_karpenter.platform.network.rules import validate_network, validate_network_for_cluster
from eks_karpenter.platform.nodepool.class_rules import validate_node_class_environment
from eks_karpenter.platform.nodepool.config import (
    NodeClassConfig,
    NodePoolConfig,
    default_node_classes,
    default_node_pools,
)
from eks_karpenter.platform.nodepool.crd_versions import validate_for_release
from eks_karpenter.platform.nodepool.rules import validate_node_config
from eks_karpenter.platform.nodepool.window_rules import window_warnings
from eks_karpenter.platform.nth.config import NthConfig
from eks_karpenter.platform.nth.rules import validate_nth, validate_nth_for_cluster
from eks_karpenter.platform.observability.config import ObservabilityConfig
from eks_karpenter.platform.observability.rules import validate_observability
from eks_karpenter.platform.observability.settings_rules import (
    disabled_settings_warnings,
    validate_observability_settings,
)
from eks_karpenter.platform.tenancy_warnings import tenancy_warnings
from eks_karpenter.platform.version_rules import (
    validate_ami_release_dates,
    validate_kubernetes_for_karpenter,
    validate_node_class_amis,
)
from eks_karpenter.tags import TagKey, TagValue, reserved_tag_issues

REGION_KEY = "aws:region"


class StackConfig(Model):
    """Everything under `config:` in `stacks/Pulumi.<stack>.yaml` that this library reads."""

    region: str
    """From `aws:region`."""
    cluster: ClusterConfig
    """`eks-karpenter:cluster`: the EKS cluster (created, or adopted with `existing: true`). Required, unless
    `eks-karpenter:clusterName` gives the name and every other cluster setting keeps its default."""
    cluster_name: ClusterName | None = None
    """`eks-karpenter:clusterName`: shortcut for `cluster.name` as one plain string (what `pulumi new` prompts
    write): fills `cluster.name` when the `cluster` section is absent or has no name; refused when both are given
    and differ."""
    deployer_arn: Arn | None = None
    """`eks-karpenter:deployerArn`: shortcut (what `pulumi new` prompts write) for `access.deployers` with one
    deployer `laptop`, the IAM role or user that runs `pulumi up`; ignored when `access.deployers` is given and
    lists it, refused when it does not."""
    deployer_cidr: Cidr | None = None
    """`eks-karpenter:deployerCidr`: shortcut for a public endpoint open to this CIDR (`endpointPublicAccess:
    true`, `publicAccessCidrs: [<cidr>]`), so that a laptop `pulumi up` reaches the API server; refused when the
    `cluster` section sets either key itself. `0.0.0.0/0` works, with a warning."""
    network: NetworkConfig = Field(default_factory=NetworkConfig)
    """`eks-karpenter:network`: the VPC (created, or adopted with `vpcId`). Default: a new VPC, 10.0.0.0/16 over
    three zones of the region (see `availabilityZones`)."""
    karpenter: KarpenterConfig = Field(default_factory=KarpenterConfig)
    """`eks-karpenter:karpenter`: the Karpenter install, its controller identity and node role."""
    node_classes: list[NodeClassConfig] = Field(default_factory=default_node_classes)
    """`eks-karpenter:nodeClasses`: Karpenter EC2NodeClasses (AMI, subnets, security groups, node IAM, disks).
    Default: one class `default` (pinned AL2023 alias, discovery-tag selectors, the platform's node role)."""
    node_pools: list[NodePoolConfig] = Field(default_factory=default_node_pools)
    """`eks-karpenter:nodePools`: Karpenter NodePools. Default: one spot-first pool `default` (c/m/r, generation
    3 or newer, on-demand fallback, consolidation, 30-day expiry, 1000 CPU / 1000Gi limits)."""
    interruption: InterruptionConfig = Field(default_factory=InterruptionConfig)
    """`eks-karpenter:interruption`: Karpenter's interruption queue (SQS + EventBridge), on by default."""
    node_termination_handler: NthConfig = Field(default_factory=NthConfig)
    """`eks-karpenter:nodeTerminationHandler`: AWS Node Termination Handler for spot nodes Karpenter does not
    manage (CAS-era spot node groups, self-managed Auto Scaling groups)."""
    observability: ObservabilityConfig = Field(default_factory=ObservabilityConfig)
    """`eks-karpenter:observability`: scraping Karpenter's metrics, alert rules and a Grafana dashboard (off
    unless enabled; prod enables it). The interruption queue's CloudWatch alarms exist whenever the queue does."""
    access: AccessConfig = Field(default_factory=AccessConfig)
    """`eks-karpenter:access`: who can reach the cluster (the deployers, admins, namespace-scoped teams) and how
    this program's Kubernetes provider authenticates. A created cluster needs `deployers`: its creator gets no
    implicit entry."""
    migration: MigrationConfig | None = None
    """`eks-karpenter:migration`: the phased hand-off from Cluster Autoscaler to Karpenter on an adopted cluster
    (see docs/migrate-from-cluster-autoscaler.md). Absent: no Cluster Autoscaler or node group is touched."""
    tags: dict[TagKey, TagValue] = Field(default_factory=empty_dict)
    """`eks-karpenter:tags`: tags on every AWS resource, for cost allocation."""
    protect: bool = False
    """`eks-karpenter:protect`: protect what holds state (the VPC, its subnets, the EKS control plane, its KMS
    key, the log groups) from deletion and replacement. Nothing replaceable is protected (node groups, launch
    templates, add-ons, IAM, the Kubernetes provider), so routine changes go through."""
    iam_names: IamNameStyle = "regional"
    """`eks-karpenter:iamNames`: how IAM roles and policies are named. `regional` (default):
    `<cluster>-<purpose>-<region>`, so one cluster name in two regions does not collide (IAM names are
    account-wide); too long a name is cut with a hash suffix. `legacy`: `<cluster>-<purpose>`, the names of
    stacks deployed before 0.x: keep it on such a stack, since a renamed role is a replaced role (running nodes
    lose their access entry); docs/UPGRADING.md says how to move."""
    permissions_boundary: Arn | None = None
    """`eks-karpenter:permissionsBoundary`: ARN of a customer managed policy your account's administrators own
    (`arn:aws:iam::<account>:policy/<name>`), set as the permissions boundary of every IAM role this stack creates
    (the node roles, the Karpenter controller role, the flow log and node termination handler roles, pulumi-eks'
    cluster role); the deploy role's policy (`eks-karpenter deploy-policy`) then allows role writes only with it.
    Unset: no boundary. See docs/deploy-role.md."""


# Project keys read from the stack file, in the order they are reported.
SECTIONS = tuple(alias for name, alias in aliases(StackConfig).items() if name != "region")


def _key(section: str, project: str = PROJECT) -> str:
    return f"{project}:{section}"


def raw_sections(config: Mapping[str, str], project: str = PROJECT) -> tuple[dict[str, Any], list[Issue]]:
    """Decode the project's keys from Pulumi's flat config (values are strings; objects are JSON text)."""
    issues = namespace_issues(config, [f"{project}:{s}" for s in SECTIONS], REGION_KEY, project)
    raw: dict[str, Any] = {}
    for section in SECTIONS:
        text = config.get(f"{project}:{section}")
        if text is None:
            continue
        try:
            raw[section] = json.loads(text)
        except (ValueError, RecursionError):
            raw[section] = text  # a plain string: the model reports the type error with the key path
    return raw, issues


def load_stack_config(config: Mapping[str, str], source: str, project: str = PROJECT,
                      lines: Mapping[KeyPath, int] | None = None, today: date | None = None,
                      warnings: list[str] | None = None) -> StackConfig:
    """Validate a stack's config. Raises one `ConfigError` listing every problem, naming `source` (and, with
    `lines` from the stack file, the line of each problem).

    `today` (default: the current UTC date) decides which Kubernetes versions are in EKS support. `warnings`,
    when given, receives what is legal but almost surely unintended, one line each naming the file, the line
    and the key path (`stack_warnings`), for a valid config only.

    Each section is parsed on its own, so the rules of the sections that parsed still run (and report) when
    another section has a type error.
    """
    raw, issues = raw_sections(config, project)
    region = config.get(REGION_KEY)
    failed: set[str] = set()
    region_problems = region_issues(config)
    if region_problems:
        issues += region_problems
        failed.add("region")
    accounts, account_problems = allowed_accounts(config)
    issues += account_problems
    parsed: dict[str, Any] = {"region": region if not region_problems else "us-east-1"}
    issues += _apply_cluster_name(config, raw, project, parsed, failed)
    access = raw.get("access")
    # A deployer the shortcut wrote is reported at the key the stack file has (`<project>:deployerArn`).
    from_shortcut = f"{project}:deployerArn" in config and not (isinstance(access, dict) and "deployers" in access)
    issues += _apply_deployer_shortcuts(config, raw, project, parsed, failed)
    fields = StackConfig.__pydantic_fields__
    # Only the sections the file gives are validated (`_section_adapter`); one it leaves out takes its model's
    # defaults, which need no validator (`Model.defaults`).
    for name, field in fields.items():
        alias = field.alias or name
        if name in ("region", *_SHORTCUTS) or name in failed or (alias not in raw and not field.is_required()):
            continue
        if alias not in raw:
            hint = f" (or give just the name with {_key('clusterName', project)})" if name == "cluster" else ""
            issues.append(Issue((_key(alias, project),), f"required{hint}", None, has_value=False))
            failed.add(name)
            continue
        try:
            parsed[name] = _section_adapter(name).validate_python(raw[alias])
        except ValidationError as err:
            issues += issues_from_validation_error(err, (_key(alias, project),), field.annotation)
            failed.add(name)
    for name, field in fields.items():  # left out (or failed): the section's defaults, as model_construct would
        factory = field.default_factory
        if name not in parsed and isinstance(factory, type) and issubclass(factory, Model):
            parsed[name] = factory.defaults()
    if "network" not in failed and "region" not in failed:
        network: NetworkConfig = parsed["network"]
        zones = default_availability_zones(parsed["region"])
        if not network.adopting and network.availability_zones is None and zones is not None:
            parsed["network"] = network.model_copy(update={"availability_zones": zones})
    if "access" not in failed and "cluster" not in failed:
        # Both providers act as one identity: the Kubernetes token follows aws:profile / aws:assumeRoles.
        identity = aws_provider_identity(config)
        issues += provider_identity_issues(parsed["access"], identity, (_key("access", project),),
                                           cluster_created=not parsed["cluster"].existing)
        parsed["access"] = with_provider_identity(parsed["access"], identity)
    cfg = StackConfig.model_construct(**parsed)
    issues += validate_stack(cfg, project, failed=frozenset(failed), accounts=accounts, today=today)
    if issues:
        written = (_key("access", project), "deployers", 0, "principalArn")
        raise ConfigError(source, [dataclasses.replace(
            i, message=in_namespace(i.message, project),
            path=(f"{project}:deployerArn",) if from_shortcut and i.path[:4] == written else i.path)
            for i in issues], lines)
    if warnings is not None:
        warnings += [dataclasses.replace(w, message=in_namespace(w.message, project)).render(
            source, line_of(lines or {}, w.path)) for w in stack_warnings(cfg, project)]
    # Every section was validated on its own above, and the defaults are the models' own (a test validates each):
    # re-validating the whole would only build StackConfig's own validator, a fifth of a cold validation's cost.
    return cfg


@functools.cache
def _section_adapter(name: str) -> TypeAdapter[Any]:
    """One section's validator, built once per process, the section's models first and leaves first (see
    `build_validators`), so that the adapter reuses their schemas."""
    annotation = StackConfig.__pydantic_fields__[name].annotation
    build_validators(annotation)
    return TypeAdapter(annotation)  # type: ignore[arg-type]


def _apply_cluster_name(config: Mapping[str, str], raw: dict[str, Any], project: str, parsed: dict[str, Any],
                        failed: set[str]) -> list[Issue]:
    """`<project>:clusterName` into `raw["cluster"]`: the section's name when it has none (or the whole section
    when absent). A name given twice must agree, so a copied stack file cannot silently keep the wrong one."""
    key = f"{project}:clusterName"
    text = config.get(key)
    if text is None:
        return []
    try:
        name = _section_adapter("cluster_name").validate_python(text)  # the plain string, even if it reads as JSON
    except ValidationError as err:
        failed.update({"cluster_name", "cluster"} if "cluster" not in raw else {"cluster_name"})
        return issues_from_validation_error(err, (key,))
    parsed["cluster_name"] = name
    raw.pop("clusterName", None)
    section = raw.get("cluster")
    if section is None:
        raw["cluster"] = {"name": name}
    elif isinstance(section, dict) and "name" not in section:
        raw["cluster"] = {"name": name, **section}
    elif isinstance(section, dict) and section["name"] != name:
        return [Issue((key,), f"disagrees with {project}:cluster name ({section['name']!r}): give the name once",
                      name)]
    return []


_PUBLIC_ENDPOINT = ("endpointPublicAccess", "publicAccessCidrs")
"""The cluster keys `deployerCidr` fills; the endpoint's rules check them with `apiAccess`, `endpointPrivateAccess`."""
_ENDPOINT_KEYS = frozenset({"apiAccess", "endpointPrivateAccess", *_PUBLIC_ENDPOINT})
_SHORTCUTS = ("cluster_name", "deployer_arn", "deployer_cidr")
"""Plain-string keys that fill a section (what `pulumi new` prompts write), read before the sections."""


def _apply_deployer_shortcuts(config: Mapping[str, str], raw: dict[str, Any], project: str,
                              parsed: dict[str, Any], failed: set[str]) -> list[Issue]:
    """`<project>:deployerArn` into `access.deployers` and `<project>:deployerCidr` into the cluster's public
    endpoint settings, unless the sections say otherwise (then the shortcut must agree)."""
    issues: list[Issue] = []
    for name, alias in (("deployer_arn", "deployerArn"), ("deployer_cidr", "deployerCidr")):
        key = f"{project}:{alias}"
        text = config.get(key)
        raw.pop(alias, None)
        if text is None:
            continue
        try:
            parsed[name] = _section_adapter(name).validate_python(text)
        except ValidationError as err:
            cluster = raw.get("cluster")
            # The endpoint a bad deployerCidr would have opened is unknown: its rules would only mislead.
            sets_endpoint = isinstance(cluster, dict) and any(k in cluster for k in _PUBLIC_ENDPOINT)
            failed.update({name, "endpoint"} if name == "deployer_cidr" and not sets_endpoint else {name})
            issues += issues_from_validation_error(err, (key,))
            continue
        value = parsed[name]
        if name == "deployer_arn":
            access = raw.setdefault("access", {})
            if not isinstance(access, dict):
                continue
            listed = access.get("deployers")
            if listed is None:
                access["deployers"] = [{"name": "laptop", "principalArn": value}]
            elif not any(isinstance(d, dict) and d.get("principalArn") == value for d in listed):
                issues.append(Issue((key,), f"is not among {project}:access deployers: list it there (or drop "
                                    "this key)", value))
        else:
            cluster = raw.get("cluster")
            if not isinstance(cluster, dict):
                continue
            if any(k in cluster for k in _PUBLIC_ENDPOINT):
                issues.append(Issue((key,), f"{project}:cluster sets the public endpoint itself: give it once",
                                    value))
            else:
                cluster.update({"endpointPublicAccess": True, "publicAccessCidrs": [value]})
    return issues


def validate_stack(cfg: StackConfig, project: str = PROJECT, failed: frozenset[str] = frozenset(),
                   accounts: tuple[str, ...] = (), today: date | None = None) -> list[Issue]:
    """Every cross-field and cross-object rule, with the key path of the field to fix.

    Sections named in `failed` did not parse (they hold defaults in `cfg`): rules that read them are skipped,
    since those sections already have errors of their own and defaults would only add misleading ones
    (`region` in `failed`: `aws:region` is missing or malformed). `accounts` are `aws:allowedAccountIds`: ARNs
    must point into them when given. The rules themselves live in each concern's `rules.py`; this only says
    which sections each reads.
    """
    checking = _Checking(project, failed, accounts, today or datetime.now(UTC).date())
    return [issue for check in _CHECKS for issue in check(cfg, checking)]


@dataclasses.dataclass(frozen=True)
class _Checking:
    """What every whole-stack check needs besides the config: where sections are, and which did not parse."""

    project: str
    failed: frozenset[str]
    accounts: tuple[str, ...]
    today: date

    def at(self, section: str) -> KeyPath:
        return (_key(section, self.project),)

    def ok(self, *sections: str) -> bool:
        return not self.failed.intersection(sections)

    def region(self, cfg: StackConfig) -> str | None:
        return cfg.region if self.ok("region") else None


def _network_checks(cfg: StackConfig, c: _Checking) -> list[Issue]:
    if not c.ok("network"):
        return []
    issues = validate_network(cfg.network, c.region(cfg), c.at("network"))
    if c.ok("cluster"):
        issues += validate_network_for_cluster(cfg.network, cfg.cluster.existing, c.at("network"))
    return issues


def _cluster_checks(cfg: StackConfig, c: _Checking) -> list[Issue]:
    issues: list[Issue] = []
    if c.ok("cluster", "protect"):
        issues += [i for i in validate_cluster(cfg.cluster, c.at("cluster"), cfg.protect)
                   if c.ok("endpoint") or not _ENDPOINT_KEYS.intersection(i.path[1:2])]
    if c.ok("cluster"):
        issues += validate_kubernetes_version(cfg.cluster, c.at("cluster"), c.today)
        if c.ok("node_classes") and not cfg.cluster.existing:
            issues += validate_node_class_amis(cfg.cluster.version, cfg.node_classes, c.at("nodeClasses"))
        issues += validate_cluster_environment(cfg.cluster, c.region(cfg), c.accounts, c.at("cluster"))
    if c.ok("cluster", "karpenter") and not cfg.cluster.existing:  # an adopted cluster is checked at its look-up
        issues += validate_kubernetes_for_karpenter(cfg.cluster.version, cfg.karpenter.version, c.at("cluster"))
    return issues


def _karpenter_checks(cfg: StackConfig, c: _Checking) -> list[Issue]:
    if not c.ok("karpenter"):
        return []
    issues = validate_karpenter(cfg.karpenter, c.at("karpenter"))
    issues += validate_karpenter_environment(cfg.karpenter, c.region(cfg), c.accounts, c.at("karpenter"))
    if c.ok("cluster") and not cfg.cluster.existing:
        issues += validate_karpenter_placement(
            cfg.karpenter, system_node_min_size=cfg.cluster.system_node_group.min_size, at=c.at("karpenter"),
            system_node_labels=cfg.cluster.system_node_group.labels)
    elif c.ok("cluster"):
        issues += validate_adopted_placement(cfg.karpenter, c.at("karpenter"))
    return issues


def _migration_checks(cfg: StackConfig, c: _Checking) -> list[Issue]:
    if cfg.migration is None or not c.ok("migration", "cluster", "karpenter"):
        return []
    return validate_migration(cfg.migration, existing_cluster=cfg.cluster.existing, karpenter=cfg.karpenter,
                              at=c.at("migration"), at_karpenter=c.at("karpenter"))


def _nth_checks(cfg: StackConfig, c: _Checking) -> list[Issue]:
    if not c.ok("node_termination_handler", "interruption", "cluster"):
        return []
    return validate_nth(
        cfg.node_termination_handler, spot_node_groups=len(cfg.cluster.spot_node_groups),
        karpenter_interruption_enabled=cfg.interruption.enabled,
        at=c.at("nodeTerminationHandler"), at_cluster_groups=c.at("cluster") + ("spotNodeGroups",))


def _node_checks(cfg: StackConfig, c: _Checking) -> list[Issue]:
    if not c.ok("node_pools", "node_classes", "network", "interruption"):
        return []
    return validate_node_config(
        cfg.node_pools, cfg.node_classes, zones=cfg.network.zones,
        interruption_handled=cfg.interruption.enabled or
        cfg.interruption.acknowledge_spot_without_interruption_handling,
        at_pools=c.at("nodePools"), at_classes=c.at("nodeClasses"))


def _access_checks(cfg: StackConfig, c: _Checking) -> list[Issue]:
    if not c.ok("access"):
        return []
    issues = validate_access(cfg.access, c.at("access"), cfg.region)
    issues += team_prefix_issues(cfg.access.teams, c.at("access"))
    if c.ok("cluster", "node_classes"):
        issues += tenant_imds_issues(
            cfg.access.teams, cfg.cluster.system_node_group.http_put_response_hop_limit,
            [g.http_put_response_hop_limit for g in cfg.cluster.spot_node_groups],
            [k.metadata_options.http_put_response_hop_limit for k in cfg.node_classes], c.at("cluster"),
            c.at("nodeClasses"))
    if c.ok("node_pools", "node_classes"):
        issues += platform_objects_in_team_prefix(
            cfg.access.teams, [p.name for p in cfg.node_pools], [k.name for k in cfg.node_classes],
            c.at("nodePools"), c.at("nodeClasses"))
    if c.ok("cluster"):
        issues += deployer_issues(cfg.access, cluster_created=not cfg.cluster.existing, at=c.at("access"))
        if not cfg.cluster.existing:
            issues += created_cluster_issues(cfg.access, c.at("access"), at_cluster=c.at("cluster"),
                                             aws_auth_compatibility=cfg.cluster.aws_auth_compatibility)
        issues += pool_rights_issues(cfg.access.teams, cfg.cluster.version, c.at("access"))
    if c.ok("karpenter", "node_termination_handler"):
        platform = {cfg.karpenter.namespace: "karpenter.namespace"}
        if cfg.node_termination_handler.enabled:
            platform.setdefault(cfg.node_termination_handler.namespace, "nodeTerminationHandler.namespace")
        issues += team_namespace_issues(cfg.access.teams, platform, c.at("access"))
    return issues


def _node_class_environment_checks(cfg: StackConfig, c: _Checking) -> list[Issue]:
    if not c.ok("node_classes"):
        return []
    return validate_node_class_environment(cfg.node_classes, c.region(cfg), c.accounts, c.at("nodeClasses"))


def _permissions_boundary_checks(cfg: StackConfig, c: _Checking) -> list[Issue]:
    if not c.ok("permissions_boundary") or cfg.permissions_boundary is None:
        return []
    return permissions_boundary_issues(cfg.permissions_boundary, c.at("permissionsBoundary"), c.region(cfg),
                                       c.accounts)


def _observability_checks(cfg: StackConfig, c: _Checking) -> list[Issue]:
    return validate_observability(cfg.observability, c.at("observability")) if c.ok("observability") else []


def _release_and_mode_checks(cfg: StackConfig, c: _Checking) -> list[Issue]:
    """Rules relating a section to the Karpenter release, the spot groups, the region and the date: pools and
    classes valid for the selected release, AMI releases that exist, a handler for every spot group,
    observability settings the chosen mode reads."""
    issues: list[Issue] = []
    if c.ok("node_classes"):
        issues += validate_ami_release_dates(cfg.node_classes, c.today, c.at("nodeClasses"))
    if c.ok("karpenter", "node_pools", "node_classes"):
        issues += validate_for_release(cfg.karpenter.version, cfg.node_pools, cfg.node_classes,
                                       at_pools=c.at("nodePools"), at_classes=c.at("nodeClasses"))
    if c.ok("node_termination_handler", "cluster"):
        issues += validate_nth_for_cluster(cfg.node_termination_handler, cfg.cluster.spot_node_groups,
                                           created_cluster=not cfg.cluster.existing, at=c.at("nodeTerminationHandler"))
    if c.ok("observability"):
        issues += validate_observability_settings(cfg.observability, region=c.region(cfg), accounts=c.accounts,
                                                  at=c.at("observability"))
    return issues


def _tag_checks(cfg: StackConfig, c: _Checking) -> list[Issue]:
    return reserved_tag_issues(cfg.tags, c.at("tags")) if c.ok("tags") else []


_CHECKS = (_network_checks, _cluster_checks, _karpenter_checks, _migration_checks, _nth_checks, _node_checks,
           _access_checks, _node_class_environment_checks, _permissions_boundary_checks, _observability_checks,
           _release_and_mode_checks, _tag_checks)
"""The whole stack's checks, in the order their issues are reported."""


def stack_warnings(cfg: StackConfig, project: str = PROJECT) -> list[Issue]:
    """What a valid config holds that is legal but almost surely unintended, with the key path to look at."""
    def at(section: str) -> KeyPath:
        return (_key(section, project),)

    return [*addon_version_warnings(cfg.cluster, at("cluster")), *window_warnings(cfg.node_pools, at("nodePools")),
            *disabled_settings_warnings(cfg.observability, at("observability")), *tenancy_warnings(cfg, at)]


def stack_file_schema(project: str = PROJECT) -> dict[str, Any]:
    """JSON Schema of a stack file, for editors' YAML validation and completion, with keys (and the keys named in
    descriptions) in `project`'s namespace."""
    model = StackConfig.model_json_schema(by_alias=True, ref_template="#/$defs/{model}")
    defs: dict[str, Any] = model.get("$defs", {})
    properties: dict[str, Any] = {REGION_KEY: {"type": "string", "description": "AWS region to deploy to."}}
    for section in SECTIONS:
        properties[_key(section, project)] = or_json_text(dict(model["properties"][section]))
    known = sorted(properties)
    # Project names are letters, digits, `-`, `_` and `.`: only the dot needs escaping (ECMA-262 regexes, as
    # editors run them, refuse a needless `\-`).
    # The schema refuses the near misses it can spell out (see `near_miss_namespace` for the rest).
    near = {n for p in {project, PROJECT} for n in (p, p.replace("-", "_"), *(w for w in p.split("-") if len(w) >= 4))
            if near_miss_namespace(n, project) or n == project}
    refused = "|".join(n.replace(".", "\\.") for n in sorted({*near, AWS_NAMESPACE, *UNREAD_NAMESPACES}))
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"{project} stack file (stacks/Pulumi.<stack>.yaml)",
        "type": "object",
        "properties": {
            "config": {
                "type": "object",
                "properties": properties,
                "required": [REGION_KEY],
                "anyOf": [{"required": [_key("cluster", project)]}, {"required": [_key("clusterName", project)]}],
                # Keys something reads (see namespace_issues): this project's (also bare), the AWS provider's,
                # the engine's `pulumi:` keys, and any other namespace (another provider's, the user's own).
                "propertyNames": {"anyOf": [
                    {"enum": sorted({*known, *SECTIONS, *(f"{AWS_NAMESPACE}:{k}"
                                                         for k in provider_config_keys("pulumi_aws"))})},
                    {"pattern": f"^{ENGINE_NAMESPACE}:"},
                    {"pattern": f"^(?!(?:{refused}):)[^:]+:[^:]+$"}]},
            },
            "secretsprovider": {"type": "string"},
            "encryptedkey": {"type": "string"},
            "encryptionsalt": {"type": "string"},
        },
        "$defs": defs,
    }
    return schema if project == PROJECT else json.loads(in_namespace(json.dumps(schema), project))


def read_stack_config() -> StackConfig:
    """The validated config of the running stack; raises `ConfigError` (a `pulumi.RunError`) when invalid.

    Values come from the runtime (what `pulumi up` or the offline plan handed the program). The stack file is
    read too, with the same reader the offline plan uses, only to say on which line each problem was written;
    when it cannot be found, errors name key paths without lines."""
    # The runtime's full config map is read so that misspelt and misplaced keys are reported too.
    flat = dict(_runtime_config.CONFIG.get())
    project, stack = pulumi.get_project(), pulumi.get_stack()
    path, source = locate_stack_file(project, stack)
    file = read_stack_file(path, source, project) if path is not None and path.is_file() else None
    if file is not None and file.issues:
        raise file.error()
    lines = file.lines if file is not None else None
    warnings: list[str] = []
    try:
        cfg = load_stack_config(flat, source, project=project, lines=lines, warnings=warnings)
    except ConfigError:
        raise
    except Exception as exc:  # a bug of ours must still read as one clean error, never a traceback
        raise ConfigError(source, [Issue((), f"could not be validated ({type(exc).__name__}: {exc}); please "
                                         "report this", None, False)], lines) from None
    for warning in warnings:
        pulumi.log.warn(warning)
    return cfg
