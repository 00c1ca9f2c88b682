"""The whole platform from one validated stack config: config -> components -> outputs (`build_platform`).

Any Pulumi program can call it (this repository's `infra/program.py` and the template's do, in two lines).

Order matters twice: for `pulumi up` (a component is created after what it reads) and for `pulumi destroy`,
which runs the dependency graph backwards: NodePools, then EC2NodeClasses, then the Karpenter controller, then
the node groups and the cluster. Deleting pools while the controller still runs lets Karpenter drain and
terminate the instances it launched instead of leaving them running.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from dataclasses import field as data_field
from datetime import UTC, date, datetime
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from eks_karpenter import tags, versions
from eks_karpenter.checkout import library_checkout
from eks_karpenter.config.errors import ConfigError
from eks_karpenter.config.namespaces import in_namespace
from eks_karpenter.config.running import locate_stack_file
from eks_karpenter.labels import INSTANCE_FAMILY, INSTANCE_TYPE
from eks_karpenter.platform.access import Access, access_entries
from eks_karpenter.platform.access.guardrails import (
    PlatformNodeAccess,
    platform_kms_keys,
    platform_taint_keys,
    private_classes,
    team_policies,
    with_bindings,
)
from eks_karpenter.platform.access.plan import preview_rbac
from eks_karpenter.platform.adopted import ClusterFacts, NodeGroup, release_owner
from eks_karpenter.platform.cluster import Cluster
from eks_karpenter.platform.cluster.plan import CRITICAL_ADDONS_TAINT, addon_versions, control_plane_log_group
from eks_karpenter.platform.cluster.rules import endpoint_warnings, instance_type_warnings, version_warnings
from eks_karpenter.platform.cluster_access import ClusterAccess, aws_cli_missing
from eks_karpenter.platform.iam import KarpenterIam, NodeRole
from eks_karpenter.platform.iam.names import IamNames
from eks_karpenter.platform.interruption import InterruptionQueue
from eks_karpenter.platform.karpenter import Karpenter
from eks_karpenter.platform.karpenter.fargate import KarpenterFargateProfile
from eks_karpenter.platform.karpenter.teardown import Scope
from eks_karpenter.platform.karpenter.teardown_hooks import GUARD_CONFIGMAP, TeardownHooks
from eks_karpenter.platform.lookups import Launcher, check_caller, check_network, check_pins, check_zones
from eks_karpenter.platform.migration import Migration, with_opt_in_taint
from eks_karpenter.platform.migration.component import LegacyGroupFacts
from eks_karpenter.platform.migration.plan import migration_output
from eks_karpenter.platform.namespaces import Namespaces, NamespaceSpec, platform_namespaces
from eks_karpenter.platform.namespaces.plan import pod_security_labels
from eks_karpenter.platform.network import Network
from eks_karpenter.platform.nodepool import (
    NodeClass,
    NodePool,
    render_node_class,
    render_node_pool,
    scheduling_for,
    warnings_for,
)
from eks_karpenter.platform.nodepool.config import (
    NodeClassConfig,
    NodePoolConfig,
    SecurityGroupSelectorTerm,
    SubnetSelectorTerm,
)
from eks_karpenter.platform.nodepool.windows import render_windows
from eks_karpenter.platform.nth import NodeTerminationHandler
from eks_karpenter.platform.observability.alerts import queue_alarms
from eks_karpenter.platform.observability.component import Observability
from eks_karpenter.platform.observability.dashboard import pool_prices
from eks_karpenter.platform.observability.monitors import (
    OPERATOR_GROUP,
    karpenter_monitor_values,
    missing_warning,
    nth_monitor_values,
    scraped,
)
from eks_karpenter.platform.observability.rules import observability_warnings
from eks_karpenter.platform.preflight.checks import placeholder_issue
from eks_karpenter.platform.preflight.hook import offline
from eks_karpenter.platform.preflight.lookup import cluster_crds, run_preflight, warn_unchecked
from eks_karpenter.platform.refusals import refuse_examples, refuse_guardrails_before_1_30
from eks_karpenter.platform.release_owner import ReleaseOwner
from eks_karpenter.platform.stack import StackConfig
from eks_karpenter.platform.stack_cluster import StackCluster
from eks_karpenter.platform.taken_names import Adopted, check_taken_names
from eks_karpenter.platform.tenancy_warnings import stack_preview_reads
from eks_karpenter.platform.version_rules import ami_age_warnings, check_adopted_version, discovery_warnings


def today() -> date:
    """The day of the plan (UTC): EKS support windows are judged against it."""
    return datetime.now(UTC).date()


@dataclass(frozen=True)
class _Stack:
    """What every step reads: the validated config and the names derived from it once."""

    cfg: StackConfig
    tags: dict[str, str]
    project: str
    source: str
    """The stack file, for errors only a look-up finds."""
    iam: IamNames
    existing: aws.eks.GetClusterResult | None = None
    """An adopted cluster, as the preflight found it."""
    facts: ClusterFacts | None = None
    """What the preflight read from an adopted cluster (node groups, Cluster Autoscaler)."""
    operator_crds: frozenset[str] | None = None
    """The Prometheus Operator CRDs the cluster has, looked up when a Prometheus Operator scrapes the platform
    (None: not looked up)."""
    adopted: Adopted = data_field(default_factory=Adopted)
    """Fixed-name resources of this stack that exist already (platform/taken_names.py)."""

    @property
    def name(self) -> str:
        return self.cfg.cluster.name


def build_platform(cfg: StackConfig) -> None:
    """Register the platform for one validated stack config and export its outputs."""
    _warn(cfg)
    if not offline() and (missing := aws_cli_missing()):
        raise pulumi.RunError(missing)
    project = pulumi.get_project()  # errors name the keys as the user's stack file spells them
    _, source = locate_stack_file(project, pulumi.get_stack())
    st = _Stack(cfg, tags.base_tags(cfg.cluster.name, cfg.tags), project, source,
                IamNames(cfg.cluster.name, cfg.region, cfg.iam_names))
    # Who runs this, then an existing cluster, are looked up and checked before anything is registered: a refusal
    # (an undeclared identity, nodes that could never join, an API the deployer cannot reach, a release or CRDs in
    # the way, a pin that does not exist) leaves nothing half-created.
    # A stack copied from the examples and not filled in is refused first: its principals exist nowhere.
    refuse_examples(cfg, source, project)
    check_caller(cfg.access, cluster_created=not cfg.cluster.existing, source=source, project=project)
    existing, facts = run_preflight(cfg, source, project, pulumi.get_stack()) if cfg.cluster.existing \
        else (None, None)
    warn_unchecked(cfg)
    st = replace(st, existing=existing, facts=facts, operator_crds=_operator_crds(cfg, existing))
    with _placeholders_warn(facts):
        if existing is not None:
            refuse_guardrails_before_1_30(cfg, existing.version, source, project)
    releases = _check_pins(st, existing)
    _check_account(st)
    st = replace(st, adopted=check_taken_names(
        st.name, cfg.region, log_types=None if cfg.cluster.existing else list(cfg.cluster.log_types),
        queue=cfg.interruption.enabled, project=project, source=source))

    network = _network(st)
    private_subnets = network.private_subnet_ids.apply(lambda by_zone: [by_zone[z] for z in sorted(by_zone)])
    # An explicit name: EC2NodeClasses name the role (or its instance profile) before it exists.
    node_role_name = st.iam.role("karpenter-node")
    node_role = _node_role(st, node_role_name)
    cluster = _cluster(st, network, private_subnets, node_role, existing, releases.get("system"))
    obs = cfg.observability
    queue = InterruptionQueue("interruption", {"clusterName": st.name, "tags": st.tags,
                                               "alarms": queue_alarms(obs), "alarmTopicArn": obs.alarm_topic_arn,
                                               "adoptQueueUrl": st.adopted.queue, "ownerTags": st.adopted.owner_tags}) \
        if cfg.interruption.enabled else None
    iam = _karpenter_iam(st, cluster, node_role, queue)
    namespaces = _namespaces(st, cluster)
    # Applied by Access and exported as `teamPolicies`: the same objects, which consumer stacks check against.
    policies = _team_policies(st, node_role_name)
    access = _access(st, cluster, namespaces, policies)
    # The destroy guard (platform/karpenter/teardown.py): refuses while something destroy cannot delete exists,
    # and drains this stack's pools before the controller goes. Hooks run in the program: `pulumi destroy
    # --run-program`.
    stack_cluster = _stack_cluster(st, cluster)
    guard = TeardownHooks(_teardown_scope(cfg), stack_cluster, cfg.karpenter.delete_timeout, cfg.karpenter.namespace)
    # Labels this stack's Helm releases as its own, which the next preflight reads (platform/release_owner.py).
    owner = ReleaseOwner(stack_cluster, release_owner(project, pulumi.get_stack()))
    karpenter = _karpenter(st, cluster, iam, node_role, queue, namespaces, private_subnets, guard, owner)
    pools, pool_manifests, class_manifests = _node_objects(st, karpenter, node_role_name, guard)
    _migration(st, cluster, karpenter, pools)
    if cfg.node_termination_handler.enabled:
        _node_termination_handler(st, cluster, namespaces, owner)
    if obs.enabled:
        _observability(st, cluster, karpenter, private_subnets, pool_manifests, class_manifests)
    _export(st, network, cluster, node_role, node_role_name, iam, karpenter, queue, access, pools, policies)


@contextmanager
def _placeholders_warn(facts: ClusterFacts | None) -> Iterator[None]:
    """Problems found on an adopted cluster's version when the offline plan's mocks made it up: warnings, not
    errors (they say nothing about the real cluster)."""
    try:
        yield
    except ConfigError as exc:
        if facts is None or not facts.placeholder:
            raise
        for issue in exc.issues:
            pulumi.log.warn(placeholder_issue(issue))


def _warn(cfg: StackConfig) -> None:
    for warning in [*version_warnings(cfg.cluster, today()), *endpoint_warnings(cfg.cluster),
                    *instance_type_warnings(cfg.cluster),
                    *warnings_for(cfg.node_pools, cfg.node_classes, protected=cfg.protect),
                    *ami_age_warnings(cfg.node_classes, today(), cfg.cluster.ami_max_age_days,
                                     checkout=library_checkout() is not None),
                    *observability_warnings(cfg.observability),
                    *discovery_warnings(cfg.node_classes, cfg.cluster, cfg.network)]:
        pulumi.log.warn(in_namespace(warning, pulumi.get_project()))


def _operator_crds(cfg: StackConfig, existing: aws.eks.GetClusterResult | None) -> frozenset[str] | None:
    """The Prometheus Operator's CRDs on the cluster, when the platform is scraped through it: objects of a kind
    without its CRD are left out of the plan (the first `up` of a new cluster would fail on them), with a
    warning; they appear on the first `up` after the operator is installed (observability/monitors.py)."""
    if not scraped(cfg.observability):
        return None
    found, reason = cluster_crds(cfg, existing, (OPERATOR_GROUP,))
    nth = cfg.node_termination_handler
    warning = missing_warning(cfg.observability, found, nth.mode if nth.enabled else None, reason)
    if warning:
        pulumi.log.warn(warning)
    return found


def _check_pins(st: _Stack, existing: aws.eks.GetClusterResult | None) -> dict[str, str]:
    """The pins against the account's region (offline: the mocks), before anything is registered; an adopted
    cluster's own version against the Karpenter release and the AMI aliases. Returns the AMI pin's node group
    release of the system group of a created cluster (`lookups.pinned_release`)."""
    cfg, project = st.cfg, st.project
    if existing is not None:
        with _placeholders_warn(st.facts):
            check_adopted_version(existing.version, cfg.karpenter.version, cfg.node_classes, st.source,
                                  (f"{project}:cluster",), (f"{project}:nodeClasses",))
    created = existing is None
    return check_pins(existing.version if existing is not None else cfg.cluster.version,
                      addons=addon_versions(cfg.cluster) if created else None,
                      classes=cfg.node_classes, pools=cfg.node_pools,
                      pinned_groups={"system": cfg.cluster.system_node_group.ami_type} if created else {},
                      node_groups={f"spot-{g.name}": g.ami_type for g in cfg.cluster.spot_node_groups}
                      if created else {}, source=st.source, project=project)


def _check_account(st: _Stack) -> None:
    """What only the account knows, before anything is registered: the zones by ID, the instance types offered
    there, and a VPC this stack already created (a `vpcCidr` or zone change it cannot carry out)."""
    cfg, net = st.cfg, st.cfg.network
    at_net, at_cluster = (f"{st.project}:network",), (f"{st.project}:cluster",)
    zones = {z: at_net + ("privateSubnetIds", z) for z in net.zones} if net.adopting else \
        {z: at_net + ("availabilityZones", i) for i, z in enumerate(net.zones)}
    launchers: list[Launcher] = []
    if not cfg.cluster.existing:
        system = cfg.cluster.system_node_group
        launchers.append(Launcher("node group", "system", at_cluster + ("systemNodeGroup", "instanceTypes"),
                                  tuple(system.instance_types), tuple(zones)))
        launchers += [Launcher("node group", g.name, at_cluster + ("spotNodeGroups", i, "instanceTypes"),
                               tuple(g.instance_types), tuple(zones))
                      for i, g in enumerate(cfg.cluster.spot_node_groups)]
    for i, pool in enumerate(cfg.node_pools):
        pinned = pinned_types(pool)
        if pinned:
            launchers.append(Launcher("NodePool", pool.name, (f"{st.project}:nodePools", i), pinned,
                                      tuple(z for z in zones if not pool.zones or z in pool.zones)))
    check_zones(zones, cfg.region, control_plane=not cfg.cluster.existing, launchers=launchers, source=st.source)
    if not net.adopting:
        check_network(st.name, {**st.tags, **net.tags}, vpc_cidr=net.vpc_cidr, zones=net.zones, at=at_net,
                      source=st.source)


def pinned_types(pool: NodePoolConfig) -> tuple[str, ...]:
    """The instance types, else the families, a pool is pinned to (its fields or an `In` requirement): what it
    admits lies within them. Empty: it admits whole categories."""
    for field, key in ((pool.instance_types, INSTANCE_TYPE), (pool.instance_families, INSTANCE_FAMILY)):
        named = [*(field or ()), *(v for r in pool.requirements if r.key == key and r.operator == "In"
                                   for v in r.values or ())]
        if named:
            return tuple(dict.fromkeys(named))
    return ()


def _network(st: _Stack) -> Network:
    # Not protected as a whole: `protect` would reach every child. The component protects the VPC, subnets and
    # log group only, so route tables, gateways and NAT stay replaceable.
    return Network("network", {"clusterName": st.name, "config": st.cfg.network, "tags": st.tags,
                               "protect": st.cfg.protect, "permissionsBoundary": st.cfg.permissions_boundary})


def _node_role(st: _Stack, role_name: str) -> NodeRole:
    kcfg = st.cfg.karpenter
    return NodeRole("karpenter-node-role", {
        "roleName": role_name, "description": f"Nodes Karpenter launches for EKS cluster {st.name}",
        "region": st.cfg.region, "tags": st.tags,
        "additionalPolicyArns": list(kcfg.node_role.additional_policy_arns),
        "instanceProfile": kcfg.node_role.instance_profile,
        "permissionsBoundary": st.cfg.permissions_boundary,
    })


def _cluster(st: _Stack, network: Network, private_subnets: pulumi.Output[list[str]], node_role: NodeRole,
             existing: aws.eks.GetClusterResult | None, system_release: str | None) -> Cluster:
    cfg = st.cfg
    # Not protected as a whole either: the component protects the control plane, KMS key and log group; node
    # groups, launch templates, add-ons and the Kubernetes provider are replaced by routine changes.
    return Cluster("cluster", {
        "config": cfg.cluster, "region": cfg.region, "vpcId": network.vpc_id, "privateSubnetIds": private_subnets,
        "tags": st.tags, "awsAuthRoleArns": [node_role.role_arn],
        "lookupOidcProvider": cfg.karpenter.identity == "irsa", "deletionProtection": cfg.protect,
        "providerCredentials": cfg.access.provider_credentials, "deployers": cfg.access.deployers,
        "clusterAdmins": cfg.access.cluster_admins,
        "adminsComponent": "access", "accessTeams": [t.name for t in cfg.access.teams], "source": st.source,
        "configPath": (f"{st.project}:cluster",), "existingCluster": existing,
        "protect": cfg.protect, "iamNames": st.iam, "permissionsBoundary": cfg.permissions_boundary,
        # An adopted cluster's security group is another tool's: selected by ID, not tagged, unless asked.
        "tagSecurityGroup": _adopted_cluster_sg(st) is None,
        "systemReleaseVersion": system_release, "adoptLogGroup": st.adopted.log_group is not None,
        "ownerTags": st.adopted.owner_tags,
    })


def _team_policies(st: _Stack, node_role_name: str) -> dict[str, list[dict[str, Any]]]:
    """Each team's ValidatingAdmissionPolicies (`guardrails.team_policies`): teams with pool rights are confined
    to their own pools and classes, every team's pods and Services to its own capacity."""
    cfg = st.cfg
    return team_policies(cfg.access.teams, PlatformNodeAccess(
        cluster_name=st.name, node_role_name=node_role_name,
        instance_profile=node_role_name if cfg.karpenter.node_role.instance_profile else None,
        # An adopted VPC and cluster left untagged: the platform's classes select them by id, so may a team's.
        security_group_ids=(*cfg.cluster.node_security_group_ids, *filter(None, [_adopted_cluster_sg(st)])),
        node_classes=tuple(c.name for c in cfg.node_classes),
        pool_weights=tuple(p.weight for p in cfg.node_pools),
        node_pools=tuple(p.name for p in cfg.node_pools),
        pool_teams=tuple(t.name for t in cfg.access.teams if t.node_pools),
        ami_aliases=tuple(sorted({versions.AMI_ALIAS, *filter(None, (c.alias for c in cfg.node_classes))})),
        private_node_classes=private_classes(cfg.node_classes),
        taint_keys=platform_taint_keys([CRITICAL_ADDONS_TAINT.key], cfg.node_pools, st.facts.adopted_groups
                                       if st.facts and not isinstance(st.facts.adopted_groups, str) else ()),
        kms_key_ids=platform_kms_keys(cfg.node_classes), stack_tags=st.tags,
        subnet_ids=tuple(sorted((cfg.network.private_subnet_ids or {}).values()))
        if cfg.network.adopting and not cfg.network.write_discovery_tags else ()))


def _access(st: _Stack, cluster: Cluster, namespaces: Namespaces | None,
            policies: dict[str, list[dict[str, Any]]]) -> Access | None:
    """Teams and consumer stacks' deploy roles: access entries with access-policy associations (the cluster
    admins' are the Cluster component's, beside the deployers'); the preview deployers' read-only roles."""
    cfg = st.cfg
    previews = any(d.role == "preview" for d in cfg.access.deployers)
    if not (cfg.access.teams or previews):
        return None
    reads = stack_preview_reads(cfg)
    return Access("access", {
        "clusterName": st.name, "region": cfg.region, "config": cfg.access, "configPath": (f"{st.project}:access",),
        "source": st.source, "tags": st.tags, "deployersComponent": "cluster",
        "previewRbac": preview_rbac(reads) if previews else [],
        "previewDependsOn": [r for ns in reads for r in namespaces.for_namespace(ns)] if namespaces else [],
        # Teams with pool rights are confined to their own pools and classes (ValidatingAdmissionPolicies).
        "guardrails": with_bindings(cfg.access.teams, policies),
    }, opts=pulumi.ResourceOptions(depends_on=[cluster], providers={"kubernetes": cluster.provider}))


def _karpenter_iam(st: _Stack, cluster: Cluster, node_role: NodeRole,
                   queue: InterruptionQueue | None) -> KarpenterIam:
    kcfg = st.cfg.karpenter
    return KarpenterIam("karpenter-iam", {
        "clusterName": st.name, "region": st.cfg.region, "identity": kcfg.identity, "namespace": kcfg.namespace,
        "nodeRoleArn": node_role.role_arn, "interruptionQueueArn": queue.queue_arn if queue else None,
        "zonalShift": kcfg.zonal_shift, "karpenterVersion": kcfg.version,
        "oidcProviderArn": cluster.oidc_provider_arn, "oidcIssuer": cluster.oidc_issuer,
        "spotServiceLinkedRole": kcfg.spot_service_linked_role, "tags": st.tags, "iamNames": st.iam,
        "permissionsBoundary": st.cfg.permissions_boundary,
    }, opts=pulumi.ResourceOptions(depends_on=[cluster]))


def _stack_cluster(st: _Stack, cluster: Cluster) -> StackCluster:
    """The stack's own cluster for its hooks: reached as its Kubernetes provider's identity with a token minted
    in-process, checked against the endpoint and certificate authority the stack's cluster resource (or the
    adopted cluster's look-up) holds."""
    return StackCluster(st.name, _cluster_access(st, cluster), cluster.endpoint, cluster.certificate_authority)


def _teardown_scope(cfg: StackConfig) -> Scope:
    """What this stack's destroy removes: its pools; on a cluster it created, the cluster and VPC too (so their
    load balancers and every volume matter); the namespaces it deletes; the control-plane log group it made."""
    created = not cfg.cluster.existing
    return Scope(cluster=cfg.cluster.name, own_pools=frozenset(p.name for p in cfg.node_pools),
                 created_cluster=created,
                 deleted_namespaces=frozenset(n.name for n in _wanted_namespaces(cfg) if not n.retain_on_delete),
                 control_plane_log_group=control_plane_log_group(cfg.cluster.name)
                 if created and cfg.cluster.log_types else None)


def _wanted_namespaces(cfg: StackConfig) -> list[NamespaceSpec]:
    return platform_namespaces(
        karpenter=cfg.karpenter.namespace,
        node_termination_handler=cfg.node_termination_handler.namespace if cfg.node_termination_handler.enabled
        else None,
        teams=[(team.name, team.namespaces) for team in cfg.access.teams],
        pod_security={namespace: pod_security_labels(team.pod_security, cfg.access.pod_security_mode)
                      for team in cfg.access.teams for namespace in team.namespaces})


def _namespaces(st: _Stack, cluster: Cluster) -> Namespaces | None:
    cfg = st.cfg
    wanted = _wanted_namespaces(cfg)
    if not wanted:
        return None
    return Namespaces("namespaces", {"namespaces": wanted, "deleteTimeout": cfg.karpenter.delete_timeout},
                      opts=pulumi.ResourceOptions(providers={"kubernetes": cluster.provider}))


def _in(namespaces: Namespaces | None, name: str) -> list[pulumi.Resource]:
    return namespaces.for_namespace(name) if namespaces else []


def _karpenter(st: _Stack, cluster: Cluster, iam: KarpenterIam, node_role: NodeRole,
               queue: InterruptionQueue | None, namespaces: Namespaces | None,
               private_subnets: pulumi.Output[list[str]], guard: TeardownHooks, owner: ReleaseOwner) -> Karpenter:
    kcfg = st.cfg.karpenter
    # Everything the controller needs running before it starts, and still there while it drains nodes on
    # destroy (NodePools and EC2NodeClasses depend on the controller, so they are deleted first): node groups
    # and add-ons, every piece of its IAM (the attachments are the role's children, which a depends_on on the
    # IAM component would not reach), the interruption queue with its policy and rules, and its namespace.
    # The node role too: the EC2NodeClasses name it, and depending on the controller alone (not on each piece of the
    # role as well) keeps one dependency per class while destroy still removes every class before the role.
    controller_needs: list[pulumi.Resource] = [*cluster.ready, *iam.ready, *node_role.ready,
                                               *([queue] if queue else []),
                                               *_in(namespaces, kcfg.namespace)]
    if kcfg.controller_on_fargate:
        controller_needs.append(KarpenterFargateProfile("karpenter-fargate", {
            "clusterName": st.name, "region": st.cfg.region, "namespace": kcfg.namespace,
            "subnetIds": private_subnets, "tags": st.tags, "iamNames": st.iam,
            "permissionsBoundary": st.cfg.permissions_boundary},
            opts=pulumi.ResourceOptions(depends_on=[cluster])))
    return Karpenter("karpenter", {
        "config": kcfg, "clusterName": st.name, "clusterEndpoint": cluster.endpoint, "region": st.cfg.region,
        "interruptionQueueName": queue.queue_name if queue else None,
        "controllerRoleArn": iam.controller_role_arn, "dependsOn": controller_needs,
        "deleteTimeout": kcfg.delete_timeout, "systemNodeGroup": not st.cfg.cluster.existing,
        "extraValues": karpenter_monitor_values(st.cfg.observability, st.operator_crds), "crdHooks": owner.binding,
        "controllerHooks": pulumi.ResourceHookBinding(before_delete=[guard.drain], after_create=[owner.hook],
                                                      after_update=[owner.hook]),
    }, opts=pulumi.ResourceOptions(providers={"kubernetes": cluster.provider}))


def _cluster_access(st: _Stack, cluster: Cluster) -> pulumi.Output[ClusterAccess]:
    """How the program's own calls (the destroy guard's hooks) reach the cluster: as the Kubernetes provider's
    identity, with a token minted in-process."""
    creds = st.cfg.access.provider_credentials
    return pulumi.Output.all(cluster.endpoint, cluster.certificate_authority).apply(
        lambda found: ClusterAccess(st.name, str(found[0]), str(found[1]), st.cfg.region, role_arn=creds.role_arn,
                                    profile=creds.profile))


def _adopted_cluster_sg(st: _Stack) -> str | None:
    """An adopted cluster's security group when the stack writes no discovery tags: node classes select it by
    ID. None when it is tagged (or the stack created the cluster)."""
    if st.existing is None or st.cfg.network.write_discovery_tags:
        return None
    return str(st.existing.vpc_config.cluster_security_group_id)


_Manifests = dict[str, dict[str, Any]]


def _node_objects(st: _Stack, karpenter: Karpenter, node_role_name: str, guard: TeardownHooks,
                  ) -> tuple[list[tuple[NodePoolConfig, NodePool]], _Manifests, _Manifests]:
    """EC2NodeClasses and NodePools.

    They belong to the Karpenter layer and need its CRDs and a running controller; destroy removes them first,
    while the controller (and through it its IAM, access entry and queue) still runs to drain and terminate
    their nodes. Their finalizers hold each delete until then: bounded by `deleteTimeout`. Returns the pools
    and the rendered pool and class manifests by name."""
    cfg, kcfg = st.cfg, st.cfg.karpenter
    finalized = pulumi.CustomTimeouts(delete=kcfg.delete_timeout)
    classes: dict[str, NodeClass] = {}
    class_manifests: _Manifests = {}
    for node_class in cfg.node_classes:
        if kcfg.node_role.instance_profile and not (node_class.role or node_class.instance_profile):
            node_class = node_class.model_copy(update={"instance_profile": node_role_name})
        # Resources another tool owns get no tags unless the stack asks: adopted subnets are selected by ID.
        if cfg.network.adopting and not cfg.network.write_discovery_tags and node_class.subnet_selector_terms is None:
            node_class = node_class.model_copy(update={"subnet_selector_terms": [
                SubnetSelectorTerm(id=subnet) for _, subnet in sorted((cfg.network.private_subnet_ids or {}).items())]})
        node_class = with_node_security_groups(node_class, st.name, cfg.cluster.node_security_group_ids,
                                               _adopted_cluster_sg(st))
        class_manifests[node_class.name] = render_node_class(node_class, st.name, node_role_name, st.tags)
        classes[node_class.name] = NodeClass(
            f"nodeclass-{node_class.name}", {"manifest": class_manifests[node_class.name]},
            opts=pulumi.ResourceOptions(parent=karpenter, depends_on=[karpenter.controller],
                                        custom_timeouts=finalized))
    pool_configs = [with_opt_in_taint(pool, cfg.migration) for pool in cfg.node_pools]
    pool_manifests = {pool.name: render_node_pool(pool) for pool in pool_configs}
    pools = [(pool, NodePool(f"nodepool-{pool.name}", {"manifest": pool_manifests[pool.name]},
                             opts=pulumi.ResourceOptions(parent=karpenter,
                                                         depends_on=[karpenter.controller, classes[pool.node_class]],
                                                         custom_timeouts=finalized)))
             for pool in pool_configs]
    # Depends on every pool and class, so destroy deletes it first: its hook checks before any of them goes.
    k8s.core.v1.ConfigMap("destroy-guard", metadata={"name": GUARD_CONFIGMAP, "namespace": kcfg.namespace},
                          data={"nodePools": ",".join(p.name for p in cfg.node_pools),
                                "destroy": "pulumi destroy --run-program (hooks check and drain first)"},
                          opts=pulumi.ResourceOptions(parent=karpenter, depends_on=[*(r for _, r in pools),
                                                                                    *classes.values()],
                                                      hooks=guard.check_binding))
    return pools, pool_manifests, class_manifests


def _migration(st: _Stack, cluster: Cluster, karpenter: Karpenter,
               pools: list[tuple[NodePoolConfig, NodePool]]) -> None:
    """The Cluster Autoscaler hand-off on an adopted cluster: it steps back only once Karpenter and its pools
    are in place."""
    m = st.cfg.migration
    if m is None or st.facts is None:
        return
    pulumi.export("migration", migration_output(m, [p.name for p, _ in pools]))
    Migration("migration", {
        "config": m, "clusterName": st.name, "after": [karpenter.controller, *(r for _, r in pools)],
        "nodeGroups": {n: LegacyGroupFacts(nodeRoleArn=g.node_role_arn, subnetIds=list(g.subnet_ids),
                                           desiredSize=g.desired_size)
                       for n, g in st.facts.node_groups.items() if isinstance(g, NodeGroup)},
    }, opts=pulumi.ResourceOptions(providers={"kubernetes": cluster.provider}))


def _node_termination_handler(st: _Stack, cluster: Cluster, namespaces: Namespaces | None,
                              owner: ReleaseOwner) -> None:
    nth = st.cfg.node_termination_handler
    NodeTerminationHandler("node-termination-handler", {
        "config": nth, "clusterName": st.name, "tags": st.tags,
        "oidcProviderArn": cluster.oidc_provider_arn, "oidcIssuer": cluster.oidc_issuer,
        "extraValues": nth_monitor_values(st.cfg.observability, nth.mode, st.operator_crds),
        "releaseHooks": owner.binding, "permissionsBoundary": st.cfg.permissions_boundary,
    }, opts=pulumi.ResourceOptions(providers={"kubernetes": cluster.provider},
                                   depends_on=[*cluster.ready, *_in(namespaces, nth.namespace)]))


def _observability(st: _Stack, cluster: Cluster, karpenter: Karpenter, private_subnets: pulumi.Output[list[str]],
                   pool_manifests: _Manifests, class_manifests: _Manifests) -> None:
    """Alert rules, scraping and the dashboard. After the controller release: the chart installs nothing the
    rules need, but the namespace must exist."""
    cfg = st.cfg
    Observability("observability", {
        "config": cfg.observability, "namespace": cfg.karpenter.namespace, "clusterName": st.name,
        "poolPrices": pool_prices(cfg.node_pools, cfg.region, pool_manifests, class_manifests),
        "region": cfg.region, "subnetIds": private_subnets,
        "securityGroupIds": [cluster.cluster_security_group_id], "tags": st.tags,
        "nthNamespace": cfg.node_termination_handler.namespace if cfg.node_termination_handler.enabled else None,
        "operatorCrds": st.operator_crds,
    }, opts=pulumi.ResourceOptions(providers={"kubernetes": cluster.provider}, depends_on=[karpenter.controller]))


def _export(st: _Stack, network: Network, cluster: Cluster, node_role: NodeRole, node_role_name: str,
            iam: KarpenterIam, karpenter: Karpenter, queue: InterruptionQueue | None, access: Access | None,
            pools: list[tuple[NodePoolConfig, NodePool]], policies: dict[str, list[dict[str, Any]]]) -> None:
    cfg = st.cfg
    pulumi.export("clusterName", cluster.cluster_name)
    pulumi.export("clusterEndpoint", cluster.endpoint)
    pulumi.export("clusterCertificateAuthority", cluster.certificate_authority)
    pulumi.export("oidcIssuer", cluster.oidc_issuer)
    pulumi.export("oidcProviderArn", cluster.oidc_provider_arn)
    pulumi.export("kubeconfig", cluster.kubeconfig)
    pulumi.export("clusterSecurityGroupId", cluster.cluster_security_group_id)
    pulumi.export("nodeRoleName", node_role.role_name)
    pulumi.export("nodeRoleArn", node_role.role_arn)
    pulumi.export("expectedNodeRoleName", node_role_name)
    pulumi.export("controllerRoleArn", iam.controller_role_arn)
    pulumi.export("karpenterVersion", karpenter.version)
    pulumi.export("interruptionQueueName", queue.queue_name if queue else None)
    pulumi.export("nodePools", [p.name for p in cfg.node_pools])
    pulumi.export("workloadScheduling", {p.name: scheduling_for(p) for p, _ in pools})
    # Local-time disruption windows as rendered (UTC), with what daylight saving does to them.
    pulumi.export("disruptionWindows", {
        p.name: [{"local": w.local, "utc": w.utc, "budget": w.budget, "daylightSaving": w.daylight_saving}
                 for w in render_windows(p.disruption.windows, p.disruption.time_zone, today())]
        for p in cfg.node_pools if p.disruption.windows})
    pulumi.export("accessPrincipals", [e.principal_arn for e in access_entries(cfg.access)])
    pulumi.export("teamNamespaces", {team.name: list(team.namespaces) for team in cfg.access.teams})
    pulumi.export("teamPolicies", policies)
    pulumi.export("vpcId", network.vpc_id)
    pulumi.export("privateSubnetIds", network.private_subnet_ids)
    pulumi.export("publicSubnetIds", network.public_subnet_ids)
    pulumi.export("discoveryTagValue", network.discovery_tag_value)


def with_node_security_groups(node_class: NodeClassConfig, cluster_name: str, group_ids: list[str],
                              cluster_sg: str | None = None) -> NodeClassConfig:
    """The class with the existing nodes' security groups added, by id, to its selector terms, so Karpenter's
    nodes get them alongside the cluster security group. A class that sets no terms selects the cluster security
    group by the discovery tag, or by `cluster_sg`'s ID (an adopted cluster's group, which is left untagged)."""
    if not group_ids and (cluster_sg is None or node_class.security_group_selector_terms):
        return node_class
    default = SecurityGroupSelectorTerm(id=cluster_sg) if cluster_sg else \
        SecurityGroupSelectorTerm(tags=tags.discovery_tags(cluster_name))
    terms = list(node_class.security_group_selector_terms or [default])
    have = {t.id for t in terms}
    terms += [SecurityGroupSelectorTerm(id=sg) for sg in group_ids if sg not in have]
    return node_class.model_copy(update={"security_group_selector_terms": terms})
