"""Plan a stack with a given tree's or library's own code: the two sides of a plan diff.

Each side is planned in a process of its own, with its own code first on the import path, so a change to the
library (a pin in `versions.py`, a default, a renamed resource) shows in the diff as well as a change to a stack
file:

- `plan_at_ref`: the project as committed at a git ref, checked out into a temporary `git worktree` (removed
  afterwards; the caller's checkout is never touched). When that tree holds the library's source
  (`components/eks_karpenter`, as this repository does), the library, its engine and its mocks are that tree's;
  a project that installs the library (a consumer, a project made from the template) plans with the installed
  one on both sides;
- `plan_in_tree`: the working tree the same way;
- `plan_with_library`: the working tree's program and stack files with another version of the library (a
  wheel, a checkout, a pip requirement): what a consumer reviews before it upgrades.

Each process writes a `plan --format json` document; the format each side wrote is kept in the document
(`PlanDocument.format`), so a diff can say when the two differ.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from eks_karpenter.tools.engine.document import PlanDocument
from eks_karpenter.tools.engine.runner import PlanError, ProgramProject

LIBRARY = Path("components")
"""Where a tree that holds the library's source keeps it (this repository's layout)."""
_CLI_MODULES = ("eks_karpenter.tools.cli", "eks_karpenter.cli")
"""The command line's module, newest layout first: a base tree is planned with its own."""
_STDERR_LINES = 12
"""How much of a failed side's error output the message carries (its last lines: the error, not the noise)."""


def plan_at_ref(program: Path, stack: str, ref: str) -> PlanDocument:
    """Plan `stack` of the project at `program` as committed at `ref` (a branch, tag or commit), with that
    commit's own code.

    A stack that has no stack file at `ref` (added by the change under review) plans as empty, so the diff
    shows everything as created.
    """
    program = program.resolve()
    top = Path(_git(program, "rev-parse", "--show-toplevel")).resolve()
    inside = program.relative_to(top)
    commit = _git(top, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}",
                  what=f"no commit {ref!r} in {top} (a CI checkout needs the base branch: fetch-depth: 0)")
    with tempfile.TemporaryDirectory(prefix="plan-base-") as tmp:
        tree = Path(tmp) / "tree"
        _git(top, "worktree", "add", "--detach", "--quiet", str(tree), commit)
        try:
            base = tree / inside
            project = ProgramProject.load(base)
            if not project.stack_file(stack).is_file():
                return PlanDocument(project=project.name, stack=stack, resources=[])
            return _plan_process(base, stack, _tree_paths(tree), side=f"at {ref}")
        except PlanError as exc:
            message = str(exc)
            raise PlanError(message if message.startswith(f"at {ref}") else f"at {ref}: {message}") from None
        finally:
            _git(top, "worktree", "remove", "--force", str(tree))


def describe_ref(program: Path, ref: str) -> str:
    """`ref` as a diff header names it: `origin/main` (commit 1a2b3c4d5e6f), the ref alone when git cannot
    resolve it (planning it then fails with the reason)."""
    try:
        commit = _git(program.resolve(), "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except PlanError:
        return f"`{ref}`"
    return f"`{ref}`" if commit.startswith(ref) else f"`{ref}` (commit {commit[:12]})"


def plan_in_tree(program: Path, stack: str, tree: Path | None = None) -> PlanDocument:
    """Plan with `tree`'s own code (default: the program's git root, else its folder) first on the import path."""
    root = (tree or _top_or_self(program)).resolve()
    return _plan_process(program.resolve(), stack, _tree_paths(root), side=f"in {program}")


def plan_with_library(program: Path, stack: str, candidate: str) -> PlanDocument:
    """Plan the program's stack with `candidate` as the library instead of the installed one.

    `candidate` is a checkout of the library (a folder holding `components/eks_karpenter`, or the package folder
    itself), else anything `pip install` takes: a wheel, a source folder, a git URL (the library is not on PyPI:
    a bare `eks-karpenter==X.Y.Z` would resolve against a public index, where anyone may own that name). It is
    installed without its dependencies into a scratch folder that goes first on the import path, so it plans
    with the dependencies installed now; a candidate that needs newer ones says so when it fails to import.
    """
    program = program.resolve()
    folder = Path(candidate).expanduser()
    for library in (folder / LIBRARY, folder):
        if (library / "eks_karpenter" / "__init__.py").is_file():
            return _plan_process(program, stack, [library.resolve()], side=f"with the library at {candidate}")
    with tempfile.TemporaryDirectory(prefix="plan-library-") as tmp:
        target = Path(tmp) / "site"
        done = subprocess.run(
            [sys.executable, "-m", "pip", "install", "--no-deps", "--quiet", "--disable-pip-version-check",
             "--target", str(target), candidate],
            capture_output=True, text=True, check=False, env={**os.environ, "PIP_NO_INPUT": "1"})
        if done.returncode != 0:
            raise PlanError(f"--library {candidate}: pip cannot install it: {_tail(done.stderr or done.stdout)}")
        return _plan_process(program, stack, [target], side=f"with the library {candidate}")


def _tree_paths(root: Path) -> list[Path]:
    """The import path entries that make a tree's own code win: its library source (if it holds one), then
    its root (the program's own packages, such as this repository's `infra`)."""
    library = root / LIBRARY
    return [library, root] if (library / "eks_karpenter" / "__init__.py").is_file() else [root]


def _cli_module(paths: list[Path]) -> str:
    for module in _CLI_MODULES:
        relative = Path(*module.split(".")).with_suffix(".py")
        if any((entry / relative).is_file() for entry in paths):
            return module
    return _CLI_MODULES[0]  # the installed library's


def _plan_process(program: Path, stack: str, paths: list[Path], side: str) -> PlanDocument:
    """`plan --format json` in a process of its own, with `paths` first on its import path."""
    inherited = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*map(str, paths), *inherited])}
    command = [sys.executable, "-m", _cli_module(paths), "plan", "--stack", stack, "--program", str(program),
               "--format", "json"]
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env, cwd=program)
    if done.returncode != 0:
        raise PlanError(f"planning stack {stack!r} {side} failed: {_tail(done.stderr)}")
    try:
        return PlanDocument.from_json(done.stdout)
    except (ValueError, KeyError, TypeError) as exc:
        raise PlanError(f"planning stack {stack!r} {side} wrote no plan document ({exc})") from None


def _tail(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return "\n".join(lines[-_STDERR_LINES:]) or "no error output"


def _top_or_self(program: Path) -> Path:
    try:
        return Path(_git(program, "rev-parse", "--show-toplevel"))
    except PlanError:
        return program


def _git(cwd: Path, *args: str, what: str | None = None) -> str:
    try:
        done = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise PlanError("git is not installed: --base needs it") from None
    if done.returncode != 0:
        detail = done.stderr.strip() or f"exit code {done.returncode}"
        raise PlanError(what or f"git {' '.join(args)}: {detail}")
    return done.stdout.strip()
