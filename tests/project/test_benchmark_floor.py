"""The scale benchmark's floor makes the platform plan's registrations: the same resources, names, parents, inputs
and options, so that the ratio compares our code with the SDK doing the same work, not with a different program."""

from __future__ import annotations

from pathlib import Path

import pytest
from eks_karpenter.tools.engine import plan_program
from eks_karpenter.tools.engine.document import PlanDocument

from benchmarks import scale
from tests.support import REPO


@pytest.fixture(scope="module")
def plan() -> PlanDocument:
    return plan_program(REPO, scale.STACK, config_overrides=scale.pairs_config(2))


def _floor(tmp_path: Path, kind: str, plan: PlanDocument) -> PlanDocument:
    return plan_program(scale.floor_project(tmp_path / kind, kind, plan.to_json()), scale.STACK)


@pytest.mark.slow
def test_the_floor_makes_the_plans_registrations(tmp_path: Path, plan: PlanDocument) -> None:
    ours = {r.urn: r for r in plan.resources}
    floor = {r.urn: r for r in _floor(tmp_path, "floor", plan).resources}
    assert floor.keys() == ours.keys()
    for urn, r in ours.items():
        f = floor[urn]
        assert (f.type, f.parent, f.custom, f.inputs, f.options) == (r.type, r.parent, r.custom, r.inputs, r.options)
        # Dependencies the plan got from Output-valued inputs are the only ones missing: the floor's are plain.
        assert set(f.dependencies) <= set(r.dependencies), urn
        assert set(r.options.get("dependsOn", [])) <= set(f.dependencies), urn
    assert any(r.options.get("dependsOn") for r in ours.values())  # the comparison above is not vacuous
    assert any(r.options.get("protect") for r in ours.values())


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["bare", "raw"])
def test_the_lower_floors_register_as_many_resources_without_options(tmp_path: Path, plan: PlanDocument,
                                                                      kind: str) -> None:
    lower = _floor(tmp_path, kind, plan).resources
    assert sorted(r.name for r in lower) == sorted(r.name for r in plan.resources)
    assert not any(r.parent.split("::")[-2].startswith("eks-karpenter:") for r in lower if r.parent)
    assert not any(r.options.get("dependsOn") or r.options.get("protect") for r in lower)
