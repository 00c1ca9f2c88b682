"""Cost benchmark: `python -m infra cost --stack prod` end to end, and what admission adds to validating many pools.

Prints figures, asserts nothing:
- `cost` on each committed stack, in fresh processes (interpreter start and imports included), best of --repeat;
  target: under 2 s on prod;
- validating a stack with N pools, with and without the admission rules (no type admitted, minValues, the
  warnings), for pools sharing a few shapes and for pools all different; target: admission adds little to
  validation, since each distinct requirement set is evaluated once.

Run: .venv/bin/python -m benchmarks.cost [--repeat 3] [--pools 1000]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

import yaml

from benchmarks.results import write_result

REPO = Path(__file__).resolve().parent.parent


def best_of(repeat: int, run: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cost_cli(stack: str, repeat: int) -> tuple[float, float]:
    """Best wall seconds and best CPU seconds (user + system) of `cost` in a fresh process."""
    walls, cpus = [], []
    for _ in range(repeat):
        cpu, start = children_cpu(), time.perf_counter()
        subprocess.run([sys.executable, "-m", "infra", "cost", "--stack", stack, "--format", "json"], cwd=REPO,
                       check=True, capture_output=True)
        walls.append(time.perf_counter() - start)
        cpus.append(children_cpu() - cpu)
    return min(walls), min(cpus)


def flat_config(pools: list[dict[str, Any]]) -> dict[str, str]:
    body = yaml.safe_load((REPO / "stacks" / "Pulumi.dev.yaml").read_text())["config"]
    body["eks-karpenter:nodePools"] = pools
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in body.items()}


def validate(flat: dict[str, str], admission: bool) -> None:
    from eks_karpenter.catalogue.match import _admitted_shipped
    from eks_karpenter.platform.stack import load_stack_config

    _admitted_shipped.cache_clear()  # each run pays for its evaluations
    if admission:
        load_stack_config(flat, "bench")
        return
    with mock.patch("eks_karpenter.platform.nodepool.rules.admission_issues", return_value=[]):
        load_stack_config(flat, "bench")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--pools", type=int, default=1000)
    parser.add_argument("--write-result", action="store_true",
                        help="also write benchmarks/results/cost.md, the docs' source (docs/cost-and-scale.md)")
    args = parser.parse_args(argv)
    lines: list[str] = []

    def out(line: str = "") -> None:
        print(line, flush=True)
        lines.append(line)

    # On a shared machine wall time follows the load; CPU time is what the command itself costs.
    out(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    out(f"| stack | `cost` wall s | CPU s (best of {args.repeat}, fresh process) |")
    out("| --- | ---: | ---: |")
    for stack in ("dev", "prod", "brownfield"):
        wall, cpu = cost_cli(stack, args.repeat)
        out(f"| {stack} | {wall:.2f} | {cpu:.2f} |")

    n = args.pools
    shared = [{"name": f"p{i}", "minGeneration": 3 + i % 5, "limits": {"cpu": str(10 + i)}} for i in range(n)]
    distinct = [{"name": f"p{i}", "minCpu": 1 + i % 32, "maxCpu": 32 + i // 32, "limits": {"cpu": "100"}}
                for i in range(n)]
    out()
    out(f"| {n} pools | distinct requirement sets | validate s | with admission s | admission adds |")
    out("| --- | ---: | ---: | ---: | ---: |")
    for label, pools, shapes in (("shared shapes", shared, 5), ("all different", distinct, n)):
        flat = flat_config(pools)
        validate(flat, True)  # warm imports and the catalogue
        without = best_of(args.repeat, functools.partial(validate, flat, False))
        with_ = best_of(args.repeat, functools.partial(validate, flat, True))
        out(f"| {label} | {shapes} | {without:.2f} | {with_:.2f} | {with_ - without:+.2f} |")
    if args.write_result:
        write_result("cost", "python -m benchmarks.cost --write-result", "\n".join(lines))

if __name__ == "__main__":
    main()
