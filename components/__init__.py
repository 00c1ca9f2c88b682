"""eks-karpenter: Pulumi components for an EKS cluster autoscaled by Karpenter, spot-first, from typed config.

Pure planning code (tags, policy documents, manifests, Helm values) lives beside each component and is
importable without a Pulumi engine.
"""

from components import tags, versions
from components._model import ConfigError, Issue
from components.network import Network, NetworkArgs, NetworkConfig
from components.stack import StackConfig, load_stack_config

__all__ = [
    "ConfigError",
    "Issue",
    "Network",
    "NetworkArgs",
    "NetworkConfig",
    "StackConfig",
    "load_stack_config",
    "tags",
    "versions",
]
