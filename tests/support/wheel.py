"""Build the wheel once per test session, offline: `pip wheel --no-build-isolation` with the dev venv's hatchling
(pinned in constraints.txt, part of the `dev` extra), so no build dependency is fetched."""

from __future__ import annotations

import atexit
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

from tests.support import REPO

_BUILT: dict[str, Path] = {}


def built_wheel() -> Path:
    """The path of `eks_karpenter-<version>-py3-none-any.whl` built from this checkout (cached for the session)."""
    if "wheel" not in _BUILT:
        if importlib.util.find_spec("hatchling") is None:
            raise AssertionError("hatchling (the build backend, in the dev extra) is not installed: run "
                                 "`.venv/bin/pip install -c constraints.txt -e '.[dev]'`")
        out = Path(tempfile.mkdtemp(prefix="eks-karpenter-wheel-"))
        atexit.register(shutil.rmtree, out, ignore_errors=True)
        # A copy without build leftovers would be slower; hatchling only packs `components/eks_karpenter`.
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
             "--disable-pip-version-check", "-q", "-w", str(out), str(REPO)],
            capture_output=True, text=True, env={**os.environ, "PIP_NO_INPUT": "1"}, timeout=300)
        assert proc.returncode == 0, f"pip wheel failed:\n{proc.stdout}\n{proc.stderr}"
        [wheel] = out.glob("eks_karpenter-*-py3-none-any.whl")
        _BUILT["wheel"] = wheel
    return _BUILT["wheel"]


def dev_site_packages() -> Path:
    """The dev venv's site-packages: where the declared dependencies (pulumi, pydantic, ...) are installed."""
    return Path(sysconfig.get_paths()["purelib"])


def install_wheel(venv: Path) -> dict[str, str]:
    """A fresh venv at `venv` with only the built wheel installed (`--no-deps`), and the environment that makes
    the dependencies importable from the dev venv's site-packages as a plain path entry: its `.pth` files, among
    them the editable install of this checkout, are not processed, so nothing of the repository leaks in."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index",
                    "--disable-pip-version-check", "-q", str(built_wheel())], check=True, capture_output=True,
                   timeout=300)
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "PYTHONSTARTUP") and not k.startswith("PIP_")}
    env.update(PYTHONPATH=str(dev_site_packages()), PYTHONNOUSERSITE="1", VIRTUAL_ENV=str(venv),
               PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}")
    return env


def copy_project(source: Path, dest: Path) -> Path:
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns("__pycache__", ".venv", "venv", "*.pyc"))
    return dest


def _requirements_closure(requires: list[str]) -> set[str]:
    """The distributions (normalized names) that `requires` (Requires-Dist lines, no extra asked for) pull in,
    resolved against what the dev venv has installed."""
    from importlib import metadata

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    found: set[str] = set()
    todo = list(requires)
    while todo:
        req = Requirement(todo.pop())
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        name = canonicalize_name(req.name)
        if name in found:
            continue
        found.add(name)
        todo.extend(metadata.distribution(name).requires or [])
    return found


def declared_site(dest: Path) -> tuple[Path, set[str]]:
    """A site directory at `dest` holding only what the built wheel's declared dependencies (no extras) pull in,
    linked from the dev venv: an install of the library from its metadata alone, offline. Returns the directory
    and the distributions in it."""
    from email.parser import Parser
    from importlib import metadata
    from zipfile import ZipFile

    from packaging.utils import canonicalize_name

    with ZipFile(built_wheel()) as wheel:
        [meta] = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
        requires = Parser().parsestr(wheel.read(meta).decode()).get_all("Requires-Dist") or []
    names = _requirements_closure([r for r in requires if "extra ==" not in r])
    dest.mkdir(parents=True)
    site = dev_site_packages()
    for dist in metadata.distributions():
        if canonicalize_name(dist.metadata["Name"]) not in names:
            continue
        for top in {Path(str(f)).parts[0] for f in dist.files or []}:
            if top == ".." or top.endswith(".pth") or (dest / top).exists() or not (site / top).exists():
                continue
            (dest / top).symlink_to(site / top)
    return dest, names
