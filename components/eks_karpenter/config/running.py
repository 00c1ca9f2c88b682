"""Where the running stack's file is: the project folder found from the working directory up, and the stack
file its `Pulumi.yaml` names (`platform/stack.py` reads it, only to say on which line each problem was written).
"""

from __future__ import annotations

import os
from pathlib import Path

from eks_karpenter.config.stackfile import parse_yaml

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
