"""Unusable command lines give one clean error naming the argument, exit code 1, and nothing on stdout."""

from __future__ import annotations

from pathlib import Path

import pytest
from eks_karpenter.tools import cli
from eks_karpenter.tools.cli import main


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def no_planning(monkeypatch: pytest.MonkeyPatch) -> None:
    """Argument errors must be found before the (slow) plan runs."""
    def refuse(*_: object) -> None:
        raise AssertionError("planned although the command line was unusable")
    monkeypatch.setattr(cli, "plan_with_references", refuse)


def test_out_pointing_at_an_existing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          no_planning: None) -> None:
    target = tmp_path / "plan.txt"
    target.write_text("keep me")
    code, out, err = _run(["plan", "--stack", "dev", "--out", str(target)], capsys)
    assert (code, out) == (1, "")
    assert err.startswith(f"error: --out {target}: is a file") and "Traceback" not in err
    assert target.read_text() == "keep me"


def test_out_under_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str], no_planning: None) -> None:
    (tmp_path / "f").write_text("")
    code, out, err = _run(["plan", "--stack", "dev", "--out", str(tmp_path / "f" / "sub")], capsys)
    assert (code, out) == (1, "")
    assert f"is under {tmp_path / 'f'}, which is a file" in err


def test_out_that_cannot_be_written(tmp_path: Path, capsys: pytest.CaptureFixture[str], no_planning: None,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # Tests may run as root, for whom permissions do not apply: fail the probe write the way EACCES would.
    def denied(*_: object, **__: object) -> None:
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(cli.tempfile, "TemporaryFile", denied)
    code, out, err = _run(["plan", "--stack", "dev", "--out", str(tmp_path / "ro")], capsys)
    assert (code, out) == (1, "")
    assert err.strip() == f"error: --out {tmp_path / 'ro'}: cannot write there (Permission denied)"


def test_out_on_a_path_the_system_refuses(capsys: pytest.CaptureFixture[str], no_planning: None) -> None:
    code, out, err = _run(["plan", "--stack", "dev", "--out", "/proc/no-such-dir/out"], capsys)
    assert (code, out) == (1, "") and err.startswith("error: --out /proc/no-such-dir/out: cannot write there")


@pytest.mark.parametrize(("argv", "message"), [
    (["plan", "--stack", "dev", "--format", "xml"], "argument --format: invalid choice: 'xml'"),
    (["plan"], "the following arguments are required: --stack"),
    (["plan", "--stack", "../dev"], "--stack '../dev': a stack name is"),
    (["frobnicate"], "invalid choice: 'frobnicate'"),
    (["plan", "--stack", "nope"], "Pulumi.nope.yaml: no such stack file"),
    (["plan", "--stack", "dev", "--program", "/nonexistent/project"], "/nonexistent/project/Pulumi.yaml: no "
                                                                     "Pulumi.yaml here"),
])
def test_unusable_arguments_exit_1_with_one_line(argv: list[str], message: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(argv, capsys)
    assert (code, out) == (1, "")
    assert message in err and err.startswith("error: ") and len(err.strip().splitlines()) == 1, err


def test_the_command_line_and_smoke_share_one_project_module(tmp_path: Path) -> None:
    """tools/project.py is the one home of what `cli` and `smoke` both need (it broke their import loop): a
    wrapper's defaults set through `cli.DEFAULTS` are the ones smoke reads, and files are shown as users name
    them (`config.running.PulumiProject.shown`)."""
    from eks_karpenter.tools import project

    assert cli.DEFAULTS is project.DEFAULTS
    assert project.program_root(tmp_path) == tmp_path
    assert project.program_root(None) == project.DEFAULTS["program"]  # tests/support sets it to the repository
    (tmp_path / "Pulumi.yaml").write_text("name: demo\nstackConfigDir: stacks\n")
    loaded = project.load_project(tmp_path)
    assert loaded.shown(loaded.stack_file("dev")) == "stacks/Pulumi.dev.yaml"
    assert loaded.shown(Path("/elsewhere/Pulumi.dev.yaml")) == "/elsewhere/Pulumi.dev.yaml"
