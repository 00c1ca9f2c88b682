"""AWS Node Termination Handler for the nodes Karpenter does not manage (CAS-era spot groups, self-managed ASGs)."""

from eks_karpenter.platform.nth.component import NodeTerminationHandler, NodeTerminationHandlerArgs
from eks_karpenter.platform.nth.config import NthConfig
from eks_karpenter.platform.nth.events import NthEvent, asg_lifecycle_event, nth_events
from eks_karpenter.platform.nth.policy import nth_controller_policy
from eks_karpenter.platform.nth.rules import validate_nth
from eks_karpenter.platform.nth.values import MANAGED_TAG, RELEASE_NAME, SERVICE_ACCOUNT, nth_values

__all__ = [
    "MANAGED_TAG",
    "RELEASE_NAME",
    "SERVICE_ACCOUNT",
    "NodeTerminationHandler",
    "NodeTerminationHandlerArgs",
    "NthConfig",
    "NthEvent",
    "asg_lifecycle_event",
    "nth_controller_policy",
    "nth_events",
    "nth_values",
    "validate_nth",
]
