"""Network layer: the VPC and the subnets Karpenter discovers."""

from components.network.component import Network, NetworkArgs
from components.network.config import NetworkConfig
from components.network.plan import plan_subnets
from components.network.rules import validate_network

__all__ = ["Network", "NetworkArgs", "NetworkConfig", "plan_subnets", "validate_network"]
