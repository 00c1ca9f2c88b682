"""Install benchmark: what a new user waits for, from the built wheel to a first offline plan.

Builds the wheel (offline, `pip wheel --no-build-isolation`), creates a fresh venv in a temporary folder,
`pip install`s the wheel there with the pinned constraints (dependencies from the package index or pip's cache,
as a user's install gets them), fills the Pulumi template (`templates/eks-karpenter`) as `pulumi new` would, and
times the venv's `eks-karpenter plan` of it: the first run (bytecode of the fresh install, every import) and a
second one. Wall-clock seconds of each step, from fresh processes; prints figures, asserts nothing.

Targets: wheel under 2 MB.
Run: .venv/bin/python -m benchmarks.install [--no-cache] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TEMPLATE = REPO / "templates" / "eks-karpenter"
PROJECT, STACK = "acme-platform", "dev"


def _run(command: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"failed: {' '.join(command)}\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
    return elapsed


def fill_template(dest: Path) -> None:
    """Copy the template, substitute ${PROJECT}/${DESCRIPTION} and write each prompt's default to the stack file."""
    import yaml

    shutil.copytree(TEMPLATE, dest, ignore=shutil.ignore_patterns("__pycache__", "venv"))
    for path in dest.rglob("*"):
        if path.is_file():
            path.write_text(path.read_text().replace("${PROJECT}", PROJECT).replace("${DESCRIPTION}", "benchmark"))
    prompts = yaml.safe_load((dest / "Pulumi.yaml").read_text())["template"]["config"]
    config = {(k if ":" in k else f"{PROJECT}:{k}"): str(p["default"]) for k, p in prompts.items()}
    (dest / f"Pulumi.{STACK}.yaml").write_text(yaml.safe_dump({"config": config}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--no-cache", action="store_true", help="pip install without pip's cache (every "
                        "dependency downloaded)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (printed)")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="eks-karpenter-install-"))
    try:
        build = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                      "-q", "-w", str(work / "dist"), str(REPO)])
        [wheel] = (work / "dist").glob("eks_karpenter-*.whl")
        venv = work / "venv"
        create = _run([sys.executable, "-m", "venv", str(venv)])
        # Only this venv: no PYTHONPATH or user site, so nothing of the dev venv or the repository is used.
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
        env.update(PYTHONNOUSERSITE="1", VIRTUAL_ENV=str(venv))
        install = _run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                        "-c", str(REPO / "constraints.txt"), *(["--no-cache-dir"] if args.no_cache else []),
                        str(wheel)], cwd=work, env=env)
        project = work / "project"
        fill_template(project)
        command = [str(venv / "bin" / "eks-karpenter"), "plan", "--stack", STACK, "--format", "json"]
        first = _run(command, cwd=project, env=env)
        second = _run(command, cwd=project, env=env)
        plan = json.loads(subprocess.run(command, cwd=project, env=env, capture_output=True, text=True,
                                         check=True).stdout)
        site = next((venv / "lib").glob("python3*/site-packages"))
        installed_mb = sum(p.stat().st_size for p in site.rglob("*") if p.is_file()) / 1e6
        cpus = os.cpu_count() or 1
        print(f"eks-karpenter install benchmark ({cpus} cores, {platform.processor() or platform.machine()}, "
              f"Python {platform.python_version()}; pip cache {'off' if args.no_cache else 'on'})")
        print(f"wheel                {wheel.name}: {wheel.stat().st_size / 1e6:.2f} MB (target < 2 MB)")
        print(f"build wheel          {build:6.1f} s (offline, --no-build-isolation)")
        print(f"create venv          {create:6.1f} s")
        print(f"pip install          {install:6.1f} s (wheel + pinned dependencies; site-packages "
              f"{installed_mb:.0f} MB)")
        print(f"first offline plan   {first:6.1f} s (template project, {len(plan['resources'])} resources)")
        print(f"second offline plan  {second:6.1f} s")
        print(f"total to first plan  {create + install + first:6.1f} s (venv + install + plan)")
    finally:
        if args.keep:
            print(f"kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
