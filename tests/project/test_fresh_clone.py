"""A fresh clone has no upstream files (no verified `.upstream/` cache, no shared checkout beside it): the
README's test command must then skip the comparisons, never error. This runs the suite's collection and every
test module that reads upstream files with the upstream folder pointed at a missing path, and fails on any error
or failure, or on a skip that does not name the fetch command."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import FETCH_UPSTREAM, NO_SKIPS, REPO, UPSTREAM_ENV

# What marks a test module as reading upstream files.
READS_UPSTREAM = re.compile(r"\b(UPSTREAM|upstream_files?|upstream_module|requires_upstream|crd_validator)\b")


def upstream_modules() -> list[str]:
    here = Path(__file__).resolve()
    return sorted(str(p.relative_to(REPO)) for p in (REPO / "tests").rglob("test_*.py")
                  if p.resolve() != here and READS_UPSTREAM.search(p.read_text()))


def run_without_upstream(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != NO_SKIPS}
    env[UPSTREAM_ENV] = "/nonexistent/eks-karpenter-upstream"
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=3600)


def test_the_upstream_reading_modules_are_found() -> None:
    modules = upstream_modules()
    assert "tests/platform/karpenter/test_karpenter_values.py" in modules
    assert "tests/project/test_crd_validator.py" in modules
    assert len(modules) >= 8


@pytest.mark.slow
def test_the_whole_suite_collects_without_upstream_files() -> None:
    result = run_without_upstream("--collect-only", "-q")
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert not re.search(r"\berrors?\b", result.stdout.splitlines()[-1]), result.stdout[-4000:]


@pytest.mark.slow
def test_upstream_reading_tests_skip_with_the_fetch_command_without_upstream_files() -> None:
    result = run_without_upstream("-q", "-rfEs", *upstream_modules())
    problems = [line for line in result.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))]
    assert result.returncode == 0, "\n".join(problems) or result.stdout[-6000:] + result.stderr[-2000:]
    summary = result.stdout.strip().splitlines()[-1]
    assert "error" not in summary and "failed" not in summary, summary
    assert re.search(r"\d+ skipped", summary), summary
    # Each skip says how to get the files (pytest's -rs lines: `SKIPPED [n] file:line: reason`).
    reasons = [line for line in result.stdout.splitlines() if line.startswith("SKIPPED")]
    assert reasons and all(FETCH_UPSTREAM in line for line in reasons), [
        line for line in reasons if FETCH_UPSTREAM not in line]
