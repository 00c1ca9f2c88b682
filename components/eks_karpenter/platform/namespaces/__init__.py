"""Namespaces the platform deploys into: created before the releases that use them, deleted after."""

from eks_karpenter.platform.namespaces.component import Namespaces, NamespacesArgs
from eks_karpenter.platform.namespaces.plan import BUILTIN_NAMESPACES, NamespaceSpec, platform_namespaces

__all__ = ["BUILTIN_NAMESPACES", "NamespaceSpec", "Namespaces", "NamespacesArgs", "platform_namespaces"]
