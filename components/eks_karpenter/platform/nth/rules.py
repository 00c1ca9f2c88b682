"""NTH rules: the cross-field validation of `eks-karpenter:nodeTerminationHandler` (pure)."""

from __future__ import annotations

from eks_karpenter.config.errors import Issue, KeyPath
from eks_karpenter.config.model import aliases
from eks_karpenter.labels import AWS_GROUP, KARPENTER_GROUP
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
