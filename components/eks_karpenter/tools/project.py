"""The Pulumi project a command works on, shared by the command line and its `smoke` subcommand.

`--program DIR` names it, else the wrapper's default (`DEFAULTS`), else the current directory; its stack files are
read like the Pulumi CLI reads them (`tools/engine/runner.py`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from eks_karpenter.tools.engine.runner import ProgramProject, read_flat_config

if TYPE_CHECKING:
    from eks_karpenter.platform.stack import StackConfig

DEFAULTS: dict[str, Path | None] = {"program": None, "platform": None}
"""Defaults a wrapping command line may set (this repository's `python -m infra` sets both to its root)."""


def program_root(program: Path | None) -> Path:
    """The Pulumi project folder: `program`, else the wrapper's default, else the current directory."""
    return Path(program or DEFAULTS["program"] or Path.cwd())


def shown(path: Path, root: Path) -> str:
    """A file as the user names it (relative to the project folder when it is inside it)."""
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def load_project(program: Path | None) -> ProgramProject:
    """The project's Pulumi.yaml, read from its folder (resolved: files are shown relative to it)."""
    return ProgramProject.load(program_root(program).resolve())


def validated_stack_config(project: ProgramProject, stack: str) -> StackConfig:
    """A platform stack's validated config, read from its stack file; raises `ConfigError` naming the file."""
    from eks_karpenter.platform.stack import load_stack_config  # builds the config models: only commands that need it

    path = project.stack_file(stack)
    return load_stack_config(read_flat_config(path, project.name), shown(path, project.root), project=project.name)
