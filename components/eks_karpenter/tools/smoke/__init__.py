"""Post-deploy smoke test (`python -m infra smoke`): every NodePool launches a node for a pause pod, timed,
then lets it go; everything it creates is cleaned up.

`plan` and `budgets` are pure (manifests, sizing, consolidation windows); `runner` drives the flow through `kube`
(the official `kubernetes` client, an optional extra: `pip install 'eks-karpenter[smoke]'`); `report` renders
the results. Nothing here imports the client until a cluster is actually contacted.
"""

from eks_karpenter.tools.smoke.budgets import Consolidation, ConsolidationState, consolidation_of
from eks_karpenter.tools.smoke.config import SmokeSizing, SmokeTimeouts
from eks_karpenter.tools.smoke.plan import (
    RUN_LABEL,
    PoolPlan,
    SmokePlan,
    SmokePlanError,
    plan_pool,
    plan_smoke,
    rendered_pools,
    unschedulable_reasons,
)

__all__ = [
    "RUN_LABEL",
    "Consolidation",
    "ConsolidationState",
    "PoolPlan",
    "SmokePlan",
    "SmokePlanError",
    "SmokeSizing",
    "SmokeTimeouts",
    "consolidation_of",
    "plan_pool",
    "plan_smoke",
    "rendered_pools",
    "unschedulable_reasons",
]
