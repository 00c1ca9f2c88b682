"""The default text plan shows what a reviewer needs per pool and class, with numbers as they were written."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from eks_karpenter.tools.engine.render import as_written, karpenter_details, render_markdown, render_tree

from tests.support import plan_stack


def _block(tree: str, name: str) -> list[str]:
    """The resource line for `name` and the detail lines under it."""
    lines = tree.splitlines()
    start = next(i for i, line in enumerate(lines) if line.endswith(f" {name}  kind=NodePool")
                 or line.endswith(f" {name}  kind=EC2NodeClass"))
    out = [lines[start]]
    for line in lines[start + 1:]:
        if "─ " in line:
            break
        out.append(line.strip(" │"))
    return out


@pytest.mark.slow
def test_prod_tree_shows_each_pools_capacity_shape_limits_and_disruption() -> None:
    tree = render_tree(plan_stack("prod"))
    general = _block(tree, "nodepool-general")
    assert general[1] == ("capacity: spot, on-demand · arch: amd64 · os: linux · categories: c, m, r · "
                          "generation: > 5 · sizes: not metal, metal-12xl, metal-16xl, metal-24xl, metal-32xl, "
                          "metal-48xl, metal-96xl, 24xlarge, 48xlarge")
    assert general[2] == "limits: cpu 1000, memory 1000Gi · class default · expireAfter 720h"
    assert general[3] == ("disruption: WhenEmptyOrUnderutilized after 5m · budgets: nodes 10%; "
                          'nodes 0 from "0 12 * * mon,tue,wed,thu,fri" for 11h (Underutilized, Drifted)')
    critical = _block(tree, "nodepool-critical")
    assert "capacity: on-demand" in critical[1] and "weight 10 ·" in critical[2]
    assert critical[3] == "disruption: WhenEmpty after 30m · budgets: nodes 1"
    assert "arch: arm64" in _block(tree, "nodepool-arm64")[1]
    assert _block(tree, "nodeclass-default")[1] == \
        "ami: alias al2023@v20260815 · role prod-karpenter-karpenter-node-us-east-1"


def test_numbers_are_printed_as_written() -> None:
    plan = plan_stack("prod")
    tree = render_tree(plan)
    assert "messageRetentionSeconds=300" in tree and "300.0" not in tree
    whole_float = re.compile(r"(?<![\d.])\d+\.0(?![\d./])")
    assert not whole_float.search(render_markdown(plan)) and not whole_float.search(tree)
    body = json.loads(plan.to_json())
    queue = next(r for r in body["resources"] if r["type"] == "aws:sqs/queue:Queue")
    assert queue["inputs"]["messageRetentionSeconds"] == 300
    assert '"messageRetentionSeconds": 300,' in plan.to_json()
    weight = next(r for r in plan.resources if r.name == "nodepool-critical").inputs["spec"]["weight"]
    assert type(weight) is int and weight == 10
    assert as_written({"a": [2.0, 2.5, "3.0"]}) == {"a": [2, 2.5, "3.0"]}


def test_details_for_a_pool_with_families_and_no_limits() -> None:
    plan = plan_stack("dev")
    pool = next(r for r in plan.resources if r.name == "nodepool-general")
    edited = json.loads(json.dumps(pool.inputs))
    reqs = edited["spec"]["template"]["spec"]["requirements"]
    reqs.append({"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m7i", "c7i"]})
    del edited["spec"]["limits"]
    lines = karpenter_details(type(pool)(**{**pool.__dict__, "inputs": edited}))
    assert "families: m7i, c7i" in lines[0] and lines[1].startswith("limits: none (unbounded)")


def _reordered(value: Any, reverse: bool) -> Any:
    """`value` with every mapping's keys in sorted or reverse-sorted order."""
    if isinstance(value, dict):
        return {k: _reordered(value[k], reverse) for k in sorted(value, reverse=reverse)}
    return [_reordered(v, reverse) for v in value] if isinstance(value, list) else value


def test_limits_and_selector_terms_read_the_same_whatever_order_the_engine_returns_them() -> None:
    """The engine's Struct maps come back in an order that depends on the protobuf version and the hash seed: the
    tree's `limits:` line, the ceiling line and the AMI terms are shown by key."""
    from eks_karpenter.tools.engine.document import PlanDocument
    from eks_karpenter.tools.engine.render import at_a_glance

    plan = plan_stack("dev")
    pool = next(r for r in plan.resources if r.name == "nodepool-general")
    node_class = next(r for r in plan.resources if r.name == "nodeclass-default")
    seen = set()
    for reverse in (False, True):
        pool_ = type(pool)(**{**pool.__dict__, "inputs": _reordered(pool.inputs, reverse)})
        class_ = type(node_class)(**{**node_class.__dict__, "inputs": _reordered(node_class.inputs, reverse)})
        limits = pool_.inputs["spec"]["limits"]
        assert len(limits) > 1
        doc = PlanDocument(project=plan.project, stack=plan.stack, resources=[pool_, class_], outputs={},
                           invokes=[], warnings=[])
        seen.add((tuple(karpenter_details(pool_)), tuple(karpenter_details(class_)), tuple(at_a_glance(doc))))
    [(pool_lines, _, glance)] = seen
    assert pool_lines[1].startswith("limits: cpu 64, memory 256Gi · ")
    assert glance[-1].startswith("  NodePool ceilings: general cpu 64, memory 256Gi (")
