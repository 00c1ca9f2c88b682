"""Shared test helpers: plan the real stacks offline, plan a config written to a scratch project, and find the
upstream files the comparisons read (the `upstream_files` fixture in tests/conftest.py skips without them)."""

from __future__ import annotations

import copy
import functools
import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml
from eks_karpenter.config.model import Model
from eks_karpenter.tools import cli
from eks_karpenter.tools.engine import PlanDocument, PlanResult, plan_program, run_plan

REPO = Path(__file__).resolve().parent.parent.parent
# As `python -m infra` does: this repository is the default program and the platform for StackReferences.
cli.DEFAULTS.update(program=REPO, platform=REPO)
STACKS = sorted(p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in (REPO / "stacks").glob("Pulumi.*.yaml"))

# Upstream files the tests compare against (Karpenter's CRDs and CEL rules, charts, IAM template) are never
# committed. They come from the cache `scripts/fetch_upstream.py` fills and verifies (its marker holds the sha256
# of the lock file it verified against), else from a `../shared/upstream/` checkout laid out the same way.
UPSTREAM_LOCK = REPO / "scripts" / "upstream.lock.json"
UPSTREAM_CACHE = REPO / ".upstream"
SHARED_UPSTREAM = REPO.parent / "shared" / "upstream"
FETCH_UPSTREAM = ".venv/bin/python scripts/fetch_upstream.py"


def load_fetch_upstream() -> ModuleType:
    """scripts/fetch_upstream.py as a module (a script, not part of the package): the one home of the cache
    layout and of its verification."""
    spec = importlib.util.spec_from_file_location("fetch_upstream", REPO / "scripts" / "fetch_upstream.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


fetch_upstream = load_fetch_upstream()
# EKS_KARPENTER_UPSTREAM points the tests at another folder: a missing path is how a fresh clone sees it
# (tests/project/test_fresh_clone.py runs the suite that way).
UPSTREAM_ENV = "EKS_KARPENTER_UPSTREAM"
UPSTREAM = (Path(os.environ[UPSTREAM_ENV]) if os.environ.get(UPSTREAM_ENV)
            else UPSTREAM_CACHE if fetch_upstream.is_verified(UPSTREAM_CACHE, UPSTREAM_LOCK) else SHARED_UPSTREAM)

INSTALL_PROMTOOL = "apt-get update && apt-get install -y --no-install-recommends prometheus"
"""The README's command installing Prometheus' `promtool` (Debian's and Ubuntu's `prometheus` package), which the
alert rule tests run; as root (CI's .ci/run), or under `sudo` (GitHub's runners)."""
MISSING_UPSTREAM = f"needs Karpenter's upstream files (CRDs, charts, IAM template): run `{FETCH_UPSTREAM}`"
# CI sets this: there a missing upstream file fails the run instead of skipping the comparisons quietly.
NO_SKIPS = "EKS_KARPENTER_NO_SKIPS"


requires_upstream = pytest.mark.usefixtures("upstream_files")


def upstream_file(name: str) -> Path:
    """One upstream file by cache path. Files the lock takes from a PyPI package (`libcloud/pricing.json`) come
    with the fetched cache only, never with ../shared/upstream: without it, the test is skipped with a reason
    naming the fetch command (failed under EKS_KARPENTER_NO_SKIPS=1)."""
    path = UPSTREAM / name
    if not path.is_file():
        why = f"needs the upstream file {name}: run `{FETCH_UPSTREAM}` (or `{FETCH_UPSTREAM} --from DIR`)"
        if os.environ.get(NO_SKIPS) == "1":
            pytest.fail(f"{why} ({NO_SKIPS}=1: upstream comparisons may not be skipped)", pytrace=False)
        pytest.skip(why)
    return path


@functools.cache
def run_python(code: str) -> str:
    """Run `code` in a fresh interpreter in the repository (no model built, nothing cached) and return its stdout,
    stripped."""
    return subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True, capture_output=True,
                          text=True).stdout.strip()


VALIDATE_PROD = ("from pathlib import Path\n"
                 "from eks_karpenter.platform.stack import load_stack_config\n"
                 "from eks_karpenter.config.stackfile import read_stack_file\n"
                 "path = Path('stacks/Pulumi.prod.yaml')\n"
                 "cfg = load_stack_config(read_stack_file(path, str(path), 'eks-karpenter').flat(), str(path))\n")
"""Code for `run_python`: validate the prod stack file as the program does, into `cfg`."""


def config_models() -> list[type[Model]]:
    """Every config model class: the stack sections' and the simulator's workload's."""

    def walk(cls: type[Model]) -> list[type[Model]]:
        return [cls, *(m for sub in cls.__subclasses__() for m in walk(sub))]

    return [m for m in walk(Model) if m is not Model]


def plan_stack(stack: str) -> PlanDocument:
    """The offline plan of a committed stack (cached: plans are deterministic)."""
    return plan_program(REPO, stack)


def invoke_tokens(doc: PlanDocument) -> list[str]:
    """The token of every invoke the plan made (repeats kept)."""
    return [i.token for i in doc.invokes]


def stack_config(stack: str) -> dict[str, Any]:
    """A committed stack file's `config:` block, as a fresh mutable copy."""
    body = yaml.safe_load((REPO / "stacks" / f"Pulumi.{stack}.yaml").read_text())
    return copy.deepcopy(body["config"])


def plan_config(config: dict[str, Any], tmp_path: Path, stack: str = "bad",
                invoke_results: dict[str, Any] | None = None) -> PlanResult:
    """Plan this repo's program with `config` as the stack file of a scratch project (`invoke_results`: the
    look-ups' answers, as for `run_plan`)."""
    (tmp_path / "stacks").mkdir(parents=True, exist_ok=True)
    (tmp_path / "Pulumi.yaml").write_text(yaml.safe_dump({
        "name": "eks-karpenter", "runtime": "python", "stackConfigDir": "stacks",
        "main": str(REPO / "infra" / "program.py"),
    }))
    (tmp_path / "stacks" / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump({"config": config}))
    return run_plan(tmp_path, stack, invoke_results=invoke_results)
