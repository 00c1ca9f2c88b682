"""Network layer: the VPC and the subnets Karpenter discovers."""

from eks_karpenter.platform.network.component import Network, NetworkArgs
from eks_karpenter.platform.network.config import NetworkConfig
from eks_karpenter.platform.network.plan import plan_subnets
from eks_karpenter.platform.network.rules import validate_network

__all__ = ["Network", "NetworkArgs", "NetworkConfig", "plan_subnets", "validate_network"]
