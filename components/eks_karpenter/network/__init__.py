"""Network layer: the VPC and the subnets Karpenter discovers."""

from eks_karpenter.network.component import Network, NetworkArgs
from eks_karpenter.network.config import NetworkConfig
from eks_karpenter.network.plan import plan_subnets
from eks_karpenter.network.rules import validate_network

__all__ = ["Network", "NetworkArgs", "NetworkConfig", "plan_subnets", "validate_network"]
