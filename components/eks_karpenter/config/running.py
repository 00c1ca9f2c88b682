"""The Pulumi project and its stack files, as the Pulumi CLI finds them: `Pulumi.yaml`'s `name`, `main` and
`stackConfigDir`, then `<stackConfigDir>/Pulumi.<stack>.yaml`. The one reader of `Pulumi.yaml`: the running
program (`locate_stack_file`, so `platform/stack.py` can say on which line each problem was written) and the
command line (`tools/engine/runner.py`) both use it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from eks_karpenter.config.stackfile import parse_yaml

PROJECT_FILE = "Pulumi.yaml"


class ProjectFileError(ValueError):
    """A folder's `Pulumi.yaml` is missing, unreadable, or not a Pulumi project file; the message says which."""


@dataclass(frozen=True)
class PulumiProject:
    """What `Pulumi.yaml` says about a program: its name, entry file and stack config folder."""

    root: Path
    name: str
    main: Path
    stack_config_dir: Path

    def stack_file(self, stack: str) -> Path:
        return self.stack_config_dir / f"Pulumi.{stack}.yaml"

    def shown(self, path: Path) -> str:
        """A file as the user names it: relative to the project folder when it is inside it."""
        try:
            return str(path.relative_to(self.root))
        except ValueError:
            return str(path)


def read_project(root: Path) -> PulumiProject:
    """The project whose `Pulumi.yaml` is in `root`; raises `ProjectFileError` naming the file."""
    project_file = root / PROJECT_FILE
    if not project_file.is_file():
        raise ProjectFileError(f"{project_file}: no Pulumi.yaml here: --program must name a Pulumi project folder")
    try:
        body, _, problems = parse_yaml(project_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ProjectFileError(f"{project_file}: cannot read it ({exc})") from None
    if problems or not isinstance(body, dict) or not isinstance(body.get("name"), str):
        raise ProjectFileError(f"{project_file}: not a Pulumi project file (a mapping with a `name:`)")
    main = root / str(body.get("main") or ".")
    if main.is_dir():
        main = main / "__main__.py"
    return PulumiProject(root=root, name=body["name"], main=main,
                         stack_config_dir=root / str(body.get("stackConfigDir") or "."))


def _project_root(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        if (folder / PROJECT_FILE).is_file():
            return folder
    return None


def locate_stack_file(project: str, stack: str) -> tuple[Path | None, str]:
    """The running stack's file and its name relative to the project. Pulumi runs a program from its project
    folder (the offline plan too), so the project is found from the working directory up; without it (or with
    another project's), the file is named as this repository lays it out, `stacks/Pulumi.<stack>.yaml`."""
    root = _project_root(Path(os.getcwd()))
    try:
        found = read_project(root) if root is not None else None
    except ProjectFileError:
        found = None
    if found is None or found.name != project:
        return None, f"stacks/Pulumi.{stack}.yaml"
    path = found.stack_file(stack)
    return path, found.shown(path)
