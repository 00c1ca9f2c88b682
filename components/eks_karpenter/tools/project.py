"""The Pulumi project a command works on, shared by the command line and its `smoke` subcommand.

`--program DIR` names it, else the wrapper's default (`DEFAULTS`), else the current directory; its `Pulumi.yaml` and
stack files are read like the Pulumi CLI reads them (`config/running.py`, `config/stackfile.py`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from eks_karpenter.tools.engine.runner import ProgramProject, flat_config

if TYPE_CHECKING:
    from eks_karpenter.platform.stack import StackConfig

DEFAULTS: dict[str, Path | None] = {"program": None, "platform": None}
"""Defaults a wrapping command line may set (this repository's `python -m infra` sets both to its root)."""


def program_root(program: Path | None) -> Path:
    """The Pulumi project folder: `program`, else the wrapper's default, else the current directory."""
    return Path(program or DEFAULTS["program"] or Path.cwd())


def load_project(program: Path | None) -> ProgramProject:
    """The project's Pulumi.yaml, read from its folder (resolved: files are shown relative to it)."""
    return ProgramProject.load(program_root(program).resolve())


def validated_stack_config(project: ProgramProject, stack: str) -> StackConfig:
    """A platform stack's validated config, read from its stack file; raises `ConfigError` naming the file."""
    from eks_karpenter.platform.stack import load_stack_config  # builds the config models: only commands that need it

    return load_stack_config(flat_config(project, stack), project.shown(project.stack_file(stack)),
                             project=project.name)
