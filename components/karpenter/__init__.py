"""Karpenter layer: the pinned CRD and controller Helm releases and their values."""

from components.karpenter.component import Karpenter, KarpenterArgs
from components.karpenter.config import KarpenterConfig
from components.karpenter.rules import validate_karpenter
from components.karpenter.values import controller_values, crd_values

__all__ = ["Karpenter", "KarpenterArgs", "KarpenterConfig", "controller_values", "crd_values", "validate_karpenter"]
