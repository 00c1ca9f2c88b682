"""Karpenter node classes and pools: typed config, rules, pure manifests, workload helpers, Pulumi components."""

from eks_karpenter.platform.nodepool.class_rules import user_data_problem
from eks_karpenter.platform.nodepool.component import NodeClass, NodeClassArgs, NodePool, NodePoolArgs
from eks_karpenter.platform.nodepool.config import (
    NodeClassConfig,
    NodePoolConfig,
    default_node_classes,
    default_node_pools,
)
from eks_karpenter.platform.nodepool.manifests import pool_requirements, render_node_class, render_node_pool
from eks_karpenter.platform.nodepool.rules import validate_node_config, warnings_for
from eks_karpenter.platform.nodepool.workload import scheduling_for, toleration_for

__all__ = [
    "NodeClass",
    "NodeClassArgs",
    "NodeClassConfig",
    "NodePool",
    "NodePoolArgs",
    "NodePoolConfig",
    "default_node_classes",
    "default_node_pools",
    "pool_requirements",
    "render_node_class",
    "render_node_pool",
    "scheduling_for",
    "toleration_for",
    "user_data_problem",
    "validate_node_config",
    "warnings_for",
]
