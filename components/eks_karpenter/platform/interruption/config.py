"""Config of Karpenter's interruption queue (stack key `eks-karpenter:interruption`)."""

from __future__ import annotations

from eks_karpenter.config.model import Model


class InterruptionConfig(Model):
    """Karpenter's native interruption handling: an SQS queue fed by EventBridge with spot interruption
    warnings, rebalance recommendations, instance state changes, capacity reservation interruptions and AWS
    Health scheduled changes. Karpenter reads the queue (chart `settings.interruptionQueue`) and cordons,
    drains and replaces the affected nodes before EC2 takes them away. On by default: without it a spot node
    vanishes two minutes after the warning with its pods still on it."""

    enabled: bool = True
    """Create the queue, its policy and the five EventBridge rules, and point Karpenter at the queue."""
    acknowledge_spot_without_interruption_handling: bool = False
    """The explicit opt-out. With `enabled: false`, NodePools that may launch spot capacity are refused unless
    this is true: you accept that Karpenter learns of a spot reclaim only when the node is already gone (pods
    are killed, not evicted, and replacement capacity starts late)."""
