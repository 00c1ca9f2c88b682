"""Read this stack's config from the Pulumi runtime and validate it before anything is registered.

Values come from the runtime (what `pulumi up` or the offline plan handed the program). The stack file itself is
read too, with the same reader the offline plan uses, only to say on which line each problem was written; when
the file cannot be found, errors name key paths without lines.
"""

from __future__ import annotations

import os
from pathlib import Path

import pulumi
from pulumi.runtime import config as _runtime_config

from eks_karpenter.config.errors import ConfigError, Issue
from eks_karpenter.config.stack import StackConfig, load_stack_config
from eks_karpenter.config.stackfile import parse_yaml, read_stack_file

STACK_CONFIG_DIR = "stacks"


def stack_file(stack: str, config_dir: str = STACK_CONFIG_DIR) -> str:
    """The file a user edits for this stack (Pulumi.yaml sets `stackConfigDir: stacks`)."""
    return f"{config_dir}/Pulumi.{stack}.yaml" if config_dir not in ("", ".") else f"Pulumi.{stack}.yaml"


def _project_root(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        if (folder / "Pulumi.yaml").is_file():
            return folder
    return None


def locate_stack_file(project: str, stack: str) -> tuple[Path | None, str]:
    """The running stack's file and its name relative to the project. Pulumi runs a program from its project
    folder (the offline plan too), so the project is found from the working directory up."""
    root = _project_root(Path(os.getcwd()))
    if root is None:
        return None, stack_file(stack)
    try:
        project_file, _, _ = parse_yaml((root / "Pulumi.yaml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None, stack_file(stack)
    if not isinstance(project_file, dict) or project_file.get("name") != project:
        return None, stack_file(stack)
    config_dir = project_file.get("stackConfigDir")
    name = stack_file(stack, config_dir.strip("/") if isinstance(config_dir, str) else ".")
    return root / name, name


def read_stack_config() -> StackConfig:
    """The validated config of the running stack; raises `ConfigError` (a `pulumi.RunError`) when invalid."""
    # The runtime's full config map is read so that misspelt and misplaced keys are reported too.
    flat = dict(_runtime_config.CONFIG.get())
    project, stack = pulumi.get_project(), pulumi.get_stack()
    path, source = locate_stack_file(project, stack)
    file = read_stack_file(path, source, project) if path is not None and path.is_file() else None
    if file is not None and file.issues:
        raise file.error()
    lines = file.lines if file is not None else None
    try:
        return load_stack_config(flat, source, project=project, lines=lines)
    except ConfigError:
        raise
    except Exception as exc:  # a bug of ours must still read as one clean error, never a traceback
        raise ConfigError(source, [Issue((), f"could not be validated ({type(exc).__name__}: {exc}); please "
                                         "report this", None, False)], lines) from None
