"""Each side of a plan diff is planned with its own code: a change to the library (a pin, a default, a resource's
name) shows in `diff --base`, a consumer can compare the installed library with a candidate, and two different
stacks are compared as two stacks."""

from __future__ import annotations

import copy
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import eks_karpenter
import pytest
import yaml
from eks_karpenter.tools.cli import main
from eks_karpenter.tools.engine import PlanDocument
from eks_karpenter.tools.engine.document import PLAN_FORMAT

from tests.support import REPO, plan_stack

LIBRARY = Path("components") / "eks_karpenter"


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=test", "-c", "user.email=test@example.com",
                           *args], check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("needs git and a git checkout of this repository")
    target = tmp_path_factory.mktemp("clone") / "repo"
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(target)], check=True)
    return target


@pytest.fixture
def library_change(clone: Path) -> Iterator[Callable[[str, Callable[[str], str]], str]]:
    """Commit an edit of one library file on a branch of the clone; yields the function, returns the base."""
    start = _git(clone, "rev-parse", "HEAD")

    def change(relative: str, edit: Callable[[str], str]) -> str:
        path = clone / LIBRARY / relative
        before = path.read_text()
        after = edit(before)
        assert after != before, f"the edit of {relative} changed nothing"
        path.write_text(after)
        _git(clone, "commit", "--quiet", "-am", f"change {relative}")
        return start

    yield change
    _git(clone, "checkout", "--quiet", "--detach", start)


def _diff_base(clone: Path, base: str, capsys: pytest.CaptureFixture[str], stack: str = "dev",
               status: int = 0) -> str:
    assert main(["diff", "--base", base, "--stack", stack, "--program", str(clone)]) == status
    return capsys.readouterr().out


@pytest.mark.slow
def test_a_pin_bump_in_the_library_shows(clone: Path, library_change: Callable[..., str],
                                         capsys: pytest.CaptureFixture[str]) -> None:
    def bump(text: str) -> str:
        return re.sub(r'("vpc-cni": "v\d+\.\d+\.\d+-eksbuild\.)(\d+)"', lambda m: f'{m[1]}{int(m[2]) + 1}"', text)

    base = library_change("versions.py", bump)
    out = _diff_base(clone, base, capsys)
    assert "No changes" not in out
    assert re.search(r"`addonVersion`: `\"v[\d.]+-eksbuild\.\d+\"` → `\"v[\d.]+-eksbuild\.\d+\"`", out), out


@pytest.mark.slow
def test_a_default_change_in_the_library_shows(clone: Path, library_change: Callable[..., str],
                                               capsys: pytest.CaptureFixture[str]) -> None:
    default = 'expire_after: Duration = "{}"'
    base = library_change("platform/nodepool/config.py",
                          lambda text: text.replace(default.format("720h"), default.format("336h")))
    out = _diff_base(clone, base, capsys)
    assert '`"720h"` → `"336h"`' in out, out


@pytest.mark.slow
def test_a_renamed_resource_in_the_library_shows(clone: Path, library_change: Callable[..., str],
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    base = library_change("platform/interruption/component.py",
                          lambda text: text.replace('aws.sqs.Queue(f"{name}-queue"', 'aws.sqs.Queue(f"{name}-sqs"'))
    # The queue keeps its name, so the new one would collide with the old one still there: refused (exit 3).
    out = _diff_base(clone, base, capsys, stack="prod", status=3)
    assert "No changes" not in out and "alias" in out
    assert re.search(r"\| [^|]* delete \| `aws:sqs/queue:Queue` \| `[^`]*-queue` \|", out), out
    assert re.search(r"\| [^|]* create \| `aws:sqs/queue:Queue` \| `[^`]*-sqs` \|", out), out


@pytest.mark.slow
def test_each_side_is_planned_by_its_own_engine(clone: Path, library_change: Callable[..., str],
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """The head's engine writes another document format; the base's own engine still writes its own."""
    base = library_change("tools/engine/document.py",
                          lambda text: text.replace(f"PLAN_FORMAT = {PLAN_FORMAT}\n", "PLAN_FORMAT = 99\n"))
    out = _diff_base(clone, base, capsys)
    assert f"different formats ({PLAN_FORMAT} and 99)" in out


def test_documents_say_their_format_and_older_ones_read_as_format_1() -> None:
    document = json.loads(PlanDocument(project="p", stack="s", resources=[]).to_json())
    assert document["format"] == PLAN_FORMAT
    del document["format"]
    assert PlanDocument.from_json(json.dumps(document)).format == 1


def test_a_format_change_between_the_sides_is_said(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    new = plan_stack("dev")
    old = json.loads(new.to_json())
    del old["format"]
    (tmp_path / "old.json").write_text(json.dumps(old))
    (tmp_path / "new.json").write_text(new.to_json())
    assert main(["diff", str(tmp_path / "old.json"), str(tmp_path / "new.json")]) == 0
    captured = capsys.readouterr()
    assert f"different formats (1 and {PLAN_FORMAT})" in captured.out
    assert "No changes" in captured.out


# --- diff --base of the stack files, on the clone -----------------------------


@pytest.mark.slow
def test_diff_base_head_with_clean_tree_says_no_changes(clone: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", "--base", "HEAD", "--stack", "dev", "--program", str(clone)]) == 0
    out = capsys.readouterr().out
    assert "No changes" in out
    assert f"Compared: `HEAD` (commit {_git(clone, 'rev-parse', 'HEAD')[:12]}) (old) → the working tree (new)." in out
    assert len(_git(clone, "worktree", "list").splitlines()) == 1, "the temporary worktree was not removed"


@pytest.mark.slow
def test_diff_base_shows_a_stack_file_change(clone: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stack_file = clone / "stacks" / "Pulumi.dev.yaml"
    original = stack_file.read_text()
    body = yaml.safe_load(original)
    body["config"]["eks-karpenter:tags"]["environment"] = "qa"
    try:
        stack_file.write_text(yaml.safe_dump(body))
        assert main(["diff", "--base", "HEAD", "--stack", "dev", "--program", str(clone)]) == 0
    finally:
        stack_file.write_text(original)
    out = capsys.readouterr().out
    assert "No changes" not in out and "`tags.environment`: `\"dev\"` → `\"qa\"`" in out
    assert "to replace" in out and "**0** to replace" in out


@pytest.mark.slow
def test_diff_base_plans_a_new_stack_as_all_created(clone: Path, capsys: pytest.CaptureFixture[str]) -> None:
    new_stack = clone / "stacks" / "Pulumi.qa.yaml"
    body = copy.deepcopy(yaml.safe_load((clone / "stacks" / "Pulumi.dev.yaml").read_text()))
    try:
        new_stack.write_text(yaml.safe_dump(body))
        assert main(["diff", "--base", "HEAD", "--stack", "qa", "--program", str(clone)]) == 0
    finally:
        new_stack.unlink()
    out = capsys.readouterr().out
    assert "**0** to update · **0** to replace · **0** to delete (0 unchanged)" in out


@pytest.mark.slow
def test_diff_base_unknown_ref_exits_1(clone: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", "--base", "no-such-branch", "--stack", "dev", "--program", str(clone)]) == 1
    err = capsys.readouterr().err
    assert "no commit 'no-such-branch'" in err and "fetch-depth: 0" in err


# --- two stacks ------------------------------------------------------------------------------------------------


def _as_other_stack(document: PlanDocument, stack: str) -> str:
    body = json.loads(document.to_json())
    text = json.dumps(body).replace(f"urn:pulumi:{document.stack}::", f"urn:pulumi:{stack}::")
    body = json.loads(text)
    body["stack"] = stack
    return json.dumps(body)


def test_two_stacks_are_compared_by_logical_name_without_refusals(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """dev against a copy of it named dev2 is no change at all; against brownfield (which adopts a VPC) it is a
    comparison, with no refusal that only applies to one stack changing over time."""
    dev = plan_stack("dev")
    (tmp_path / "dev.json").write_text(dev.to_json())
    (tmp_path / "dev2.json").write_text(_as_other_stack(dev, "dev2"))
    assert main(["diff", str(tmp_path / "dev.json"), str(tmp_path / "dev2.json")]) == 0
    out = capsys.readouterr().out
    assert "Comparing two stacks, `dev` and `dev2`" in out and f"No changes ({len(dev.resources)} resources" in out

    (tmp_path / "brownfield.json").write_text(plan_stack("brownfield").to_json())
    assert main(["diff", str(tmp_path / "dev.json"), str(tmp_path / "brownfield.json")]) == 0
    captured = capsys.readouterr()
    assert "Refused" not in captured.out and "refused" not in captured.err
    assert "Nodes replaced" not in captured.out
    assert "Protected, so" not in captured.out and "Stateful resources" not in captured.out


# --- a consumer reviews a library upgrade ----------------------------------------------------------------------


def _consumer_project(root: Path) -> Path:
    """A platform project outside the repository, as the template makes one, with this repository's dev stack."""
    project = root / "my-platform"
    (project / "stacks").mkdir(parents=True)
    (project / "Pulumi.yaml").write_text(yaml.safe_dump({
        "name": "my-platform", "runtime": "python", "main": "__main__.py", "stackConfigDir": "stacks"}))
    (project / "__main__.py").write_text(
        "from eks_karpenter import build_platform, read_stack_config\n\nbuild_platform(read_stack_config())\n")
    stack = (REPO / "stacks" / "Pulumi.dev.yaml").read_text().replace("eks-karpenter:", "my-platform:")
    (project / "stacks" / "Pulumi.dev.yaml").write_text(stack)
    return project


@pytest.mark.slow
def test_a_consumer_compares_the_installed_library_with_a_candidate(tmp_path: Path) -> None:
    """From a project outside the repository, with the library's command as a user runs it: the candidate is a
    checkout whose pin moved, and the diff shows what upgrading to it changes in the consumer's stack."""
    project = _consumer_project(tmp_path)
    candidate = tmp_path / "candidate"
    shutil.copytree(REPO / LIBRARY, candidate / LIBRARY, ignore=shutil.ignore_patterns("__pycache__"))
    versions = candidate / LIBRARY / "versions.py"
    versions.write_text(re.sub(r'("vpc-cni": "v\d+\.\d+\.\d+-eksbuild\.)(\d+)"',
                               lambda m: f'{m[1]}{int(m[2]) + 1}"', versions.read_text()))
    done = subprocess.run([sys.executable, "-m", "eks_karpenter.tools.cli", "diff", "--stack", "dev",
                           "--library", str(candidate)], cwd=project, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "### Plan diff: `my-platform` / `dev`" in done.stdout
    assert f"Compared: the installed library, eks-karpenter {eks_karpenter.__version__} (old) → the candidate " \
           f"library `{candidate}` (new)." in done.stdout
    assert re.search(r"`addonVersion`: `\"v[\d.]+-eksbuild\.\d+\"` → `\"v[\d.]+-eksbuild\.\d+\"`", done.stdout)


def test_a_candidate_pip_cannot_install_is_one_clean_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = _consumer_project(tmp_path)
    assert main(["diff", "--stack", "dev", "--program", str(project),
                 "--library", str(tmp_path / "no-such-wheel.whl")]) == 1
    err = capsys.readouterr().err
    assert "--library" in err and "pip cannot install it" in err and "Traceback" not in err
