"""`python -m infra smoke --stack S`: the post-deploy smoke test (tools/smoke), wired to a stack and a cluster.

The pools come from the stack file, rendered exactly as `pulumi up` applies them; the cluster from the stack's
`kubeconfig` output (through the Pulumi CLI) or `--kubeconfig` / `--context`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import yaml

from eks_karpenter.tools.project import load_project, program_root, validated_stack_config
from eks_karpenter.tools.smoke.config import PHASES, SmokeTimeouts


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return value


def add_parser(sub: Any) -> None:
    smoke = sub.add_parser("smoke", help="after `pulumi up`: prove every NodePool launches a node, time it, clean up")
    smoke.add_argument("--stack", required=True, help="stack name: reads <stackConfigDir>/Pulumi.<stack>.yaml")
    smoke.add_argument("--program", type=Path, metavar="DIR",
                       help="the platform's Pulumi project folder (default: the current directory)")
    smoke.add_argument("--pool", action="append", default=[], metavar="NAME",
                       help="test only this NodePool (repeatable; default: every pool of the stack)")
    smoke.add_argument("--format", choices=("text", "json", "markdown"), default="text",
                       help="markdown: for a CI job summary")
    smoke.add_argument("--dry-run", action="store_true",
                       help="print the manifests it would apply (YAML; JSON with --format json), touch nothing")
    smoke.add_argument("--phase", type=int, nargs="?", const=0, metavar="N",
                       help="only check the cluster is in the state migration phase N expects (default: the "
                            "stack's migration.phase): Cluster Autoscaler's replicas, pools Ready, drained node "
                            "groups, no long-Pending pods")
    smoke.add_argument("--cleanup", action="store_true",
                       help="only delete namespaces left by an earlier interrupted run, then exit")
    smoke.add_argument("--kubeconfig", metavar="FILE", help="kubeconfig file (default: the stack's `kubeconfig` "
                                                            "output, read with `pulumi stack output`)")
    smoke.add_argument("--context", metavar="NAME", help="kubeconfig context (default: the current one)")
    smoke.add_argument("--capacity-type", choices=("spot", "on-demand", "reserved"),
                       help="capacity type to ask for (default: spot where the pool allows it)")
    smoke.add_argument("--poll", type=_seconds, default=2.0, metavar="SECONDS", help="polling interval (default 2)")
    smoke.add_argument("--keep-nodes", action="store_true",
                       help="when consolidation is disabled or blocked, leave the test's node running")
    defaults = SmokeTimeouts()
    for phase in PHASES:
        smoke.add_argument(f"--timeout-{phase}", type=_seconds, metavar="SECONDS",
                           help=f"{SmokeTimeouts.documented_fields()[phase].description} (default "
                                f"{getattr(defaults, phase):g})")


def _stack_config(stack: str, program: Path | None = None) -> Any:
    return validated_stack_config(load_project(program), stack)


def _pulumi_kubeconfig(stack: str, program: Path | None = None) -> dict[str, Any]:
    from eks_karpenter.platform.kube import KubeError

    if shutil.which("pulumi") is None:
        raise KubeError("no kubeconfig: the stack's `kubeconfig` output is read with the Pulumi CLI, which is not "
                        "installed here; pass --kubeconfig FILE or --context NAME")
    cmd = ["pulumi", "stack", "output", "--json", "--show-secrets", "kubeconfig", "--stack", stack]
    done = subprocess.run(cmd, cwd=program_root(program).resolve(), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise KubeError(f"`{' '.join(cmd)}` failed: {done.stderr.strip()}")
    value = json.loads(done.stdout)
    # pulumi-eks renders the kubeconfig as JSON text; an object is accepted too.
    doc = yaml.safe_load(value) if isinstance(value, str) else value
    if not isinstance(doc, dict):
        raise KubeError(f"stack {stack!r}: the `kubeconfig` output is not a kubeconfig")
    return doc


def connect(args: argparse.Namespace) -> Any:
    from eks_karpenter.platform.kube import KubeApi

    if args.kubeconfig or args.context:
        return KubeApi.from_file(args.kubeconfig, args.context)
    return KubeApi.from_kubeconfig(_pulumi_kubeconfig(args.stack, args.program))


@contextlib.contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """SIGTERM (a cancelled CI job) cleans up like Ctrl-C does."""
    def handler(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread (tests): Ctrl-C handling is unchanged
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _dry_run(plan: Any, fmt: str) -> str:
    from eks_karpenter.catalogue import load_catalogue

    if fmt == "json":
        return json.dumps(plan.manifests(), indent=2) + "\n"
    parts = [f"# smoke test of stack {plan.stack}: {load_catalogue().provenance()}\n"
             "# At run time a pod is sized up when an existing node of its pool has that much CPU free.\n"
             + yaml.safe_dump(plan.namespace_manifest(), sort_keys=False)]
    for p in plan.pools:
        t = p.instance_type
        parts.append(f"# pool {p.pool}: sized for its cheapest admitted type {t.name} "
                     f"(${t.on_demand_hourly}/h on-demand; {t.cpu_millis}m CPU, {t.memory_mib}Mi allocatable)\n"
                     + yaml.safe_dump(p.deployment, sort_keys=False))
    return "---\n".join(parts)


def _check_phase(args: argparse.Namespace, cfg: Any, api_factory: Any) -> int:
    from eks_karpenter.config.namespaces import in_namespace
    from eks_karpenter.tools.smoke.phase import PhaseCheckError, check_phase, expectation, render_json, render_text

    try:
        want = expectation(cfg, args.phase or None)
    except PhaseCheckError as exc:
        print(f"error: {in_namespace(str(exc), load_project(args.program).name)}", file=sys.stderr)
        return 1
    checks = check_phase((api_factory or connect)(args), want)
    sys.stdout.write((render_json if args.format == "json" else render_text)(args.stack, want, checks))
    return 0 if all(c.ok for c in checks) else 1


def cmd_smoke(args: argparse.Namespace, api_factory: Any = None, settings: Any = None) -> int:
    """The command. `api_factory` and `settings` are for tests (a fake API server, a fast clock)."""
    from eks_karpenter.platform.kube import KubeError
    from eks_karpenter.tools.smoke.plan import SmokePlanError, plan_smoke, rendered_pools

    try:
        if args.cleanup:
            from eks_karpenter.tools.smoke.runner import cleanup_leftovers

            names = cleanup_leftovers((api_factory or connect)(args))
            print(f"deleted {len(names)} namespace(s) left by earlier runs" + (f": {', '.join(names)}" if names
                                                                                else ""), file=sys.stderr)
            return 0
        cfg = _stack_config(args.stack, args.program)
        if getattr(args, "phase", None) is not None:
            return _check_phase(args, cfg, api_factory)
        plan = plan_smoke(args.stack, rendered_pools(cfg), args.pool, capacity_type=args.capacity_type)
        if args.dry_run:
            sys.stdout.write(_dry_run(plan, args.format))
            return 0
        from eks_karpenter.tools.smoke import report
        from eks_karpenter.tools.smoke.runner import Runner, Settings

        if settings is None:
            overrides = {p: getattr(args, f"timeout_{p}") for p in PHASES if getattr(args, f"timeout_{p}")}
            settings = Settings(timeouts=SmokeTimeouts(**overrides), poll=args.poll)
        settings.remove_kept_nodes = not args.keep_nodes
        api = (api_factory or connect)(args)
        with _sigterm_interrupts():
            result = Runner(api, plan, settings, log=lambda line: print(line, file=sys.stderr)).run()
    except (KubeError, SmokePlanError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # a second Ctrl-C, during the clean-up itself
        print("interrupted during clean-up: run `smoke --cleanup` to remove what is left", file=sys.stderr)
        return 130
    render = {"json": report.render_json, "markdown": report.render_markdown}.get(args.format, report.render_text)
    sys.stdout.write(render(result))
    if result.interrupted:
        return 130
    return 0 if result.ok else 1
