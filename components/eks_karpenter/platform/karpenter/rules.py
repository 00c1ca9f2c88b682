"""Cross-field rules for the Karpenter install config. Field-level checks live on the types in config.py.

Version policy: one of `versions.KARPENTER_RELEASES` (1.12.2, 1.13.1, 1.14.1). The controller IAM policies, the
Helm values and the CRDs this library renders differ between them and are tested against each release's own
upstream files; any other release is refused with the supported list, since nothing says what it needs. A stack
may name an older or newer supported release than the default to canary an upgrade.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal

from eks_karpenter import versions
from eks_karpenter.arns import arn_issues
from eks_karpenter.config.errors import Issue, KeyPath
from eks_karpenter.labels import EKS_CAPACITY_TYPE, NODEGROUP_LABEL, SYSTEM_NODE_LABEL
from eks_karpenter.platform.karpenter.config import KarpenterConfig, Toleration, duration_seconds
from eks_karpenter.platform.karpenter.releases import release_issues
from eks_karpenter.quantities import bytes_issue, quantity_value, unitless_bytes

STANDARD_NODE_POLICIES = (
    "AmazonEKSWorkerNodePolicy",
    "AmazonEKS_CNI_Policy",
    "AmazonEC2ContainerRegistryPullOnly",
    "AmazonSSMManagedInstanceCore",
)
"""AWS managed policies every Karpenter node role gets (upstream getting-started); not to be listed again."""

_MIN_REFRESH = Decimal(60)
_MIN_DELETE_TIMEOUT = Decimal(60)
_MAX_DELETE_TIMEOUT = Decimal(24 * 3600)


def validate_karpenter(cfg: KarpenterConfig, at: KeyPath) -> list[Issue]:
    """Every rule on `eks-karpenter:karpenter` that needs more than one field, or a parsed value."""
    issues: list[Issue] = []

    if cfg.controller_on_fargate and cfg.identity == "podIdentity":
        issues.append(Issue(at + ("identity",), "EKS Pod Identity does not work on Fargate: a controller on Fargate "
                            "(controllerOnFargate: true) needs IRSA (identity: irsa)", cfg.identity))

    if cfg.controller_on_fargate and NODEGROUP_LABEL in cfg.node_selector:
        issues.append(Issue(at + ("nodeSelector", NODEGROUP_LABEL), "pins the controller to a managed node group, "
                            "but controllerOnFargate: true runs it on Fargate, whose nodes carry no node group "
                            "label: its pods would stay Pending. Choose one: drop this selector, or "
                            "controllerOnFargate", cfg.node_selector[NODEGROUP_LABEL]))
    issues += toleration_issues(cfg.tolerations, at + ("tolerations",))

    release = versions.KARPENTER_RELEASES.get(cfg.version)
    if release is None:
        issues.append(Issue(at + ("version",), "not a Karpenter release this library supports (its IAM policies, "
                            "Helm values and CRDs are known for these only): "
                            + ", ".join(versions.KARPENTER_VERSIONS), cfg.version))
    else:
        issues += release_issues(cfg, release, at)

    timeout = duration_seconds(cfg.delete_timeout)
    if not _MIN_DELETE_TIMEOUT <= timeout <= _MAX_DELETE_TIMEOUT:
        issues.append(Issue(at + ("deleteTimeout",), "must be between 1m (Karpenter needs time to drain and "
                            "terminate nodes) and 24h (a longer wait is a hang)", cfg.delete_timeout))

    issues += _resources(cfg, at + ("resources",))
    issues += _settings(cfg, at + ("settings",))

    if cfg.settings.isolated_vpc and not cfg.node_role.instance_profile:
        issues.append(Issue(at + ("nodeRole", "instanceProfile"), "an isolated VPC (settings.isolatedVPC: true) has "
                            "no route to the IAM API, so Karpenter cannot manage instance profiles: set "
                            "instanceProfile: true", False))

    arns = cfg.node_role.additional_policy_arns
    for i, arn in enumerate(arns):
        where = at + ("nodeRole", "additionalPolicyArns", i)
        if arns.index(arn) != i:
            issues.append(Issue(where, "listed twice", arn))
        name = arn.rsplit("/", 1)[-1]
        if ":iam::aws:policy/" in arn and name in STANDARD_NODE_POLICIES:
            issues.append(Issue(where, "already attached to every Karpenter node role; remove it", arn))
    return issues


def toleration_issues(tolerations: Sequence[Toleration], at: KeyPath) -> list[Issue]:
    """Tolerations the API server refuses (pod validation): a value with `operator: Exists`, and no key without
    `Exists` (an empty key tolerates every taint, so it must say so)."""
    issues: list[Issue] = []
    for i, toleration in enumerate(tolerations):
        if toleration.operator == "Exists" and toleration.value:
            issues.append(Issue(at + (i, "value"), "must be empty with operator: Exists (the API server refuses "
                                "the pod): drop the value, or use operator: Equal", toleration.value))
        if not toleration.key and toleration.operator != "Exists":
            issues.append(Issue(at + (i, "operator"), "a toleration without a key matches every taint and must say "
                                "operator: Exists (the API server refuses the pod otherwise); or give the taint's "
                                "key", toleration.operator))
    return issues


def validate_karpenter_placement(cfg: KarpenterConfig, *, system_node_min_size: int, at: KeyPath,
                                 system_node_labels: Mapping[str, str] | None = None) -> list[Issue]:
    """Cross-section rules of a created cluster: on the system node group, each replica needs its own node, and
    the controller's `nodeSelector` must be labels the system group's nodes carry (`system_node_labels`, when
    given: its `labels`).

    The controller's pod anti-affinity on `kubernetes.io/hostname` is required (one replica per node), so with
    fewer system nodes than replicas the extra replicas stay Pending. Not applicable on Fargate (one pod per
    Fargate node).
    """
    issues: list[Issue] = []
    if not cfg.controller_on_fargate and system_node_labels is not None:
        issues += _selector_issues(cfg.node_selector, system_node_labels, at + ("nodeSelector",))
    if cfg.controller_on_fargate or cfg.replicas <= system_node_min_size:
        return issues
    return issues + [Issue(at + ("replicas",), f"each replica needs its own system node, but the system node group "
                           f"may shrink to {system_node_min_size} (systemNodeGroup.minSize): lower replicas or raise "
                           "minSize", cfg.replicas)]


_NODE_LABEL_PREFIXES = ("kubernetes.io/", "node.kubernetes.io/", "topology.kubernetes.io/", "topology.k8s.aws/",
                        "eks.amazonaws.com/")
"""Labels the kubelet and EKS put on every node, with values known only at run time (zone, instance type...)."""


def _selector_issues(selector: Mapping[str, str], group_labels: Mapping[str, str], at: KeyPath) -> list[Issue]:
    """Selector labels no node of the system node group carries: the controller would stay Pending."""
    carried = {**group_labels, SYSTEM_NODE_LABEL: "true", EKS_CAPACITY_TYPE: "ON_DEMAND"}
    issues: list[Issue] = []
    for key, value in selector.items():
        if key == NODEGROUP_LABEL:
            issues.append(Issue(at + (key,), "no node of a cluster this stack creates carries this value: EKS "
                                "names its managed node groups from a prefix and a generated suffix. The controller "
                                f"already runs on the system node group ({SYSTEM_NODE_LABEL}: \"true\"): drop this "
                                "selector, or select a label of cluster.systemNodeGroup.labels", value))
        elif key in carried and carried[key] != value:
            issues.append(Issue(at + (key,), f"the system node group's nodes, where the controller runs, carry "
                                f"{key}: {carried[key]}: its pods would stay Pending", value))
        elif key not in carried and not key.startswith(_NODE_LABEL_PREFIXES):
            issues.append(Issue(at + (key,), "no node of the system node group, where the controller runs, carries "
                                "this label: its pods would stay Pending; add it to cluster.systemNodeGroup.labels, "
                                "or drop it", value))
    return issues


def _resources(cfg: KarpenterConfig, at: KeyPath) -> list[Issue]:
    issues: list[Issue] = []
    requests, limits = cfg.resources.requests, cfg.resources.limits
    if limits.memory is None:
        issues.append(Issue(at + ("limits", "memory"), "required: the controller sets its Go GC soft limit from "
                            "the memory limit; without one it grows to the node's memory", None, has_value=False))
    if requests.cpu is None and limits.cpu is None:
        issues.append(Issue(at + ("requests", "cpu"), "required: the controller sizes its worker pools from its "
                            "CPU request (give requests.cpu, or limits.cpu which it then defaults to)", None,
                            has_value=False))
    for resource in ("cpu", "memory"):
        want, cap = getattr(requests, resource), getattr(limits, resource)
        if want is not None and cap is not None and quantity_value(want) > quantity_value(cap):
            issues.append(Issue(at + ("requests", resource), f"the request is above the limit ({cap}); Kubernetes "
                                "refuses such a pod", want))
    return issues


def _settings(cfg: KarpenterConfig, at: KeyPath) -> list[Issue]:
    issues: list[Issue] = []
    s = cfg.settings
    if s.vm_memory_overhead_percent == 0:
        issues.append(Issue(at + ("vmMemoryOverheadPercent",), "must be above 0: the chart drops a zero value "
                            "and the controller then silently uses 0.075", s.vm_memory_overhead_percent))
    batch_max, batch_idle = duration_seconds(s.batch_max_duration), duration_seconds(s.batch_idle_duration)
    if batch_max <= 0:
        issues.append(Issue(at + ("batchMaxDuration",), "must be longer than zero", s.batch_max_duration))
    if batch_idle <= 0:
        issues.append(Issue(at + ("batchIdleDuration",), "must be longer than zero", s.batch_idle_duration))
    if batch_max > 0 and batch_idle > batch_max:
        issues.append(Issue(at + ("batchIdleDuration",), f"longer than batchMaxDuration ({s.batch_max_duration}) "
                            "and so never takes effect", s.batch_idle_duration))
    for key, value in (("amiRefreshInterval", s.ami_refresh_interval),
                       ("subnetRefreshInterval", s.subnet_refresh_interval)):
        if duration_seconds(value) < _MIN_REFRESH:
            issues.append(Issue(at + (key,), "must be at least 1m (the controller refuses to start otherwise)",
                                value))
    return issues


def validate_karpenter_environment(cfg: KarpenterConfig, region: str | None, accounts: tuple[str, ...],
                                   at: KeyPath) -> list[Issue]:
    """Rules relating the install to the stack's region and accounts, and units of the controller's memory."""
    issues: list[Issue] = []
    if region:
        for i, arn in enumerate(cfg.node_role.additional_policy_arns):
            issues += arn_issues(arn, at + ("nodeRole", "additionalPolicyArns", i), service="iam", region=region,
                                 accounts=accounts, regional=False, what="policy")
    for kind in ("requests", "limits"):
        memory = getattr(cfg.resources, kind).memory
        if memory is not None and unitless_bytes("memory", memory):
            issues.append(bytes_issue(at + ("resources", kind, "memory"), "memory", memory))
    return issues
