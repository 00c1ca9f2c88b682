"""Offline planning engine: runs a Pulumi program under the SDK's mock runtime and records what it registers.

The same program code that `pulumi up` runs is executed here; only the resource monitor is replaced, so the
plan shows the inputs exactly as a provider would receive them.
"""

from eks_karpenter.tools.engine.document import PlanDocument, PlannedInvoke, PlannedResource
from eks_karpenter.tools.engine.runner import (
           PlanError,
           PlanResult,
           plan_components,
           plan_program,
           plan_with_references,
           run_plan,
)

__all__ = ["PlanDocument", "PlanError", "PlanResult", "PlannedInvoke", "PlannedResource", "plan_components",
           "plan_program", "plan_with_references", "run_plan"]
