"""Speed of `python -m infra simulate`: 1,000 pods across prod's 3 pools (target: under 5 s end to end).

Prints, for a grouped workload (a few deployments, 1,000 replicas in all) and for the worst case (1,000 single-pod
deployments of distinct sizes, so no two pods are identical): seconds to build the pools (admission against the
catalogue, cached and sorted by price per pool), to place the pods on them, and to place them on the fixed group;
then the wall time of the whole command in a fresh process (interpreter start and imports included).

Run: .venv/bin/python -m benchmarks.simulate [--repeat 3]
"""

from __future__ import annotations

import argparse
import functools
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from eks_karpenter.catalogue import load_catalogue
from eks_karpenter.platform.stack import load_stack_config
from eks_karpenter.tools.engine.runner import read_flat_config
from eks_karpenter.tools.simulate import parse_workload, pools_for_stack, schedule, schedule_fixed

from benchmarks.results import write_result

REPO = Path(__file__).resolve().parent.parent
STACK = "prod"
CRITICAL = {"nodeSelector": {"workload-tier": "critical"},
            "tolerations": [{"key": "workload-tier", "operator": "Equal", "value": "critical", "effect": "NoSchedule"}]}
ARM = {"architecture": "arm64",
       "tolerations": [{"key": "kubernetes.io/arch", "operator": "Exists", "effect": "NoSchedule"}]}


def grouped() -> dict[str, Any]:
    """Eight deployments, 1,000 pods: web and workers on general, APIs on critical, batch on arm64."""
    return {"deployments": [
        {"name": "web", "replicas": 300, "cpu": "250m", "memory": "512Mi"},
        {"name": "worker", "replicas": 150, "cpu": "1", "memory": "2Gi"},
        {"name": "cache", "replicas": 50, "cpu": "500m", "memory": "6Gi",
         "nodeSelector": {"karpenter.k8s.aws/instance-category": "r"}},
        {"name": "api", "replicas": 100, "cpu": "1", "memory": "1Gi", **CRITICAL},
        {"name": "payments", "replicas": 50, "cpu": "2", "memory": "4Gi", **CRITICAL},
        {"name": "batch", "replicas": 250, "cpu": "1", "memory": "2Gi", **ARM},
        {"name": "reports", "replicas": 50, "cpu": "4", "memory": "8Gi", **ARM},
        {"name": "cron", "replicas": 50, "cpu": "100m", "memory": "128Mi"},
    ], "daemonSets": [{"name": "aws-node", "cpu": "25m"}, {"name": "kube-proxy", "cpu": "100m"}]}


def ungrouped() -> dict[str, Any]:
    """1,000 one-replica deployments, every one a different size, a third per pool."""
    out = []
    for i in range(1000):
        extra = (CRITICAL, ARM, {})[i % 3]
        out.append({"name": f"d{i}", "replicas": 1, "cpu": f"{100 + i}m", "memory": f"{128 + i}Mi", **extra})
    return {"deployments": out}


def best(repeat: int, func: Callable[[], object]) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = func()
        times.append(time.perf_counter() - start)
    return min(times), result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--write-result", action="store_true",
                        help="also write benchmarks/results/simulate.md, the docs' source (docs/cost-and-scale.md)")
    args = parser.parse_args(argv)
    lines: list[str] = []

    def out(line: str) -> None:
        print(line, flush=True)
        lines.append(line)

    catalogue = load_catalogue()
    cfg = load_stack_config(read_flat_config(REPO / "stacks" / f"Pulumi.{STACK}.yaml", "eks-karpenter"), STACK)
    t_pools, pools = best(args.repeat, functools.partial(pools_for_stack, cfg, catalogue))
    assert isinstance(pools, list)
    out(f"stack {STACK}: {len(pools)} pools, "
          f"{', '.join(f'{p.name} {len(p.types)} priced types' for p in pools)}; pools built in {t_pools:.3f} s")
    for name, body in (("grouped", grouped()), ("ungrouped", ungrouped())):
        workload = parse_workload(json.dumps(body), name)
        t_k, _ = best(args.repeat, functools.partial(schedule, pools, workload, catalogue.label_keys))
        t_f, _ = best(args.repeat, functools.partial(schedule_fixed, catalogue.by_name["m5.large"], workload))
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as handle:
            json.dump(body, handle)  # JSON is YAML
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "infra", "simulate", "--stack", STACK, "--workload", handle.name,
                               "--format", "json"], capture_output=True, text=True, cwd=REPO, check=True)
        t_cli = time.perf_counter() - start
        Path(handle.name).unlink()
        doc = json.loads(proc.stdout)
        k = doc["karpenter"]
        out(f"{name}: {workload.pods} pods in {len(workload.deployments)} deployments: "
              f"Karpenter {k['nodeCount']} nodes ${k['hourly']}/h placed in {t_k:.3f} s; "
              f"fixed m5.large {doc['fixed']['nodes']} nodes in {t_f:.3f} s; "
              f"whole command {t_cli:.2f} s (target < 5 s); unschedulable {sum(u['pods'] for u in k['unschedulable'])}")
    if args.write_result:
        write_result("simulate", "python -m benchmarks.simulate --write-result", "\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
