"""NTH rules: the cross-field validation of `eks-karpenter:nodeTerminationHandler` (pure)."""

from __future__ import annotations

from collections.abc import Sequence

from eks_karpenter import versions
from eks_karpenter.config.errors import Issue, KeyPath
from eks_karpenter.config.model import aliases
from eks_karpenter.labels import AWS_GROUP, KARPENTER_GROUP, NODEGROUP_LABEL
from eks_karpenter.platform.cluster.config import SpotNodeGroupConfig
from eks_karpenter.platform.nth.config import EKS_SPOT_CAPACITY_LABELS, SPOT_GROUP_LABELS, NthConfig

KARPENTER_LABEL_PREFIXES = (f"{KARPENTER_GROUP}/", f"{AWS_GROUP}/")
"""Label prefixes only Karpenter-launched nodes carry (`karpenter.sh/nodepool`, `karpenter.sh/capacity-type`...)."""

_IMDS_ONLY = ("enable_spot_interruption_draining", "enable_scheduled_event_draining", "enable_rebalance_monitoring",
              "enable_rebalance_draining", "node_selector")
_QUEUE_ONLY = ("auto_scaling_group_names", "identity")
_WHEN_ENABLED = ("mode", "version", "namespace", *_IMDS_ONLY, *_QUEUE_ONLY)
_ALIAS = aliases(NthConfig)
_SECTION = "eks-karpenter:nodeTerminationHandler"
_SELECTORS = ", ".join(f"{k}: {v}" for k, v in {**SPOT_GROUP_LABELS, **EKS_SPOT_CAPACITY_LABELS}.items())


def is_karpenter_label(key: str) -> bool:
    return key.startswith(KARPENTER_LABEL_PREFIXES)


def validate_nth(
    cfg: NthConfig, *, spot_node_groups: int, karpenter_interruption_enabled: bool, at: KeyPath,
    at_cluster_groups: KeyPath,
) -> list[Issue]:
    """Cross-field rules of `eks-karpenter:nodeTerminationHandler` (at `at`), and the spot-groups rule (reported
    at `at_cluster_groups`, the `spotNodeGroups` list, since adding groups is what needs the handler).

    Queue mode with no `autoScalingGroupNames` is allowed: a consumer program may pass groups to the component,
    and even with none NTH handles the EventBridge events of any instance carrying the managed tag.
    """
    issues: list[Issue] = []

    def field_issue(name: str, message: str) -> None:
        issues.append(Issue(at + (_ALIAS[name],), message, cfg.written(name)))

    if not cfg.enabled:
        if spot_node_groups > 0 and not cfg.acknowledge_spot_groups_without_handler:
            issues.append(Issue(
                at_cluster_groups,
                "spot managed node groups without a node termination handler: EKS drains these nodes only on a "
                "rebalance recommendation; NTH also drains on the two-minute spot interruption notice (which can "
                "come first, or alone) and before EC2 scheduled events. Set "
                f"{_SECTION}.enabled: true, or accept the risk with "
                f"{_SECTION}.acknowledgeSpotGroupsWithoutHandler: true",
                spot_node_groups))
        for name in _WHEN_ENABLED:
            if cfg.is_set(name):
                field_issue(name, "has no effect while enabled is false")
        return issues

    if cfg.acknowledge_spot_groups_without_handler:
        field_issue("acknowledge_spot_groups_without_handler", "only applies with enabled: false (NTH is enabled "
                    "here); remove it")
    for key, value in cfg.node_selector.items():
        if is_karpenter_label(key):
            instead = ("Karpenter handles its own nodes through its interruption queue" if
                       karpenter_interruption_enabled else "turn on eks-karpenter:interruption.enabled instead")
            issues.append(Issue(at + ("nodeSelector", key), "selects Karpenter's nodes: NTH and Karpenter would "
                                f"fight over the same nodes (both cordon, drain and replace them); {instead}. "
                                f"Select the non-Karpenter spot groups ({_SELECTORS})", value))

    if cfg.mode == "imds":
        if not cfg.node_selector:
            field_issue("node_selector", "IMDS mode needs a node selector: empty, the DaemonSet would run on every "
                        f"node, on-demand ones included (this library keeps it off Karpenter's nodes regardless). "
                        f"Select the spot groups ({_SELECTORS})")
        for name in _QUEUE_ONLY:
            if cfg.is_set(name):
                field_issue(name, "only applies to mode: queue")
    else:
        for name in _IMDS_ONLY:
            if cfg.is_set(name):
                field_issue(name, "only applies to mode: imds (queue mode acts on the tagged Auto Scaling "
                            "groups, wherever their nodes are)")
        names = cfg.auto_scaling_group_names
        for i, group in enumerate(names):
            if names.index(group) != i:
                issues.append(Issue(at + ("autoScalingGroupNames", i), "listed twice", group))
    return issues


def validate_nth_for_cluster(cfg: NthConfig, groups: Sequence[SpotNodeGroupConfig], *, created_cluster: bool,
                             at: KeyPath) -> list[Issue]:
    """The handler against the spot managed node groups it is there for, and its chart version.

    Queue mode acts only on the Auto Scaling groups it is given (hooks and the managed tag); the spot managed
    node groups' groups have generated names and get neither, so they would have no handler. IMDS mode runs on
    the nodes its selector matches: a spot group whose nodes lack one of its labels has no handler either.
    """
    issues: list[Issue] = []
    if not cfg.enabled:
        return issues  # every setting is refused as having no effect (validate_nth)
    if cfg.version.split(".")[0] != "0":
        issues.append(Issue(at + ("version",), f"is an application version: the aws-node-termination-handler "
                            f"chart is versioned 0.x apart from its application (this library pins chart "
                            f"{versions.NTH_VERSION}): give the chart's version, not the app's", cfg.version))
    if not groups and not (created_cluster and NODEGROUP_LABEL in cfg.node_selector):
        return issues
    if cfg.mode == "queue" and groups:
        issues.append(Issue(at + ("mode",), "queue mode handles only the Auto Scaling groups it hooks and tags "
                            "(autoScalingGroupNames); the spot managed node groups (cluster.spotNodeGroups: "
                            f"{', '.join(g.name for g in groups)}) get neither, so their nodes would have no "
                            "handler: use mode: imds", cfg.mode))
        return issues
    if cfg.mode != "imds":
        return issues
    if created_cluster and NODEGROUP_LABEL in cfg.node_selector:
        issues.append(Issue(at + ("nodeSelector", NODEGROUP_LABEL), "no node of a cluster this stack creates "
                            "carries this value: EKS names its managed node groups from a prefix and a generated "
                            f"suffix; select the spot groups' labels instead ({_SELECTORS})",
                            cfg.node_selector[NODEGROUP_LABEL]))
        return issues
    for key, value in cfg.node_selector.items():
        missed = [g.name for g in groups if {**g.labels, **EKS_SPOT_CAPACITY_LABELS}.get(key) != value]
        if missed:
            issues.append(Issue(at + ("nodeSelector", key), f"the nodes of spot node group(s) {', '.join(missed)} "
                                f"(cluster.spotNodeGroups) do not carry {key}: {value}, so the handler's DaemonSet "
                                f"would not run there and they would have no handler: select a label every spot "
                                f"group carries ({_SELECTORS})", value))
    return issues
