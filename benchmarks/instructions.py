"""The scale benchmark's comparison counted in instructions: the same plans and floors, free of the machine's noise.

Time on this shared machine moves by a fifth between runs of the same code, more than the 15% a target allows.
This script runs each side of `benchmarks.scale` (platform, floor, bare floor) once under valgrind's cachegrind
(`--cache-sim=no`: instruction counts only) and prints the instructions each plan executed: a count that is the
same run after run, so a ratio here moves only when the code does. It is the work done, not the time taken: cache
misses, page faults and the collector's walks over a larger heap cost time that no count shows, so the verdicts
stay with `benchmarks.scale`'s CPU seconds; this says how much of a gap there is the work's.

Each figure is a plan's own instructions: the process that plans stops as the plan returns, and one that loads
the providers, the engine, the library and the side's inputs and then stops is counted too, and subtracted.
Needs `valgrind` on the PATH; about a minute per side at 0 pairs and three at 100 (valgrind runs code some fifty
times slower), two sides at a time.
Run: .venv/bin/python -m benchmarks.instructions [--sizes 0 100] [--write-result]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from benchmarks.results import machine, write_result
from benchmarks.scale import REPO, _env

SIDES = ("platform", "floor", "bare")


def count(kind: str, n: int, plan: str, cache: str, stop: str) -> int:
    """Instructions one child process (`benchmarks.scale --child`) executed, stopping after `stop` (setup or plan):
    nothing written or printed after the plan, which the count would take for the plan's."""
    child = ["-m", "benchmarks.scale", "--child", kind, str(n), plan, "--stop", stop]
    env = {**_env(cache), "PYTHONHASHSEED": "0"}  # the same hashes, so the same dict and set work, every run
    done = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
                           sys.executable, *child], cwd=REPO, env=env, capture_output=True, text=True, check=True)
    found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    if found is None:
        raise RuntimeError(f"no instruction count in valgrind's output:\n{done.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def plan_instructions(kind: str, n: int, plan: str, cache: str) -> int:
    return count(kind, n, plan, cache, "plan") - count(kind, n, plan, cache, "setup")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[0, 100])
    parser.add_argument("--write-result", action="store_true",
                        help="also write benchmarks/results/instructions.md, the docs' source (docs/cost-and-scale.md)")
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("valgrind is not on the PATH", file=sys.stderr)
        return 2
    lines = [f"Machine: {machine()}. Instructions (billions) of each plan, counted by cachegrind.", "",
             "| N | floor | ours | ratio | bare floor | ratio to bare |", "| ---: | ---: | ---: | ---: | ---: | ---: |"]
    with tempfile.TemporaryDirectory(prefix="instructions-pyc-") as cache:
        for n in sorted(args.sizes):
            plan = str(Path(cache) / f"plan-{n}.json")
            # The platform's plan first (byte-compiled modules, and the floors' input), then every side counted.
            subprocess.run([sys.executable, "-m", "benchmarks.scale", "--child", "platform", str(n), plan], cwd=REPO,
                           env=_env(cache), check=True, capture_output=True)
            with ThreadPoolExecutor(max_workers=max(1, min(2, os.cpu_count() or 1))) as pool:
                counts = pool.map(plan_instructions, SIDES, [n] * len(SIDES), [plan] * len(SIDES),
                                  [cache] * len(SIDES))
                counted = dict(zip(SIDES, counts, strict=True))
            ours, floor, bare = (counted[side] / 1e9 for side in SIDES)
            lines.append(f"| {n} | {floor:.3f} | {ours:.3f} | {ours / floor:.2f} | {bare:.3f} | {ours / bare:.2f} |")
    print("\n".join(lines))
    if args.write_result:
        write_result("instructions", "python -m benchmarks.instructions --write-result", "\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
