"""Plan a stack as it was at a git ref: the base side of a pull request's plan diff.

The ref is checked out into a temporary `git worktree` (removed afterwards; the caller's checkout is never
touched) and planned there with the engine that is running now, so both sides of a diff are produced the same
way. Each side runs its own tree's code: the packages at the root of the tree (`infra`, `components`, ...) are
imported from that tree while it is planned, not from whichever copy happens to be installed.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from eks_karpenter.tools.engine.document import PlanDocument
from eks_karpenter.tools.engine.runner import PlanError, ProgramProject, plan_program

# The engine planning both sides stays the one already imported (`eks_karpenter.tools.engine.*` is never swapped out).
_KEEP = "eks_karpenter.tools.engine"


def plan_at_ref(program: Path, stack: str, ref: str) -> PlanDocument:
    """Plan `stack` of the project at `program` as committed at `ref` (a branch, tag or commit).

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
            return plan_in_tree(base, stack, tree)
        except PlanError as exc:
            raise PlanError(f"at {ref}: {exc}") from None
        except Exception as exc:  # the base's own code failed: say where, without a traceback through runpy
            raise PlanError(f"planning stack {stack!r} at {ref} failed: {type(exc).__name__}: {exc}") from None
        finally:
            _git(top, "worktree", "remove", "--force", str(tree))


def plan_in_tree(program: Path, stack: str, tree: Path | None = None) -> PlanDocument:
    """Plan with the top-level packages of `tree` (default: the program's git root or folder) imported from it."""
    root = (tree or _top_or_self(program)).resolve()
    with _tree_imports(root):
        return plan_program(program, stack)


@contextmanager
def _tree_imports(root: Path) -> Iterator[None]:
    packages = {p.name for p in root.iterdir() if (p / "__init__.py").is_file()}
    saved_modules = dict(sys.modules)
    saved_path = list(sys.path)
    for name in list(sys.modules):
        if name.split(".")[0] in packages and not (name == _KEEP or name.startswith(_KEEP + ".")):
            del sys.modules[name]
    sys.path.insert(0, str(root))
    try:
        yield
    finally:
        sys.path[:] = saved_path
        # Forget the tree's own modules; keep third-party ones it loaded (pulumi_aws registers itself once).
        for name in list(sys.modules):
            if name.split(".")[0] in packages and name not in saved_modules:
                del sys.modules[name]
        sys.modules.update({k: v for k, v in saved_modules.items() if k.split(".")[0] in packages})


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
