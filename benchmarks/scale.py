"""Scale benchmark: the prod stack plus N NodePool + EC2NodeClass pairs, against the Pulumi SDK's own floor.

The floor is measured in the same run: a bare program (no config, no components) that registers the same number
of resources as the platform's plan, under the same mocks, the pairs' objects being the very manifests the
platform renders. Each figure comes from a fresh process; floor and platform runs alternate (A B A B ...) so a
noisy neighbour hits both, and medians are reported. Times are the process's CPU seconds for the plan (imports of
the providers and of the engine happen before the clock starts, in both); peak RSS is the process's.

Columns: N; floor and platform seconds; their ratio; milliseconds per added pair ((t(N) - t(0)) / N, platform);
the same for the floor; peak RSS ratio; provider invokes per added pair. A last line compares `import
components` plus what `eks_karpenter.platform` imports with importing the providers it wraps.

Targets: ratio <= 1.15 at every N, ms per added pair flat from 100 to 1,000, RSS ratio <= 1.1 at 1,000, zero
invokes per pair, import ratio <= 1.2.
Run: .venv/bin/python -m benchmarks.scale [--sizes 0 100 300 1000] [--repeat 3] [--markdown]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.results import machine, write_result

REPO = Path(__file__).resolve().parent.parent
STACK = "prod"
# The provider modules the platform's resources come from: what "the providers it wraps" means here. The
# providers' packages load their modules lazily, so each is touched to load it.
PROVIDERS = ("import pulumi, pulumi_aws as aws, pulumi_eks as eks, pulumi_kubernetes as k8s; aws.ec2.Vpc; "
             "aws.eks.Addon; aws.iam.Role; aws.kms.Key; aws.sqs.Queue; aws.cloudwatch.EventRule; eks.Cluster; "
             "eks.ManagedNodeGroup; k8s.helm.v3.Release; k8s.apiextensions.CustomResource; k8s.Provider; "
             "k8s.core.v1.Namespace; k8s.meta.v1.ObjectMetaArgs; k8s.storage.v1.StorageClass")
LIBRARY = "import eks_karpenter; import eks_karpenter.platform"
# What importing the providers costs a program before it touches a resource type (their modules load lazily).
PROVIDER_PACKAGES = "import pulumi, pulumi_aws, pulumi_eks, pulumi_kubernetes"

# The same registrations as the platform's plan (type, inputs), flat: no config, no components, no outputs.
FLOOR_PROGRAM = '''
import json
from pathlib import Path

import pulumi

for i, r in enumerate(json.loads((Path(__file__).parent / "plan.json").read_text())["resources"]):
    type_ = "floor:index:Provider" if r["type"].startswith("pulumi:providers:") else r["type"]
    pulumi.CustomResource(type_, f"r{i}", r["inputs"])
'''

HEADER = ("| N | floor s | ours s | ratio | ms/added pair | floor ms/added pair | RSS ratio | invokes/pair |",
          "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")


def pairs_config(n: int) -> dict[str, str]:
    """Stack-config overrides: the prod stack's own classes and pools plus N pairs, each pool on its class."""
    import yaml

    config = yaml.safe_load((REPO / "stacks" / f"Pulumi.{STACK}.yaml").read_text())["config"]
    classes = list(config.get("eks-karpenter:nodeClasses", []))
    pools = list(config.get("eks-karpenter:nodePools", []))
    classes += [{"name": f"class-{i}"} for i in range(n)]
    pools += [{"name": f"pool-{i}", "nodeClass": f"class-{i}", "capacityTypes": ["on-demand"],
               "limits": {"cpu": str(10 + i)}} for i in range(n)]
    return {"eks-karpenter:nodeClasses": json.dumps(classes), "eks-karpenter:nodePools": json.dumps(pools)}


def child(kind: str, n: int, plan: str) -> dict[str, Any]:
    """One measurement in this (fresh) process."""
    if kind in ("import-library", "import-providers"):
        started = time.process_time()
        exec(LIBRARY if kind == "import-library" else PROVIDER_PACKAGES)  # the fixed statements above
        return {"seconds": time.process_time() - started}
    exec(PROVIDERS)  # both sides start with the providers loaded
    from eks_karpenter.engine import plan_program

    if kind == "platform":
        overrides = pairs_config(n)
        started = time.process_time()
        doc = plan_program(REPO, STACK, config_overrides=overrides)
        seconds = time.process_time() - started
        Path(plan).write_text(doc.to_json())
    else:
        root = Path(tempfile.mkdtemp(prefix="floor-"))
        (root / "stacks").mkdir()
        (root / "Pulumi.yaml").write_text("name: floor\nruntime: python\nmain: prog.py\nstackConfigDir: stacks\n")
        (root / "prog.py").write_text(FLOOR_PROGRAM)
        (root / "plan.json").write_text(Path(plan).read_text())
        (root / "stacks" / "Pulumi.bench.yaml").write_text("config: {}\n")
        started = time.process_time()
        doc = plan_program(root, "bench")
        seconds = time.process_time() - started
    return {"seconds": seconds, "resources": len(doc.resources), "invokes": len(doc.invokes),
            "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def _env(cache: str) -> dict[str, str]:
    # Byte-compiled modules as an installed package has them (the providers' are compiled at install time), in
    # a cache outside the repository.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPYCACHEPREFIX": cache}


def run_child(kind: str, n: int, plan: str, cache: str) -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-m", "benchmarks.scale", "--child", kind, str(n), plan], cwd=REPO,
                         check=True, capture_output=True, text=True, env=_env(cache)).stdout
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return result


def table_rows(results: dict[int, dict[str, dict[str, float]]]) -> list[str]:
    """Markdown rows from median figures: {N: {"ours": {...}, "floor": {...}}}."""
    rows = []
    base, floor_base = results[min(results)]["ours"], results[min(results)]["floor"]
    for n in sorted(results):
        ours, floor = results[n]["ours"], results[n]["floor"]
        added = n - min(results)
        per_pair = f"{(ours['seconds'] - base['seconds']) / added * 1000:.1f}" if added else "-"
        floor_pair = f"{(floor['seconds'] - floor_base['seconds']) / added * 1000:.1f}" if added else "-"
        invokes = f"{(ours['invokes'] - base['invokes']) / added:g}" if added else "-"
        rows.append(f"| {n} | {floor['seconds']:.2f} | {ours['seconds']:.2f} | "
                    f"{ours['seconds'] / floor['seconds']:.2f} | {per_pair} | {floor_pair} | "
                    f"{ours['rss_mb'] / floor['rss_mb']:.2f} | {invokes} |")
    return rows


def import_line(library: float, providers: float) -> str:
    return (f"import: library {library:.3f} s, providers {providers:.3f} s, ratio {library / providers:.2f} "
            "(CPU seconds, medians)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[0, 100, 300, 1000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--markdown", action="store_true", help="print only the README block")
    parser.add_argument("--write-result", action="store_true",
                        help="also write benchmarks/results/scale.md, the README's source")
    parser.add_argument("--child", nargs=3, metavar=("KIND", "N", "PLAN"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child[0], int(args.child[1]), args.child[2])))
        return 0

    with tempfile.TemporaryDirectory(prefix="scale-pyc-") as cache:
        plan = str(Path(cache) / "plan.json")
        run_child("platform", 0, plan, cache)  # warm the byte-code cache; not measured
        results: dict[int, dict[str, dict[str, float]]] = {}
        for n in sorted(args.sizes):
            runs: dict[str, list[dict[str, Any]]] = {"ours": [], "floor": []}
            for _ in range(args.repeat):  # A B A B: platform, then a floor of exactly its size
                runs["ours"].append(run_child("platform", n, plan, cache))
                runs["floor"].append(run_child("floor", n, plan, cache))
            results[n] = {side: {key: statistics.median(r[key] for r in rs) for key in rs[0]}
                          for side, rs in runs.items()}
            if not args.markdown:
                print(f"N={n}: {results[n]}", file=sys.stderr)
        imports: dict[str, list[float]] = {"import-library": [], "import-providers": []}
        for _ in range(max(5, args.repeat * 2)):
            for kind in imports:
                imports[kind].append(run_child(kind, 0, plan, cache)["seconds"])
    block = render_block(machine(), args.repeat, results, statistics.median(imports["import-library"]),
                         statistics.median(imports["import-providers"]))
    print(block)
    if args.write_result:
        write_result("scale", "python -m benchmarks.scale --markdown --write-result", block)
    return 0


def render_block(host: str, repeat: int, results: dict[int, dict[str, dict[str, float]]], library: float,
                 providers: float) -> str:
    """The printed result: the README's block is this text as the benchmark printed it."""
    lines = [f"Machine: {host}. CPU seconds, medians of {repeat} alternating runs.", "", *HEADER,
             *table_rows(results), "", import_line(library, providers)]
    return "\n".join(lines)


def shape(block: str) -> list[str]:
    """The block with every figure replaced by `#`: what must match between a run and the README."""
    out = []
    for line in block.strip().splitlines():
        if line.startswith("Machine: "):
            line = "Machine: #"
        out.append(re.sub(r"-?\d+(\.\d+)?", "#", line))
    return out


if __name__ == "__main__":
    sys.exit(main())
