"""NTH rules: config validation, and the queue mode's AWS documents (EventBridge patterns, IAM policies).

Everything here is pure. Lifecycle hooks reach the queue through EventBridge (the hook has no notification
target), so no role for Auto Scaling to send to SQS is needed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from eks_karpenter.config.errors import Issue, Path
from eks_karpenter.config.model import aliases
from eks_karpenter.platform.nth.config import EKS_SPOT_CAPACITY_LABELS, SPOT_GROUP_LABELS, NthConfig
from eks_karpenter.platform.nth.values import MANAGED_TAG

KARPENTER_LABEL_PREFIXES = ("karpenter.sh/", "karpenter.k8s.aws/")
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
    cfg: NthConfig, *, spot_node_groups: int, karpenter_interruption_enabled: bool, at: Path,
    at_cluster_groups: Path,
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


# --- queue mode: EventBridge ----------------------------------------------------------------------------------

class NthEvent(NamedTuple):
    """One EventBridge rule feeding NTH's queue: short name (for resource names) and the event pattern."""

    name: str
    pattern: dict[str, Any]


ASG_LIFECYCLE_SOURCE = "aws.autoscaling"
ASG_LIFECYCLE_DETAIL_TYPE = "EC2 Instance-terminate Lifecycle Action"


def asg_lifecycle_event(asg_names: Sequence[str]) -> NthEvent:
    """The termination lifecycle rule, narrowed to `asg_names`, so another cluster's hooks never reach this
    queue (NTH would complete their lifecycle actions without draining anything)."""
    if not asg_names:
        raise ValueError("the lifecycle rule needs at least one Auto Scaling group name")
    return NthEvent("asg-lifecycle", {"source": [ASG_LIFECYCLE_SOURCE], "detail-type": [ASG_LIFECYCLE_DETAIL_TYPE],
                                      "detail": {"AutoScalingGroupName": sorted(set(asg_names))}})


def nth_events(asg_names: Sequence[str] = ()) -> list[NthEvent]:
    """The rules NTH's queue needs: the lifecycle rule for `asg_names` (left out without any), spot interruption,
    rebalance recommendation, instance state change, and EC2 scheduled changes from AWS Health. All but the
    first reach every instance of the region; the managed-tag check picks this cluster's groups' out of them."""
    events = [asg_lifecycle_event(asg_names)] if asg_names else []
    events += [
        NthEvent("spot-interruption", {"source": ["aws.ec2"],
                                       "detail-type": ["EC2 Spot Instance Interruption Warning"]}),
        NthEvent("rebalance", {"source": ["aws.ec2"], "detail-type": ["EC2 Instance Rebalance Recommendation"]}),
        NthEvent("instance-state-change", {"source": ["aws.ec2"],
                                           "detail-type": ["EC2 Instance State-change Notification"]}),
        NthEvent("scheduled-change", {"source": ["aws.health"], "detail-type": ["AWS Health Event"],
                                      "detail": {"service": ["EC2"], "eventTypeCategory": ["scheduledChange"]}}),
    ]
    return events


# --- queue mode: IAM --------------------------------------------------------------------------------------------

def nth_controller_policy(queue_arn: str) -> dict[str, Any]:
    """The controller's permissions: read and delete messages on its own queue only; complete lifecycle actions
    only on groups carrying the managed tag; and the read-only lookups (which IAM cannot scope to resources)
    that map an event to a node and check its tag."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "ConsumeOwnQueue",
                "Effect": "Allow",
                "Action": ["sqs:DeleteMessage", "sqs:ReceiveMessage"],
                "Resource": queue_arn,
            },
            {
                "Sid": "CompleteLifecycleActionOnManagedGroups",
                "Effect": "Allow",
                "Action": "autoscaling:CompleteLifecycleAction",
                "Resource": "*",
                "Condition": {"Null": {f"autoscaling:ResourceTag/{MANAGED_TAG}": "false"}},
            },
            {
                "Sid": "DescribeInstancesAndGroups",
                "Effect": "Allow",
                "Action": ["autoscaling:DescribeAutoScalingInstances", "autoscaling:DescribeTags",
                           "ec2:DescribeInstances"],
                "Resource": "*",
            },
        ],
    }


POD_IDENTITY_PRINCIPAL = "pods.eks.amazonaws.com"


def pod_identity_trust_policy() -> dict[str, Any]:
    """Trust for EKS Pod Identity: the association (cluster, namespace, service account) scopes who gets it."""
    return {
        "Version": "2012-10-17",
        "Statement": [{
            "Effect": "Allow",
            "Principal": {"Service": POD_IDENTITY_PRINCIPAL},
            "Action": ["sts:AssumeRole", "sts:TagSession"],
        }],
    }


def irsa_trust_policy(oidc_provider_arn: str, oidc_issuer: str, namespace: str, service_account: str) -> dict[str, Any]:
    """Trust for IRSA: web identity from the cluster's OIDC provider, for one service account only."""
    issuer = oidc_issuer.removeprefix("https://")
    return {
        "Version": "2012-10-17",
        "Statement": [{
            "Effect": "Allow",
            "Principal": {"Federated": oidc_provider_arn},
            "Action": "sts:AssumeRoleWithWebIdentity",
            "Condition": {"StringEquals": {
                f"{issuer}:sub": f"system:serviceaccount:{namespace}:{service_account}",
                f"{issuer}:aud": "sts.amazonaws.com",
            }},
        }],
    }
