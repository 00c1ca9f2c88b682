"""What-if placement of a workload's pods: on a stack's Karpenter NodePools versus a fixed managed node group."""

from eks_karpenter.tools.simulate.pools import Pool, pool_from_manifest, pools_for_stack
from eks_karpenter.tools.simulate.schedule import FixedResult, KarpenterResult, schedule, schedule_fixed
from eks_karpenter.tools.simulate.workload import Workload, WorkloadError, load_workload, parse_workload

__all__ = [
    "FixedResult",
    "KarpenterResult",
    "Pool",
    "Workload",
    "WorkloadError",
    "load_workload",
    "parse_workload",
    "pool_from_manifest",
    "pools_for_stack",
    "schedule",
    "schedule_fixed",
]
