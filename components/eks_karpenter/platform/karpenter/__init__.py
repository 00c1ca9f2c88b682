"""Karpenter layer: the pinned CRD and controller Helm releases and their values."""

from eks_karpenter.platform.karpenter.component import Karpenter, KarpenterArgs
from eks_karpenter.platform.karpenter.config import KarpenterConfig
from eks_karpenter.platform.karpenter.rules import validate_karpenter
from eks_karpenter.platform.karpenter.values import controller_values, crd_values

__all__ = ["Karpenter", "KarpenterArgs", "KarpenterConfig", "controller_values", "crd_values", "validate_karpenter"]
