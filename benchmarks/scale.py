"""Scale benchmark: the prod stack plus N NodePool + EC2NodeClass pairs, against the Pulumi SDK's own floor.

The floor is measured in the same run: a program without config or components that makes the same registrations
as the platform's plan under the same mocks: each resource through its provider's own class (`aws.ec2.Vpc(...)`,
as a program written without this library would), with the same name, parent, inputs (the pairs' objects are the
very manifests the platform renders) and options (provider, dependsOn, protect, timeouts), so the SDK makes the
same URNs and walks the same dependency graph. Two lower floors are printed for reference: the bare floor, the
same classes and inputs without options (no parent, provider or dependsOn: what the SDK costs for a program whose
pools could be created before the controller and deleted after it), and the raw floor, bare
`pulumi.CustomResource`s, which no real program reaches since the typed classes declare every output property.
Each figure comes from a fresh process; platform and floor runs alternate (A B C D A B C D ...) so a noisy
neighbour hits all, and each figure is the minimum of its runs: this shared machine only ever adds time (steal,
cache misses), so the least-disturbed run is the truest measure of the work, as `timeit` reports it. Times are
the process's CPU seconds for the plan: the providers' modules and the engine are loaded, and the garbage of
those imports collected, before the clock starts, on every side, and so is the library on the platform's side:
its import is judged on its own, by the last line, and counted once. RSS is the process's peak (its minimum over
the runs too).

Columns: N; floor and platform seconds; their ratio; milliseconds per added pair ((t(N) - t(0)) / N, platform);
the same for the floor; peak RSS ratio; provider invokes per added pair; the bare and raw floors' seconds and our
ratio to each. A last line compares importing the providers the platform wraps (the packages and the modules its
resource types come from) with importing them and then the library (`eks_karpenter.platform.build`).

Targets: ratio <= 1.15 at every N, ms per added pair flat from 100 to 1,000, RSS ratio <= 1.1 at 1,000, zero
invokes per pair, import ratio <= 1.2.
Run: .venv/bin/python -m benchmarks.scale [--sizes 0 100 300 1000] [--repeat 5] [--markdown]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import resource
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
LIBRARY = "import eks_karpenter; import eks_karpenter.platform.build"

# The same registrations as the platform's plan, without config or components' code. The floor registers each
# resource as the plan did: through its provider's own class (as a program written without this library would: the
# typed classes declare every output property, and that is part of what Pulumi costs), with the same name, parent,
# inputs and options (provider, dependsOn, protect, timeouts, ...), so the SDK makes the same URNs and walks the
# same dependency graph. Only dependencies the plan got from Output-valued inputs are missing: the floor's inputs are
# plain values. The bare floor drops the options (no parent, provider or dependsOn); the raw floor registers bare
# `pulumi.CustomResource`s, a lower bound no real program reaches. Both are printed for reference.
FLOOR_PROGRAM = '''
import importlib
import json
import re
from pathlib import Path

import pulumi

PACKAGES = {"aws": "pulumi_aws", "eks": "pulumi_eks", "kubernetes": "pulumi_kubernetes"}


def provider_class(token):
    """The provider SDK's class for a type token; None for a Kubernetes custom resource."""
    package, module, name = token.split(":")
    if package == "pulumi" and module == "providers":
        return importlib.import_module(f"pulumi_{name}").Provider
    root = importlib.import_module(PACKAGES[package])
    if package == "kubernetes":
        group, version = module.split("/")
        if group == "helm.sh":
            return getattr(getattr(root.helm, version), name)
        if group == "core" or group.endswith(".k8s.io"):  # built-in kinds: ConfigMap, RBAC, admission
            return getattr(getattr(getattr(root, group.split(".")[0]), version), name)
        return None
    return getattr(root if module == "index" else getattr(root, module.split("/")[0]), name)


def snake(key):
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\\1", key).lower()


registered = {}


hooks = {}


def hook(name):
    """A resource hook registered under the plan's hook name (the floor's does nothing)."""
    if name not in hooks:
        hooks[name] = pulumi.ResourceHook(name, lambda args: None)
    return hooks[name]


def options(r):
    """The registration's options as the plan recorded them (mocks.py `_options`), as ResourceOptions."""
    o = r.get("options", {})
    timeouts = o.get("customTimeouts")
    bound = {re.sub(r"([A-Z])", r"_\\1", k).lower(): [hook(n) for n in v] for k, v in o.get("hooks", {}).items()}
    return pulumi.ResourceOptions(
        parent=registered.get(r["parent"]),
        provider=registered.get(o.get("provider")), depends_on=[registered[u] for u in o.get("dependsOn", [])],
        protect=o.get("protect"), retain_on_delete=o.get("retainOnDelete"), ignore_changes=o.get("ignoreChanges"),
        replace_on_changes=o.get("replaceOnChanges"), delete_before_replace=o.get("deleteBeforeReplace"),
        import_=o.get("import"), deleted_with=registered.get(o.get("deletedWith")), aliases=o.get("aliases"),
        custom_timeouts=pulumi.CustomTimeouts(**timeouts) if timeouts else None,
        transforms=[transform(path) for path in o.get("transforms", [])] or None,
        hooks=pulumi.ResourceHookBinding(**bound) if bound else None)


def transform(path):
    """A transform the plan names by its dotted path (module-level functions only)."""
    module, _, name = path.rpartition(".")
    return getattr(__import__(module, fromlist=[name]), name)


def register(r, matched):
    type_, name, inputs = r["type"], r["name"], r["inputs"]
    opts = options(r) if matched else None
    if type_.startswith("eks-karpenter:"):  # the components' own registrations, without their code
        return pulumi.ComponentResource(type_, name, opts=opts)
    cls = provider_class(type_)
    if cls is None:
        import pulumi_kubernetes as k8s

        rest = dict(inputs)
        return k8s.apiextensions.CustomResource(name, api_version=rest.pop("apiVersion"), kind=rest.pop("kind"),
                                                **{snake(k): v for k, v in rest.items()}, opts=opts)
    return cls(name, **{snake(k): v for k, v in inputs.items()}, opts=opts)


def register_raw(r):
    type_ = "floor:index:Provider" if r["type"].startswith("pulumi:providers:") else r["type"]
    return pulumi.CustomResource(type_, r["name"], r["inputs"])


def register_in_order(urn):
    """Parent, provider, dependencies and deletedWith first: the plan lists registrations as the engine received
    them, which is not always the order the program made them in."""
    if urn in registered or urn not in resources:
        return
    r = resources[urn]
    o = r.get("options", {})
    for before in (r["parent"], o.get("provider"), *o.get("dependsOn", []), o.get("deletedWith")):
        if before:
            register_in_order(before)
    registered[urn] = register_raw(r) if kind == "raw" else register(r, matched=kind == "floor")


resources = {r["urn"]: r for r in json.loads((Path(__file__).parent / "plan.json").read_text())["resources"]}
kind = (Path(__file__).parent / "kind").read_text()
for urn in resources:
    register_in_order(urn)
'''

HEADER = ("| N | floor s | ours s | ratio | ms/added pair | floor ms/added pair | RSS ratio | invokes/pair "
          "| bare floor s | ratio to bare | raw floor s | ratio to raw |",
          "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
SIDES = {"ours": "platform", "floor": "floor", "bare": "bare", "raw": "raw"}


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


def floor_project(root: Path, kind: str, plan: str) -> Path:
    """A project at `root` whose program is the floor of `kind` (floor, bare or raw) for `plan` (a plan document's
    JSON): named like the platform's project and stack, so that its URNs are the plan's."""
    (root / "stacks").mkdir(parents=True)
    (root / "Pulumi.yaml").write_text("name: eks-karpenter\nruntime: python\nmain: prog.py\nstackConfigDir: stacks\n")
    (root / "prog.py").write_text(FLOOR_PROGRAM)
    (root / "plan.json").write_text(plan)
    (root / "stacks" / f"Pulumi.{STACK}.yaml").write_text("config: {}\n")
    (root / "kind").write_text(kind)
    return root


def child(kind: str, n: int, plan: str, stop: str | None = None) -> dict[str, Any]:
    """One measurement in this (fresh) process. `stop` ("setup" or "plan") ends it before the clock starts or as
    the plan returns, with nothing written or printed: benchmarks/instructions.py counts those processes."""
    if kind in ("import-library", "import-providers"):
        started = time.process_time()
        exec(PROVIDERS)  # the fixed statements above
        if kind == "import-library":
            exec(LIBRARY)
        return {"seconds": time.process_time() - started}
    exec(PROVIDERS)  # every side starts with the providers loaded
    from eks_karpenter.tools.engine import plan_program

    if kind == "platform":
        root, overrides = REPO, pairs_config(n)
        exec(LIBRARY)  # its import has its own target and line; the plan's clock starts with it loaded
    else:
        root, overrides = floor_project(Path(tempfile.mkdtemp(prefix="floor-")), kind, Path(plan).read_text()), None
    gc.collect()  # the imports' garbage is the imports' own: no side starts with another's collection due
    if stop == "setup":
        return {}
    started = time.process_time()
    doc = plan_program(root, STACK, config_overrides=overrides)
    seconds = time.process_time() - started
    if stop == "plan":
        return {}
    if kind == "platform":  # the floors' input, written once the clock has stopped
        Path(plan).write_text(doc.to_json())
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
    """Markdown rows from the figures: {N: {"ours": {...}, "floor": {...}, "bare": {...}, "raw": {...}}}."""
    rows = []
    base, floor_base = results[min(results)]["ours"], results[min(results)]["floor"]
    for n in sorted(results):
        ours, floor, bare, raw = (results[n][side] for side in ("ours", "floor", "bare", "raw"))
        added = n - min(results)
        per_pair = f"{(ours['seconds'] - base['seconds']) / added * 1000:.1f}" if added else "-"
        floor_pair = f"{(floor['seconds'] - floor_base['seconds']) / added * 1000:.1f}" if added else "-"
        invokes = f"{(ours['invokes'] - base['invokes']) / added:g}" if added else "-"
        rows.append(f"| {n} | {floor['seconds']:.2f} | {ours['seconds']:.2f} | "
                    f"{ours['seconds'] / floor['seconds']:.2f} | {per_pair} | {floor_pair} | "
                    f"{ours['rss_mb'] / floor['rss_mb']:.2f} | {invokes} | {bare['seconds']:.2f} | "
                    f"{ours['seconds'] / bare['seconds']:.2f} | {raw['seconds']:.2f} | "
                    f"{ours['seconds'] / raw['seconds']:.2f} |")
    return rows


def import_line(library: float, providers: float) -> str:
    return (f"import: providers and library {library:.3f} s, providers {providers:.3f} s, ratio "
            f"{library / providers:.2f}; the library's own {library - providers:.3f} s (CPU seconds, minimums)")


def runs_at(n: int, repeat: int) -> int:
    """Runs of each side at size `n`: small plans take a fraction of a second, where one disturbed run moves a
    figure most, so they get more runs for about the same machine time as the large ones."""
    return repeat * (3 if n <= 100 else 2 if n <= 300 else 1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[0, 100, 300, 1000])
    parser.add_argument("--repeat", type=int, default=5, help="runs of each side at the largest sizes (more below)")
    parser.add_argument("--markdown", action="store_true", help="print only the README block")
    parser.add_argument("--write-result", action="store_true",
                        help="also write benchmarks/results/scale.md, the docs' source (docs/cost-and-scale.md)")
    parser.add_argument("--child", nargs=3, metavar=("KIND", "N", "PLAN"), help=argparse.SUPPRESS)
    parser.add_argument("--stop", choices=("setup", "plan"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        figures = child(args.child[0], int(args.child[1]), args.child[2], args.stop)
        if args.stop is None:
            print(json.dumps(figures))
        return 0

    with tempfile.TemporaryDirectory(prefix="scale-pyc-") as cache:
        plan = str(Path(cache) / "plan.json")
        run_child("platform", 0, plan, cache)  # warm the byte-code cache; not measured
        results: dict[int, dict[str, dict[str, float]]] = {}
        for n in sorted(args.sizes):
            runs: dict[str, list[dict[str, Any]]] = {side: [] for side in SIDES}
            for _ in range(runs_at(n, args.repeat)):  # A B C D A B C D: platform, then floors of exactly its size
                for side, kind in SIDES.items():
                    runs[side].append(run_child(kind, n, plan, cache))
            results[n] = {side: {key: min(r[key] for r in rs) for key in rs[0]}
                          for side, rs in runs.items()}
            if not args.markdown:
                print(f"N={n}: {results[n]}", file=sys.stderr)
        imports: dict[str, list[float]] = {"import-library": [], "import-providers": []}
        for _ in range(max(9, args.repeat * 2)):  # an import is ~1.5 s of noisy CPU: more runs
            for kind in imports:
                imports[kind].append(run_child(kind, 0, plan, cache)["seconds"])
    block = render_block(machine(), args.repeat, results, min(imports["import-library"]),
                         min(imports["import-providers"]))
    print(block)
    if args.write_result:
        write_result("scale", "python -m benchmarks.scale --markdown --write-result", block)
    return 0


def verdict_lines(results: dict[int, dict[str, dict[str, float]]], library: float, providers: float) -> list[str]:
    """Each target, met or not, computed from the figures above it."""
    def mark(ok: bool) -> str:
        return "met" if ok else "NOT met"

    sizes = sorted(results)
    ratios = {n: results[n]["ours"]["seconds"] / results[n]["floor"]["seconds"] for n in sizes}
    lines = ["targets:"]
    for n in sizes:
        lines.append(f"- plan time <= 1.15x the floor at N={n}: {ratios[n]:.2f}x, {mark(ratios[n] <= 1.15)}")
    added = [n for n in sizes if n > sizes[0]]
    if len(added) >= 2:
        def per_pair(side: str, n: int) -> float:
            return (results[n][side]["seconds"] - results[sizes[0]][side]["seconds"]) / (n - sizes[0])

        def growth(side: str) -> float:
            first = per_pair(side, lo)
            return per_pair(side, hi) / first if first > 0 else float("inf")

        lo, hi = added[0], added[-1]
        ours, floor = growth("ours"), growth("floor")
        lines.append(f"- time per added pair flat from N={lo} to N={hi} (no steeper than the SDK's own): ours "
                     f"x{ours:.2f}, floor x{floor:.2f}, {mark(ours <= floor * 1.1)}")
    top = sizes[-1]
    rss = results[top]["ours"]["rss_mb"] / results[top]["floor"]["rss_mb"]
    lines.append(f"- peak RSS <= 1.1x the floor's at N={top}: {rss:.2f}x, {mark(rss <= 1.1)}")
    invokes = max((results[n]["ours"]["invokes"] - results[sizes[0]]["ours"]["invokes"]) for n in sizes)
    lines.append(f"- no provider invoke per pool: {invokes:g} more invokes at N={top} than at N={sizes[0]}, "
                 f"{mark(invokes == 0)}")
    lines.append(f"- import <= 1.2x the providers': {library / providers:.2f}x, {mark(library / providers <= 1.2)}")
    return lines


def render_block(host: str, repeat: int, results: dict[int, dict[str, dict[str, float]]], library: float,
                 providers: float) -> str:
    """The printed result: the README's block is this text as the benchmark printed it."""
    runs = ", ".join(f"{runs_at(n, repeat)} at N={n}" for n in sorted(results))
    lines = [f"Machine: {host}. CPU seconds, minimum of alternating runs ({runs}).", "", *HEADER,
             *table_rows(results), "", import_line(library, providers), "",
             *verdict_lines(results, library, providers)]
    return "\n".join(lines)


def shape(block: str) -> list[str]:
    """The block with every figure replaced by `#`: what must match between a run and a stored result (the
    scale and command benchmarks share it)."""
    out = []
    for line in block.strip().splitlines():
        if line.startswith("Machine: "):
            line = "Machine: #"
        out.append(re.sub(r"[-+]?\d+(\.\d+)?", "#", line.replace("NOT met", "met")))
    return out


if __name__ == "__main__":
    sys.exit(main())
