"""Settings of the post-deploy smoke test: per-phase time limits, polling, and pause-pod sizing.

The defaults come from the install guides' own figures, with headroom: a node Ready about 55 s after the pods
were created and the pods Running at about 78 s in one production guide, an empty node removed about 30 s after
its consolidation delay in another. EC2 launches are slower on a cold account (first spot request, new AMI), so
each limit is several times the figure it covers.
"""

from __future__ import annotations

from pydantic import Field

from eks_karpenter.config.model import Model

PHASES = ("nodeclaim", "launched", "ready", "running", "gone")
"""Phases with a time limit, in order (each is measured from the previous milestone)."""


class SmokeTimeouts(Model):
    """Time limit of each phase, in seconds, measured from the milestone before it."""

    nodeclaim: float = Field(60.0, gt=0)
    """Pod created -> Karpenter created a NodeClaim for it (scheduling simulation; seconds in practice)."""
    launched: float = Field(180.0, gt=0)
    """NodeClaim created -> `Launched=True` (EC2 CreateFleet answered with an instance)."""
    ready: float = Field(300.0, gt=0)
    """Launched -> the Node is `Ready` (boot, kubelet registration, CNI; about a minute in the guides)."""
    running: float = Field(120.0, gt=0)
    """Node Ready -> the pause pod is `Running` (image pull of a few hundred kilobytes)."""
    gone: float = Field(300.0, gt=0)
    """Scaled to zero -> the node is gone, on top of the pool's `consolidateAfter`."""


class SmokeSizing(Model):
    """How much of the cheapest admitted instance type the pause pod requests."""

    fill: float = Field(0.8, gt=0, le=1)
    """Fraction of the type's allocatable CPU and memory: large enough that the pod does not fit in the spare
    room of an existing node, small enough that the type stays viable whatever the kubelet reserves."""
    daemonset_cpu_millis: int = Field(250, ge=0)
    """CPU left to DaemonSets (aws-node, kube-proxy, pod identity agent, CSI node plugins). Karpenter only picks a
    type whose allocatable holds the pod plus the DaemonSets that would run on the node."""
    daemonset_memory_mib: int = Field(512, ge=0)
    """Memory left to DaemonSets."""
