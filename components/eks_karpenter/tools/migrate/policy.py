"""`import-legacy`'s output held to the shipped CrossGuard pack: which of its rules a converted object trips.

The pack's own check functions run (policy/guardrails.py, as shipped: `policypack.pack_source()`), on the objects
`pulumi up` would create: the v1 manifests themselves, or, for stack config, the NodePools and EC2NodeClasses the
library renders from it. Checked: each NodePool and EC2NodeClass (`nodepool-limits-and-expiry`,
`ec2nodeclass-imdsv2-encrypted-ebs`) and each pool's cost at its cpu limit (`nodepool-cost-ceiling`, at the pack's
default cap). The stack-wide rules (spot needs the interruption queue, the cluster's logging and encryption) are the
stack's, not the converted objects': the conversion's notes say what the stack needs.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterable, Mapping
from types import ModuleType
from typing import Any

from eks_karpenter.platform.nodepool.config import NodeClassConfig, NodePoolConfig
from eks_karpenter.platform.nodepool.manifests import render_node_class, render_node_pool
from eks_karpenter.platform.stack import StackConfig
from eks_karpenter.platform.version_rules import discovery_warnings
from eks_karpenter.tools.migrate.model import Conversion
from eks_karpenter.tools.policypack import pack_source

_TYPES = {"NodePool": "kubernetes:karpenter.sh/v1:NodePool",
          "EC2NodeClass": "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"}


class PackUnavailable(Exception):
    """The pack cannot run here (pulumi-policy is not installed); the message says what to install."""


def _guardrails() -> ModuleType:
    # The pack is a folder Pulumi runs as a script (`import guardrails`), not a package of the library.
    if "guardrails" in sys.modules and hasattr(sys.modules["guardrails"], "RESOURCE_CHECKS"):
        return sys.modules["guardrails"]
    spec = importlib.util.spec_from_file_location("guardrails", pack_source() / "guardrails.py")
    if spec is None or spec.loader is None:
        raise PackUnavailable(f"no policy pack at {pack_source()}")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except ImportError as exc:
        raise PackUnavailable(f"{exc.name or 'pulumi_policy'} is not installed; `pip install pulumi-policy` "
                              "checks them here") from None
    sys.modules["guardrails"] = module
    return module


def rendered_objects(conversion: Conversion, node_role: str | None) -> list[dict[str, Any]]:
    """The EC2NodeClasses and NodePools the library renders from the converted stack config."""
    classes = [render_node_class(NodeClassConfig.model_validate(c), "cluster", node_role or "node-role", {})
               for c in conversion.config(node_role)["eks-karpenter:nodeClasses"]]
    pools = [render_node_pool(NodePoolConfig.model_validate(p)) for p in conversion.node_pools]
    return [*classes, *pools]


def stack_warnings(conversion: Conversion, cfg: StackConfig) -> list[str]:
    """What the converted classes would select in the stack they are pasted into: a discovery tag value that is
    not the stack's cluster name where the stack tags its own subnets or security group (`discovery_warnings`),
    said of the converted keys."""
    classes = [NodeClassConfig.model_validate(c) for c in conversion.config()["eks-karpenter:nodeClasses"]]
    return [f"the converted {w}" for w in discovery_warnings(classes, cfg.cluster, cfg.network)]


def pack_findings(objects: Iterable[Mapping[str, Any]]) -> list[str]:
    """Each rule of the pack a converted object trips: `<Kind> <name> trips <policy>: <why>`; none: it passes.
    Raises `PackUnavailable` where the pack cannot run."""
    guardrails = _guardrails()
    typed = [(_TYPES[str(o.get("kind"))], o) for o in objects if o.get("kind") in _TYPES]
    found: list[str] = []
    for type_, props in typed:
        label = f"{props['kind']} {props.get('metadata', {}).get('name', '?')}"
        for policy, check in guardrails.RESOURCE_CHECKS.items():
            found += [f"{label} trips {policy}: {why}" for why in check(type_, props)]
    cap = guardrails.DEFAULT_MAX_MONTHLY_AT_CPU_LIMIT
    found += [f"{why.split(' ', 2)[0]} {why.split(' ', 2)[1]} trips {guardrails.POOL_COST_POLICY}: "
              f"{why.split(' ', 2)[2]}" for why in guardrails.check_pool_cost(typed, cap)]
    return found
