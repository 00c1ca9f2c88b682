"""Helm values for the aws-node-termination-handler chart (pure: config in, values dict out).

Key names follow the pinned chart's values.yaml (versions.NTH_VERSION); tests check every key exists there.

IMDS mode renders the Linux DaemonSet. Its scheduling keys are the `daemonset*` ones: the chart resolves
`linux*` over the generic keys over `daemonset*`, and this library leaves the other two empty. The DaemonSet
runs only on the selected spot nodes that Karpenter does not manage: the node selector, plus a required node
affinity with `karpenter.sh/nodepool DoesNotExist` and the selector labels, and no Fargate. It tolerates every
taint (the chart's default), so tainted spot groups (`spotInstance=true:PreferNoSchedule`, or stronger) run it.

Queue mode renders a Deployment reading the queue. Which instances it acts on is decided by the tag check
(`checkTagBeforeDraining` with `managedTag`), always on: only the Auto Scaling groups this library hooks carry
the tag, so Karpenter's instances (not in any ASG, never tagged) are skipped even though EventBridge delivers
their spot and state-change events to this queue too.
"""

from __future__ import annotations

import copy
from typing import Any

from eks_karpenter.labels import EKS_CAPACITY_TYPE, EKS_COMPUTE_TYPE, IRSA_ANNOTATION, NODEPOOL_LABEL
from eks_karpenter.platform.nth.config import NthConfig

CHART = "aws-node-termination-handler"
RELEASE_NAME = "aws-node-termination-handler"
SERVICE_ACCOUNT = "aws-node-termination-handler"
"""Set explicitly, so the Pod Identity association and the IRSA trust name the same account."""
MANAGED_TAG = "aws-node-termination-handler/managed"
"""Instance tag queue mode requires before acting (NTH's default key). Never put it on Karpenter's nodes."""
FARGATE_EXCLUSION: dict[str, Any] = {"key": EKS_COMPUTE_TYPE, "operator": "NotIn",
                                     "values": ["fargate"]}
TOLERATE_EVERYTHING: list[dict[str, Any]] = [{"operator": "Exists"}]
ON_DEMAND_LABEL: dict[str, Any] = {"key": EKS_CAPACITY_TYPE, "operator": "In", "values": ["ON_DEMAND"]}


def imds_node_affinity(node_selector: dict[str, str]) -> dict[str, Any]:
    """Required node affinity: not a Karpenter node, not Fargate, and every selector label."""
    expressions: list[dict[str, Any]] = [
        # Karpenter labels every node it launches with its NodePool: the DaemonSet requires it absent.
        {"key": NODEPOOL_LABEL, "operator": "DoesNotExist"},
        copy.deepcopy(FARGATE_EXCLUSION),
        *({"key": key, "operator": "In", "values": [value]} for key, value in sorted(node_selector.items())),
    ]
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": expressions}]}}}


def queue_region(queue_url: str) -> str | None:
    """The region of an SQS queue URL (`https://sqs.<region>.amazonaws.com/<account>/<name>`), if it names one."""
    host = queue_url.split("://", 1)[-1].split("/", 1)[0]
    parts = host.split(".")
    return parts[1] if len(parts) > 2 and parts[0] == "sqs" else None


def nth_values(cfg: NthConfig, *, queue_url: str | None, irsa_role_arn: str | None) -> dict[str, Any]:
    """The chart values for `cfg`. Queue mode needs the queue URL; IRSA needs the role ARN (annotated on the
    service account); Pod Identity needs neither annotation (the association is made in AWS)."""
    values: dict[str, Any] = {
        "serviceAccount": {"create": True, "name": SERVICE_ACCOUNT},
        "rbac": {"create": True, "pspEnabled": False},  # PodSecurityPolicy is gone from Kubernetes >= 1.25
    }
    if cfg.mode == "imds":
        if queue_url is not None or irsa_role_arn is not None:
            raise ValueError("IMDS mode uses no queue and no IAM role: pass queue_url=None, irsa_role_arn=None")
        values.update({
            "enableSqsTerminationDraining": False,
            "targetNodeOs": "linux",
            "enableSpotInterruptionDraining": cfg.enable_spot_interruption_draining,
            "enableScheduledEventDraining": cfg.enable_scheduled_event_draining,
            "enableRebalanceMonitoring": cfg.enable_rebalance_monitoring,
            "enableRebalanceDraining": cfg.enable_rebalance_draining,
            "daemonsetNodeSelector": dict(cfg.node_selector),
            "daemonsetAffinity": imds_node_affinity(dict(cfg.node_selector)),
            "daemonsetTolerations": copy.deepcopy(TOLERATE_EVERYTHING),
        })
        return values

    if not queue_url:
        raise ValueError("queue mode needs the SQS queue URL")
    if cfg.identity == "irsa":
        if not irsa_role_arn:
            raise ValueError("identity irsa needs the IAM role ARN for the service account annotation")
        values["serviceAccount"]["annotations"] = {IRSA_ANNOTATION: irsa_role_arn}
    elif irsa_role_arn is not None:
        raise ValueError("identity podIdentity takes no role annotation: pass irsa_role_arn=None")
    values.update({
        "enableSqsTerminationDraining": True,
        "queueURL": queue_url,
        # Given, so the handler never asks IMDS for it (unreachable from a pod at hop limit 1).
        **({"awsRegion": region} if (region := queue_region(queue_url)) else {}),
        "checkTagBeforeDraining": True,
        "managedTag": MANAGED_TAG,
        # Deprecated spellings of the two above; the chart still renders them, NTH prefers the new ones.
        "checkASGTagBeforeDraining": True,
        "managedAsgTag": MANAGED_TAG,
        # The controller itself: prefer on-demand nodes (a spot reclaim would take the handler down with the
        # node it drains), and tolerate the system node group's CriticalAddonsOnly taint.
        "affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 100, "preference": {"matchExpressions": [copy.deepcopy(ON_DEMAND_LABEL)]}}]}},
        "tolerations": [{"key": "CriticalAddonsOnly", "operator": "Exists"}],
    })
    return values
