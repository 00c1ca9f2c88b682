"""Shared helpers: plan the real stacks offline, or plan a config written to a scratch project."""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

import pytest
import yaml

from infra.engine import PlanDocument, PlanResult, plan_program, run_plan

REPO = Path(__file__).resolve().parent.parent
STACKS = sorted(p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in (REPO / "stacks").glob("Pulumi.*.yaml"))
SHARED = REPO.parent / "shared"
UPSTREAM = SHARED / "upstream"

requires_upstream = pytest.mark.skipif(
    not UPSTREAM.is_dir(),
    reason="needs ../shared/upstream (Karpenter's CRDs, chart values and IAM template); .ci/run provides it",
)


@functools.cache
def plan_stack(stack: str) -> PlanDocument:
    """The offline plan of a committed stack (cached: plans are deterministic)."""
    return plan_program(REPO, stack)


def stack_config(stack: str) -> dict[str, Any]:
    """A committed stack file's `config:` block, as a fresh mutable copy."""
    body = yaml.safe_load((REPO / "stacks" / f"Pulumi.{stack}.yaml").read_text())
    return copy.deepcopy(body["config"])


def plan_config(config: dict[str, Any], tmp_path: Path, stack: str = "bad") -> PlanResult:
    """Plan this repo's program with `config` as the stack file of a scratch project."""
    (tmp_path / "stacks").mkdir(exist_ok=True)
    (tmp_path / "Pulumi.yaml").write_text(yaml.safe_dump({
        "name": "eks-karpenter", "runtime": "python", "stackConfigDir": "stacks",
        "main": str(REPO / "infra" / "program.py"),
    }))
    (tmp_path / "stacks" / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump({"config": config}))
    return run_plan(tmp_path, stack)
