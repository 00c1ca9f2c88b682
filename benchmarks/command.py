"""Command benchmark: the whole `python -m infra plan --format json` command, as a user runs it, on the prod stack
plus N team-like NodePool + EC2NodeClass pairs, against the Pulumi SDK's floor doing the same work.

What a user runs is timed from outside, as a child process from its start to its exit: interpreter start-up,
imports, reading the stack file, validating it, planning, and writing the plan's JSON (to a file, as
`> plan.json` would). The stack file is the prod stack's own file with N pairs added to its `nodeClasses` and
`nodePools` lists, each pair shaped like a team's: its own EC2NodeClass (two block devices, kubelet reservations
and eviction thresholds, tags) and a NodePool on it (requirements, labels, a taint, limits, disruption budgets).

The floor is a command without this library's config or components doing the same work: it reads the same stack
file with PyYAML's C loader (`yaml.load`, what a program reading a YAML file does) and hands its values to the
runtime as the Pulumi CLI does (objects as JSON text), makes the plan's registrations through the providers' own
classes with the same names, parents, inputs and options under the same mocks (benchmarks/scale.py's floor
program), and writes the same JSON document. Its registrations are the platform's own plan at that N, handed over
with `marshal`, the cheapest hand-over the standard library has, so the floor pays as little as possible for
being given them. The floor runs at the interpreter's default garbage-collector thresholds, as a plain program
does; the platform's command raises its own (`eks_karpenter/tools/cli.py`), and that is part of what is measured.

Runs alternate (ours, floor, ours, floor, ...) so a noisy neighbour hits both sides, and each figure is the
minimum of its runs: this shared machine only adds time. Seconds are the child's CPU (user + system) as the
operating system accounts the finished process (`os.wait4`), so they include start-up and exit; wall seconds
(minimum) are printed beside them. RSS is the child's peak resident set.

Targets: ours <= 1.25x the floor at every N > 0; time per added pair as flat as the floor's (no steeper than 1.1x
its growth); peak RSS <= 1.1x the floor's; and the prod plan (N=0) within 0.15 s of its floor.
Run: .venv/bin/python -m benchmarks.command [--sizes 0 300 1000] [--repeat 5] [--markdown] [--write-result]
"""

from __future__ import annotations

import argparse
import json
import marshal
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from benchmarks.results import machine, write_result
from benchmarks.scale import FLOOR_PROGRAM

REPO = Path(__file__).resolve().parent.parent
BASE = "prod"
STACK = "team"
"""The benchmark project's stack name: its file is `stacks/Pulumi.team.yaml` in a scratch project."""

# The floor command: read the stack file with PyYAML's C loader, flatten it as the Pulumi CLI does, run the floor
# program (benchmarks/scale.py's FLOOR_PROGRAM) with that config under the same mocks, write the plan's JSON.
FLOOR_COMMAND = '''
import json
import sys
from pathlib import Path

import yaml

from eks_karpenter.tools.engine import plan_program

floor, stack_file, out = (Path(arg) for arg in sys.argv[1:4])
body = yaml.load(stack_file.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
config = {key: value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
          for key, value in body["config"].items()}
config = {(key if ":" in key else "eks-karpenter:" + key): value for key, value in config.items()}
doc = plan_program(floor, "team", config_overrides=config)
out.write_text(doc.to_json())
'''

# The floor program reads its registrations with `marshal` instead of the JSON plan: the same data, loaded at
# the least cost (a plan of 1,000 pairs is megabytes of JSON, which the platform never reads). It makes the plan's
# look-ups first, as the platform's preflight does: `pulumi.runtime.invoke` is synchronous and runs the event loop
# until its answer comes, and made after the registrations, each look-up ran that loop over every registration
# still in flight, which made the floor quadratic in N (its invokes grow with the pairs).
FLOOR_REGISTRATIONS = ('resources = {r["urn"]: r for r in json.loads((Path(__file__).parent / "plan.json")'
                       '.read_text())["resources"]}')
FLOOR_PROGRAM_MARSHAL = FLOOR_PROGRAM.replace(
    FLOOR_REGISTRATIONS,
    'import marshal\nresources = {r["urn"]: r for r in marshal.loads((Path(__file__).parent / "plan.marshal")'
    '.read_bytes())}\n'
    '# The plan\'s invokes, before any registration (see benchmarks/command.py).\n'
    'extra = marshal.loads((Path(__file__).parent / "extra.marshal").read_bytes())\n'
    'for call in extra["invokes"]:\n'
    '    pulumi.runtime.invoke(call["token"], call["args"])') + '''
# The plan's stack outputs, so the floor's JSON document is the platform's.
for name, value in extra["outputs"].items():
    pulumi.export(name, value)
'''

HEADER = ("| N | stack file KB | JSON KB | floor s | ours s | ratio | ours - floor s | ms/added pair "
          "| floor ms/added pair | floor wall s | ours wall s | floor RSS MB | ours RSS MB | RSS ratio |",
          "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")


def team_pair(i: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The i-th team's EC2NodeClass and NodePool, as a team writes them in the stack file."""
    team = f"team-{i:04d}"
    node_class = {
        "name": team,
        "amiSelectorTerms": [{"alias": "al2023@v20260815"}],
        "metadataOptions": {"httpTokens": "required", "httpPutResponseHopLimit": 1},
        "blockDeviceMappings": [
            {"deviceName": "/dev/xvda", "rootVolume": True,
             "ebs": {"volumeSize": f"{50 + i % 200}Gi", "volumeType": "gp3", "iops": 3000, "throughput": 125,
                     "encrypted": True, "deleteOnTermination": True}},
            {"deviceName": "/dev/xvdb",
             "ebs": {"volumeSize": "200Gi", "volumeType": "gp3", "encrypted": True, "deleteOnTermination": True}},
        ],
        "kubelet": {"maxPods": 110, "systemReserved": {"cpu": "100m", "memory": "256Mi"},
                    "kubeReserved": {"cpu": "200m", "memory": "512Mi"},
                    "evictionHard": {"memory.available": "5%", "nodefs.available": "10%"},
                    "imageGCHighThresholdPercent": 85, "imageGCLowThresholdPercent": 80},
        "detailedMonitoring": True,
        "tags": {"team": team, "cost-center": f"cc-{1000 + i}", "owner": f"{team}@example.com"},
    }
    pool = {
        "name": team,
        "nodeClass": team,
        "capacityTypes": ["spot", "on-demand"],
        "instanceCategories": ["c", "m", "r"],
        "minGeneration": 6,
        "requirements": [
            {"key": "karpenter.k8s.aws/instance-cpu", "operator": "In", "values": ["4", "8", "16", "32"]},
            {"key": "topology.kubernetes.io/zone", "operator": "In",
             "values": ["us-east-1a", "us-east-1b", "us-east-1c"]},
        ],
        "labels": {"team": team},
        "taints": [{"key": "team", "value": team, "effect": "NoSchedule"}],
        "limits": {"cpu": str(100 + i), "memory": f"{400 + i}Gi"},
        "disruption": {
            "consolidationPolicy": "WhenEmptyOrUnderutilized",
            "consolidateAfter": "10m",
            "budgets": [{"nodes": "10%"},
                        {"nodes": "0", "schedule": "0 9 * * mon-fri", "duration": "8h", "reasons": ["Underutilized"]}],
        },
    }
    return node_class, pool


def _items(values: list[dict[str, Any]]) -> str:
    """List items in block style, indented as the stack file's own items are (under a two-space key)."""
    if not values:
        return ""
    text = yaml.safe_dump(values, sort_keys=False, default_flow_style=False, width=120)
    return "".join(f"    {line}\n" if line else "\n" for line in text.splitlines())


def team_stack(n: int) -> str:
    """The prod stack file's text with N team pairs added: its classes before `nodePools:`, its pools at the end
    of that list (before the next key of `config:` and its comment), so the file keeps its comments and reads as
    a team would have grown it."""
    text = (REPO / "stacks" / f"Pulumi.{BASE}.yaml").read_text()
    marker = "  eks-karpenter:nodePools:\n"
    assert marker in text and text.endswith("\n"), "the prod stack file has no nodePools list"
    pairs = [team_pair(i) for i in range(n)]
    head, tail = text.split(marker, 1)
    # The list ends at the first line back at the config block's own indent (a key, or a comment above one).
    end = re.search(r"^  [^ -]", tail, re.MULTILINE)
    pools, rest = (tail[:end.start()], tail[end.start():]) if end else (tail, "")
    return head + _items([c for c, _ in pairs]) + marker + pools + _items([p for _, p in pairs]) + rest


def make_project(root: Path, n: int) -> Path:
    """A Pulumi project at `root` running this repository's program on the team stack of N pairs."""
    (root / "stacks").mkdir(parents=True, exist_ok=True)
    (root / "Pulumi.yaml").write_text(f"name: eks-karpenter\nruntime: python\nmain: {REPO / 'infra' / 'program.py'}"
                                      "\nstackConfigDir: stacks\n")
    (root / "stacks" / f"Pulumi.{STACK}.yaml").write_text(team_stack(n))
    return root


def make_floor(root: Path, plan_json: str) -> Path:
    """The floor's project at `root` (its program registers `plan_json`'s resources) and its command file."""
    (root / "stacks").mkdir(parents=True, exist_ok=True)
    (root / "Pulumi.yaml").write_text("name: eks-karpenter\nruntime: python\nmain: prog.py\nstackConfigDir: stacks\n")
    assert FLOOR_REGISTRATIONS in FLOOR_PROGRAM, "benchmarks/scale.py's floor program changed how it reads"
    (root / "prog.py").write_text(FLOOR_PROGRAM_MARSHAL)
    plan = json.loads(plan_json)
    (root / "plan.marshal").write_bytes(marshal.dumps(plan["resources"]))
    (root / "extra.marshal").write_bytes(marshal.dumps({"invokes": plan["invokes"], "outputs": plan["outputs"]}))
    (root / "kind").write_text("floor")
    (root / "stacks" / f"Pulumi.{STACK}.yaml").write_text("config: {}\n")  # its config comes from the team file
    (root / "command.py").write_text(FLOOR_COMMAND)
    return root


def ours_argv(project: Path) -> list[str]:
    return [sys.executable, "-m", "infra", "plan", "--stack", STACK, "--program", str(project), "--format", "json"]


def floor_argv(floor: Path, project: Path, out: Path) -> list[str]:
    return [sys.executable, str(floor / "command.py"), str(floor), str(project / "stacks" / f"Pulumi.{STACK}.yaml"),
            str(out)]


def measure(argv: list[str], stdout: Path | None, env: dict[str, str]) -> dict[str, float]:
    """Run `argv` from the repository, its output to `stdout` (or discarded): CPU and wall seconds, peak RSS."""
    actions = [(os.POSIX_SPAWN_OPEN, 1, str(stdout) if stdout else os.devnull, os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
                0o644), (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)]
    cwd = os.getcwd()
    os.chdir(REPO)  # `-m infra` is found from the repository; posix_spawn has no cwd argument
    try:
        started = time.monotonic()
        pid = os.posix_spawn(argv[0], argv, env, file_actions=actions)
        _, status, usage = os.wait4(pid, 0)
        wall = time.monotonic() - started
    finally:
        os.chdir(cwd)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed (exit {os.waitstatus_to_exitcode(status)})")
    return {"seconds": usage.ru_utime + usage.ru_stime, "wall": wall, "rss_mb": usage.ru_maxrss / 1024}


def _env(cache: str) -> dict[str, str]:
    # Byte-compiled modules as an installed package has them, in a cache outside the repository.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPYCACHEPREFIX": cache}


def run_size(n: int, runs: int, scratch: Path, env: dict[str, str]) -> dict[str, dict[str, float]]:
    """Minimum figures of `runs` alternating runs of each side at N pairs."""
    project = make_project(scratch / f"ours-{n}", n)
    ours_out, floor_out = scratch / f"ours-{n}.json", scratch / f"floor-{n}.json"
    measure(ours_argv(project), ours_out, env)  # the floor's registrations, and a warm byte-code cache
    floor = make_floor(scratch / f"floor-{n}", ours_out.read_text())
    measure(floor_argv(floor, project, floor_out), None, env)
    sides: dict[str, list[dict[str, float]]] = {"ours": [], "floor": []}
    for _ in range(runs):
        sides["ours"].append(measure(ours_argv(project), ours_out, env))
        sides["floor"].append(measure(floor_argv(floor, project, floor_out), None, env))
    figures = {side: {key: min(r[key] for r in rs) for key in rs[0]} for side, rs in sides.items()}
    sizes = {"stack_kb": (project / "stacks" / f"Pulumi.{STACK}.yaml").stat().st_size / 1024,
             "json_kb": ours_out.stat().st_size / 1024}
    return {**figures, "size": sizes}


def table_rows(results: dict[int, dict[str, dict[str, float]]]) -> list[str]:
    """Markdown rows: {N: {"ours": {...}, "floor": {...}, "size": {...}}}."""
    rows = []
    first = min(results)

    def per_pair(side: str, n: int) -> str:
        if n == first:
            return "-"
        return f"{(results[n][side]['seconds'] - results[first][side]['seconds']) / (n - first) * 1000:.1f}"

    for n in sorted(results):
        ours, floor, size = results[n]["ours"], results[n]["floor"], results[n]["size"]
        rows.append(f"| {n} | {size['stack_kb']:.0f} | {size['json_kb']:.0f} | {floor['seconds']:.2f} | "
                    f"{ours['seconds']:.2f} | {ours['seconds'] / floor['seconds']:.2f} | "
                    f"{ours['seconds'] - floor['seconds']:.2f} | {per_pair('ours', n)} | {per_pair('floor', n)} | "
                    f"{floor['wall']:.2f} | {ours['wall']:.2f} | "
                    f"{floor['rss_mb']:.0f} | {ours['rss_mb']:.0f} | {ours['rss_mb'] / floor['rss_mb']:.2f} |")
    return rows


def verdict_lines(results: dict[int, dict[str, dict[str, float]]]) -> list[str]:
    """Each target, met or not, computed from the figures above it."""
    def mark(ok: bool) -> str:
        return "met" if ok else "NOT met"

    sizes = sorted(results)
    lines = ["targets:"]
    for n in sizes:
        ours, floor = results[n]["ours"]["seconds"], results[n]["floor"]["seconds"]
        if n == 0:
            lines.append(f"- prod plan (N=0) within 0.15 s of the floor: {ours - floor:+.2f} s, "
                         f"{mark(ours - floor <= 0.15)}")
        else:
            lines.append(f"- command time <= 1.25x the floor at N={n}: {ours / floor:.2f}x, "
                         f"{mark(ours / floor <= 1.25)}")
    if len(sizes) >= 3:
        lo, hi = sizes[1], sizes[-1]

        def growth(side: str) -> float:
            def per_pair(a: int, b: int) -> float:
                return (results[b][side]["seconds"] - results[a][side]["seconds"]) / (b - a)
            first = per_pair(sizes[0], lo)
            return per_pair(lo, hi) / first if first > 0 else float("inf")

        ours_growth, floor_growth = growth("ours"), growth("floor")
        lines.append(f"- linear: time per pair from N={lo} to N={hi} against N={sizes[0]} to N={lo}: ours "
                     f"x{ours_growth:.2f}, floor x{floor_growth:.2f}, {mark(ours_growth <= floor_growth * 1.1)}")
    worst = max(sizes, key=lambda n: results[n]["ours"]["rss_mb"] / results[n]["floor"]["rss_mb"])
    rss = results[worst]["ours"]["rss_mb"] / results[worst]["floor"]["rss_mb"]
    lines.append(f"- peak RSS <= 1.1x the floor's at every N: at most {rss:.2f}x (N={worst}), {mark(rss <= 1.1)}")
    return lines


def render_block(host: str, runs: dict[int, int], results: dict[int, dict[str, dict[str, float]]]) -> str:
    """The printed result, as `--write-result` stores it."""
    counts = ", ".join(f"{runs[n]} at N={n}" for n in sorted(results))
    lines = [f"Machine: {host}. Whole-command CPU seconds (user + system of the process), minimum of alternating "
             f"runs ({counts}).", "", *HEADER, *table_rows(results), "", *verdict_lines(results)]
    return "\n".join(lines)


def runs_at(n: int, repeat: int) -> int:
    """Runs of each side at N: small plans take a second or two, where one disturbed run moves a figure most."""
    return repeat * (3 if n == 0 else 2 if n <= 300 else 1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[0, 300, 1000])
    parser.add_argument("--repeat", type=int, default=5, help="runs of each side at the largest size (more below)")
    parser.add_argument("--markdown", action="store_true", help="print only the result block")
    parser.add_argument("--write-result", action="store_true", help="also write benchmarks/results/command.md")
    args = parser.parse_args(argv)
    results: dict[int, dict[str, dict[str, float]]] = {}
    runs = {n: runs_at(n, args.repeat) for n in args.sizes}
    with tempfile.TemporaryDirectory(prefix="command-bench-") as scratch:
        env = _env(str(Path(scratch) / "pyc"))
        for n in sorted(args.sizes):
            results[n] = run_size(n, runs[n], Path(scratch), env)
            if not args.markdown:
                print(f"N={n}: {results[n]}", file=sys.stderr)
    block = render_block(machine(), runs, results)
    print(block)
    if args.write_result:
        write_result("command", "python -m benchmarks.command --markdown --write-result", block)
    return 0


if __name__ == "__main__":
    sys.exit(main())
