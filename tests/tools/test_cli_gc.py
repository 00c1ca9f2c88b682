"""The command line raises the collector's thresholds only when it is the process's command, never in a caller's
process (tests, programs that call `cli.main([...])`)."""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator

import pytest
from eks_karpenter.tools import cli


@pytest.fixture
def thresholds() -> Iterator[None]:
    saved = gc.get_threshold()
    yield
    gc.set_threshold(*saved)


@pytest.mark.usefixtures("thresholds")
def test_a_command_run_as_the_process_raises_the_thresholds(monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    gc.set_threshold(700, 10, 10)
    monkeypatch.setattr(sys, "argv", ["eks-karpenter", "schema"])
    assert cli.main() == 0
    assert gc.get_threshold() == cli.COMMAND_GC_THRESHOLDS
    assert cli.COMMAND_GC_THRESHOLDS[0] > 700
    assert '"$schema"' in capsys.readouterr().out


@pytest.mark.usefixtures("thresholds")
def test_a_caller_keeps_its_own_thresholds(capsys: pytest.CaptureFixture[str]) -> None:
    gc.set_threshold(700, 10, 10)
    assert cli.main(["schema"]) == 0
    assert gc.get_threshold() == (700, 10, 10)
    capsys.readouterr()
