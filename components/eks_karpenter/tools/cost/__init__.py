"""What the platform can cost: dated AWS prices (`prices.py`), the estimate from config or plan (`estimate.py`),
text/Markdown views (`report.py`) and optional live prices with the user's credentials (`live.py`)."""

from eks_karpenter.tools.cost.estimate import CostInputs, LivePrices, estimate, inputs_from_config, inputs_from_plan

__all__ = ["CostInputs", "LivePrices", "estimate", "inputs_from_config", "inputs_from_plan"]
