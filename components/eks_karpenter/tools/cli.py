"""Command line: `eks-karpenter plan | diff | cost | simulate | smoke | schema | import-legacy | policy-pack |
deploy-policy | pins | preflight` (each listed with what it does by `--help`; `--version` prints the library's
version).

Every command works on a Pulumi project folder (`--program DIR`, default: the current directory), read like the
Pulumi CLI reads it: `Pulumi.yaml`'s `name`, `main` and `stackConfigDir`, then `<stackConfigDir>/Pulumi.<stack>.yaml`.
A consumer's `StackReference` to the platform is answered from the platform's own offline plan (`--platform DIR`)
or from a file of outputs (`--stack-outputs FILE`).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import sys
import tempfile
from datetime import date
from pathlib import Path
from typing import Any, NoReturn

import pulumi

from eks_karpenter.tools.cli_arguments import add_analysis_parsers, add_project_arguments
from eks_karpenter.tools.engine import PlanDocument, PlanError, plan_with_references
from eks_karpenter.tools.engine.mocks import PlanReferenceError
from eks_karpenter.tools.engine.render import render_markdown, render_tree, write_artifacts
from eks_karpenter.tools.project import DEFAULTS as DEFAULTS  # a wrapper sets them here (python -m infra)
from eks_karpenter.tools.project import load_project, program_root, validated_stack_config
from eks_karpenter.tools.smoke import cli as smoke


class UsageError(Exception):
    """A command line that cannot be run as given; the message says which argument and why."""


class _Parser(argparse.ArgumentParser):
    # One kind of failure for every unusable input: a one-line error and exit code 1 (argparse alone exits 2).
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


STACK_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")


def _check_stack(name: str) -> None:
    if not STACK_NAME.match(name) or name in (".", ".."):
        raise UsageError(f"--stack {name!r}: a stack name is letters, digits, '-', '_' and '.'")


def _prepare_out(out: Path) -> None:
    """Fail before planning if `--out` cannot take files: not a directory, under a file, or not writable."""
    for parent in [out, *out.parents]:
        if parent.exists() and not parent.is_dir():
            what = "is a file" if parent == out else f"is under {parent}, which is a file"
            raise UsageError(f"--out {out}: {what}; --out takes a directory (created if missing)")
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as exc:
        raise UsageError(f"--out {out}: cannot write there ({exc.strerror or exc})") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise UsageError(f"--out {out}: the directory is not writable")


def _program(args: argparse.Namespace) -> Path:
    """The Pulumi project to work on: `--program`, else the wrapper's default, else the current directory."""
    return program_root(args.program)


def _platform(args: argparse.Namespace) -> Path | None:
    return getattr(args, "platform", None) or DEFAULTS["platform"]


def _stack_outputs(args: argparse.Namespace) -> dict[str, dict[str, object]] | None:
    """`--stack-outputs FILE`: {"<org>/<project>/<stack>": {output: value, ...}, ...} (JSON)."""
    path: Path | None = getattr(args, "stack_outputs", None)
    if path is None:
        return None
    try:
        body = json.loads(path.read_text())
    except OSError as exc:
        raise UsageError(f"--stack-outputs {path}: {exc.strerror or exc}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise UsageError(f"--stack-outputs {path}: not JSON ({exc})") from None
    if not isinstance(body, dict) or not all(isinstance(v, dict) for v in body.values()):
        raise UsageError(f"--stack-outputs {path}: expected an object mapping each stack name "
                         "(<org>/<project>/<stack>) to an object of its outputs")
    return body


def _plan(args: argparse.Namespace, stack: str, live_pins: bool = True) -> PlanDocument:
    """The stack's offline plan; `plan --live` (`live_pins`) answers its pin look-ups from AWS."""
    invoke_results = _live_lookups(args, stack) if live_pins and getattr(args, "live", False) else {}
    if getattr(args, "facts", None) is not None:
        invoke_results.update(_recorded_facts(args, stack))
    return plan_with_references(_program(args), stack, _platform(args), _stack_outputs(args),
                                invoke_results or None)


def _recorded_facts(args: argparse.Namespace, stack: str) -> dict[str, Any]:
    """`plan --facts FILE`: the adopted cluster's facts as `preflight --record` wrote them, answering the
    preflight's look-ups instead of the mocks' placeholders."""
    from eks_karpenter.tools.facts import FactsFileError, facts_invoke_results, read_facts

    path: Path = args.facts
    cfg = validated_stack_config(load_project(args.program), stack)
    if not cfg.cluster.existing:
        raise UsageError(f"--facts {path}: stack {stack!r} creates its cluster; facts are an adopted cluster's")
    try:
        data = read_facts(path.read_text(), str(path), cfg.cluster.name)
    except OSError as exc:
        raise UsageError(f"--facts {path}: {exc.strerror or exc}") from None
    except FactsFileError as exc:
        raise UsageError(f"--facts {exc}") from None
    return facts_invoke_results(data, cfg.region)


def _live_lookups(args: argparse.Namespace, stack: str) -> dict[str, Any]:
    """`plan --live`: the pin look-ups answered by AWS in the stack's region (credentials, boto3)."""
    from eks_karpenter.tools.engine.runner import stack_region
    from eks_karpenter.tools.pins import live_invoke_results

    try:
        import boto3
    except ImportError:
        raise UsageError("--live needs boto3: pip install 'eks-karpenter[live]'") from None
    session = boto3.Session(region_name=stack_region(_program(args), stack))
    return live_invoke_results(session.client("eks"), session.client("ssm"))


def _parser(prog: str = "eks-karpenter") -> argparse.ArgumentParser:
    # The package is imported before any of its modules, so its version is there without importing it back.
    version = sys.modules["eks_karpenter"].__version__
    parser = _Parser(prog=prog, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.set_defaults(prog=prog)  # messages name the command as it was run (`python -m infra`, `eks-karpenter`)
    parser.add_argument("--version", action="version", version=f"eks-karpenter {version}",
                        help="print the library's version (eks_karpenter.__version__) and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", title="commands")

    plan = sub.add_parser("plan", help="run the program offline under Pulumi's mock runtime")
    plan.add_argument("--stack", required=True, help="stack name: reads <stackConfigDir>/Pulumi.<stack>.yaml")
    add_project_arguments(plan)
    plan.add_argument("--format", choices=("tree", "json", "markdown", "mermaid", "urns"), default="tree",
                      help="urns: the sorted URNs, one per line (the golden files in tests/golden/)")
    plan.add_argument("--live", action="store_true", help="check the pins against AWS in the stack's region "
                      "(add-on versions, AMI aliases, node group releases; credentials and boto3 needed)")
    plan.add_argument("--out", type=Path, help="also write manifests, Helm values and IAM documents here")
    plan.add_argument("--facts", type=Path, metavar="FILE", help="an adopted cluster's facts recorded by "
                      "`preflight --record FILE`, in place of the offline placeholders (node groups, version, "
                      "what its API answered)")

    preflight = sub.add_parser("preflight", help="record an adopted cluster's facts for the offline plan: its "
                               "version, the node groups and what its API answers (AWS credentials, boto3 and "
                               "kubernetes needed)")
    preflight.add_argument("--stack", required=True, help="stack name: reads <stackConfigDir>/Pulumi.<stack>.yaml")
    preflight.add_argument("--record", required=True, type=Path, metavar="FILE",
                           help="write the facts here (JSON; `plan --facts FILE` reads it)")
    add_project_arguments(preflight, references=False)

    schema = sub.add_parser("schema", help="print the JSON Schema of a stack file (keys in the project's namespace)")
    schema.add_argument("--program", type=Path, metavar="DIR",
                        help="Pulumi project folder whose name is the config namespace (default: the current "
                             "directory; eks-karpenter when it has no Pulumi.yaml)")

    deploy = sub.add_parser("deploy-policy", help="print the deploy role's least-privilege IAM policy for a stack: the "
                                                  "actions of the resource types its offline plan contains")
    deploy.add_argument("--stack", required=True, help="stack name: reads <stackConfigDir>/Pulumi.<stack>.yaml")
    deploy.add_argument("--out", type=Path, metavar="DIR", help="write it as managed policies IAM accepts (each "
                        "within 6,144 characters), deploy-role-policy-N.json, instead of printing it whole")
    add_project_arguments(deploy)

    pack = sub.add_parser("policy-pack", help="write the CrossGuard policy pack to a folder for "
                                              "`pulumi preview --policy-pack DIR`")
    pack.add_argument("--out", type=Path, required=True, metavar="DIR", help="folder to write the pack into")
    pack.add_argument("--virtualenv", metavar="PATH", help="the pack's Python virtualenv, relative to DIR "
                      "(default: none, the `python3` on PATH runs it)")

    add_analysis_parsers(sub)
    smoke.add_parser(sub)
    from eks_karpenter.tools import pins

    pins.add_parser(sub)
    return parser


def cmd_plan(args: argparse.Namespace) -> int:
    _check_stack(args.stack)
    if args.out:
        _prepare_out(args.out)
    doc = _plan(args, args.stack)
    if args.format == "json":
        text = doc.to_json()
    elif args.format == "markdown":
        text = render_markdown(doc)
    elif args.format == "urns":
        text = "".join(f"{urn}\n" for urn in sorted(r.urn for r in doc.resources))
    elif args.format == "mermaid":
        from eks_karpenter.tools.engine.mermaid import render_mermaid

        text = render_mermaid(doc)
    else:
        text = render_tree(doc)
    if args.out:
        try:
            written = write_artifacts(doc, args.out)
        except OSError as exc:
            raise UsageError(f"--out {args.out}: cannot write {exc.filename or args.out} "
                             f"({exc.strerror or exc})") from None
        print(f"wrote {len(written)} files under {args.out}", file=sys.stderr)
    sys.stdout.write(text)
    return 0


def _namespace(args: argparse.Namespace) -> str:
    """The config namespace: the name of the project `--program` (else the wrapper's default, else the current
    directory) names; `eks-karpenter` outside any project."""
    from eks_karpenter.config.namespaces import PROJECT
    from eks_karpenter.tools.engine.runner import ProgramProject

    root = _program(args)
    return ProgramProject.load(root).name if (root / "Pulumi.yaml").is_file() else PROJECT


def cmd_preflight(args: argparse.Namespace) -> int:
    from eks_karpenter.platform.preflight.probe import probe
    from eks_karpenter.tools.facts import record_facts

    _check_stack(args.stack)
    project = load_project(args.program)
    cfg = validated_stack_config(project, args.stack)
    if not cfg.cluster.existing:
        raise UsageError(f"preflight: stack {args.stack!r} creates its cluster (cluster.existing is not set)")
    try:
        import boto3
    except ImportError:
        raise UsageError("preflight --record needs boto3: pip install 'eks-karpenter[live]'") from None
    session = boto3.Session(region_name=cfg.region)
    eks = session.client("eks")
    try:
        facts = record_facts(cfg, project.name, args.stack, eks, probe, session.client("ec2"))
    except Exception as exc:  # botocore: no credentials, no network, no such cluster
        raise UsageError(f"preflight: cannot read cluster {cfg.cluster.name!r} in {cfg.region}: "
                         f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
    try:
        args.record.write_text(json.dumps(facts, indent=2, sort_keys=True) + "\n")
    except OSError as exc:
        raise UsageError(f"--record {args.record}: {exc.strerror or exc}") from None
    print(f"wrote {args.record}: plan with `eks-karpenter plan --stack {args.stack} --facts {args.record}`",
          file=sys.stderr)
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    from eks_karpenter.platform.stack import stack_file_schema

    sys.stdout.write(json.dumps(stack_file_schema(_namespace(args)), indent=2, sort_keys=True) + "\n")
    return 0


def cmd_deploy_policy(args: argparse.Namespace) -> int:
    from eks_karpenter.tools.deploy_role import deploy_role_policy, managed_policies

    _check_stack(args.stack)
    document = json.loads(_plan(args, args.stack).to_json())
    try:
        policy = deploy_role_policy([document])
    except KeyError as exc:
        raise PlanError(str(exc.args[0])) from None
    if args.out is None:
        sys.stdout.write(json.dumps(policy, indent=2) + "\n")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    for stale in args.out.glob("deploy-role-policy-*.json"):  # a longer policy's parts from an earlier run
        stale.unlink()
    for i, part in enumerate(managed_policies(policy), 1):
        path = args.out / f"deploy-role-policy-{i}.json"
        path.write_text(json.dumps(part, indent=2) + "\n")
        sys.stdout.write(f"{path}\n")
    return 0


def cmd_policy_pack(args: argparse.Namespace) -> int:
    from eks_karpenter.tools.policypack import write_pack

    try:
        written = write_pack(args.out, args.virtualenv)
    except OSError as exc:
        raise UsageError(f"--out {args.out}: cannot write there ({exc.strerror or exc})") from None
    print(f"wrote {len(written)} files under {args.out}: pulumi preview --policy-pack {args.out}", file=sys.stderr)
    return 0


def _diff_sides(args: argparse.Namespace) -> tuple[PlanDocument, PlanDocument]:
    """The old and new plans: two plan files, the stack at a git ref and in the working tree, or the stack with
    the installed library and with a candidate library; each side planned in its own process with its own code."""
    from eks_karpenter.tools.engine.baseline import plan_at_ref, plan_in_tree, plan_with_library

    if args.base is not None or args.library is not None:
        if args.files or not args.stack or (args.base is not None and args.library is not None):
            raise PlanError("diff --base REF or --library CANDIDATE needs --stack and no files (and not both)")
        _check_stack(args.stack)
        program = _program(args)
        if args.library is not None:
            # The candidate first: one that cannot be installed fails before the installed side is planned.
            candidate = plan_with_library(program, args.stack, args.library)
            return plan_in_tree(program, args.stack), candidate
        # Base first: a bad ref fails fast, before the working tree is planned.
        return plan_at_ref(program, args.stack, args.base), plan_in_tree(program, args.stack)
    if len(args.files) == 2 and args.stack is None:
        old, new = (_read_plan(path) for path in args.files)
        return old, new
    raise PlanError("diff needs two plan files (OLD.json NEW.json), --base REF --stack STACK, or "
                    "--library CANDIDATE --stack STACK")


def cmd_diff(args: argparse.Namespace) -> int:
    from eks_karpenter.tools.engine.diff import diff_plans, render_diff_markdown

    old, new = _diff_sides(args)
    from eks_karpenter.tools.engine.upgrades import render_upgrades, upgrade_problems

    diff = diff_plans(old, new)
    sys.stdout.write(render_diff_markdown(diff, _compared(args)))
    if old.format != new.format:
        note = (f"The two sides wrote plan documents of different formats ({old.format} and {new.format}): they "
                "were planned by different versions of the engine, so a field only one of them writes shows as a "
                "change.")
        sys.stdout.write(f"\n> [!NOTE]\n> {note}\n")
        print(f"note: {note}", file=sys.stderr)
    # Upgrade order and its refusals are about one stack over time, not about two stacks side by side.
    one_stack = (old.stack, old.project) == (new.stack, new.project)
    upgrades = render_upgrades(old, new) if one_stack else ""
    if upgrades:
        sys.stdout.write("\n" + upgrades)
    # The comment is written either way; the exit status stops a pipeline before `pulumi up`.
    for refusal in diff.refused:
        print(f"error: refused: {refusal.key}: {refusal.message}", file=sys.stderr)
    problems = upgrade_problems(old, new) if one_stack else []
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    return REFUSED if diff.refused or problems else 0


def _compared(args: argparse.Namespace) -> str:
    """What a diff compares, for its header: the base ref (and its commit) against the working tree, the
    installed library against a candidate, or two plan files."""
    from eks_karpenter.tools.engine.baseline import describe_ref

    version = sys.modules["eks_karpenter"].__version__  # (as `_parser` reads it: no import of the package back)

    if args.base is not None:
        return f"{describe_ref(_program(args), args.base)} (old) → the working tree (new)"
    if args.library is not None:
        return (f"the installed library, eks-karpenter {version} (old) → the candidate library "
                f"`{args.library}` (new)")
    old, new = args.files
    return f"`{old}` (old) → `{new}` (new)"


REFUSED = 3
"""Exit status of `diff` when the change is one `pulumi up` cannot carry out (1 is a usage or planning error)."""


def _read_plan(path: Path) -> PlanDocument:
    try:
        return PlanDocument.from_json(path.read_text())
    except OSError as exc:
        raise PlanError(f"{path}: {exc.strerror}") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise PlanError(f"{path}: not a `plan --format json` document ({exc})") from None


def cmd_import_legacy(args: argparse.Namespace) -> int:
    from eks_karpenter.config.namespaces import in_namespace
    from eks_karpenter.tools.migrate import (
        Doc,
        LegacyImportError,
        convert_documents,
        parse_documents,
        render_config,
        render_manifests,
    )
    from eks_karpenter.tools.migrate.policy import PackUnavailable, pack_findings, rendered_objects, stack_warnings

    try:
        docs: list[Doc] = []
        problems: list[str] = []
        for path in args.files:
            try:
                text = sys.stdin.read() if str(path) == "-" else path.read_text()
                docs += parse_documents(str(path), text)
            except OSError as exc:
                problems.append(f"{path}: {exc.strerror}")
            except UnicodeDecodeError:
                problems.append(f"{path}: not UTF-8 text")
            except LegacyImportError as exc:
                problems += exc.problems
        if problems:
            raise LegacyImportError(problems)
        conversion = convert_documents(docs, _legacy_target(args))
        if args.format == "manifests":
            objects = conversion.manifests(args.node_role)
            out = render_manifests(objects)
        else:
            objects = rendered_objects(conversion, args.node_role)
            out = render_config(conversion, [str(p) for p in args.files], args.node_role, _namespace(args),
                                f"{args.prog} import-legacy", _stack_file_shown(args))
    except LegacyImportError as exc:
        print(f"error: {in_namespace(str(exc), _namespace(args))}", file=sys.stderr)
        return 1

    for note in conversion.notes:
        print(f"note: {in_namespace(note, _namespace(args))}", file=sys.stderr)
    stack = validated_stack_config(load_project(args.program), args.stack) if args.stack else None
    for warning in stack_warnings(conversion, stack) if stack else []:
        print(f"warning: {in_namespace(warning, _namespace(args))}", file=sys.stderr)
    try:
        findings = pack_findings(objects)
    except PackUnavailable as exc:
        print(f"note: not checked against the policy pack here (optional: {exc}, or run `pulumi preview "
              f"--policy-pack DIR` on the stack once pasted; `{args.prog} policy-pack --out DIR` writes the pack)",
              file=sys.stderr)
    else:
        for finding in findings:
            print(f"warning: policy pack: {finding}", file=sys.stderr)
        if not findings:
            print("note: the converted NodePools and EC2NodeClasses pass the policy pack's rules for them "
                  "(`policy-pack`)", file=sys.stderr)
    sys.stdout.write(out)
    return 0


def _stack_file_shown(args: argparse.Namespace) -> str:
    """The stack file to paste into, as the project places it (`stackConfigDir`): `Pulumi.<stack>.yaml` at a
    template project's root, `stacks/Pulumi.dev.yaml` here with `--stack dev`."""
    from eks_karpenter.tools.engine.runner import ProgramProject

    root = _program(args)
    stack = args.stack or "<stack>"
    if not (root / "Pulumi.yaml").is_file():
        return f"your stack file (Pulumi.{stack}.yaml)"
    project = ProgramProject.load(root.resolve())
    return project.shown(project.stack_file(stack))


def _legacy_target(args: argparse.Namespace) -> str:
    """The Kubernetes version import-legacy converts for: given, the stack's, or the library's default."""
    from eks_karpenter import versions

    if args.kubernetes_version:
        if args.kubernetes_version not in versions.SUPPORTED_KUBERNETES_VERSIONS:
            raise UsageError(f"--kubernetes-version {args.kubernetes_version}: one of "
                             f"{', '.join(versions.SUPPORTED_KUBERNETES_VERSIONS)}")
        return str(args.kubernetes_version)
    if not args.stack:
        return versions.KUBERNETES_VERSION
    from eks_karpenter.tools.engine.runner import ProgramProject, flat_config

    _check_stack(args.stack)
    project = ProgramProject.load(_program(args).resolve())
    flat = flat_config(project, args.stack)
    try:
        cluster = json.loads(flat.get(f"{project.name}:cluster", "{}"))
    except ValueError:
        cluster = {}
    version = cluster.get("version", versions.KUBERNETES_VERSION) if isinstance(cluster, dict) else None
    if version not in versions.SUPPORTED_KUBERNETES_VERSIONS:
        raise UsageError(f"--stack {args.stack}: its {project.name}:cluster.version {version!r} is not one this "
                         "library supports")
    return str(version)


def cmd_cost(args: argparse.Namespace) -> int:
    from eks_karpenter.platform.stack import load_stack_config
    from eks_karpenter.tools.cost import estimate, inputs_from_config, inputs_from_plan
    from eks_karpenter.tools.cost.live import LiveError, fetch_live_prices
    from eks_karpenter.tools.cost.report import render_markdown as cost_markdown
    from eks_karpenter.tools.cost.report import render_text
    from eks_karpenter.tools.engine.runner import flat_config

    _check_stack(args.stack)
    project = load_project(args.program)
    stack_file = project.stack_file(args.stack)
    flat = flat_config(project, args.stack)
    if f"{project.name}:cluster" in flat:  # a platform stack of this library: priced from its validated config
        inputs = inputs_from_config(load_stack_config(flat, project.shown(stack_file), project=project.name))
    else:  # another program (a consumer): its NodePools and priced resources, from its offline plan
        doc = _plan(args, args.stack, live_pins=False)  # `cost --live` is about prices, not the pins
        inputs = inputs_from_plan(doc.resources, flat.get("aws:region", "us-east-1"))
    live = None
    if args.live:
        try:
            live = fetch_live_prices(inputs.region)
        except LiveError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
    doc_ = estimate(inputs, args.as_of or date.today(), live, types=args.types)
    title = f"{project.name} / {args.stack}"
    if args.format == "json":
        sys.stdout.write(json.dumps(doc_, indent=2) + "\n")
    elif args.format == "markdown":
        sys.stdout.write(cost_markdown(doc_, title))
    else:
        sys.stdout.write(render_text(doc_, title))
    return 0


def cmd_simulate(args: argparse.Namespace) -> int:
    from eks_karpenter.catalogue.prices import priced_catalogue
    from eks_karpenter.tools.simulate import WorkloadError, load_workload, pools_for_stack, schedule, schedule_fixed
    from eks_karpenter.tools.simulate.report import Simulation, render_json, render_markdown, render_text

    _check_stack(args.stack)
    cfg = validated_stack_config(load_project(args.program), args.stack)
    try:
        workload = load_workload(str(args.workload))
    except WorkloadError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    catalogue = priced_catalogue(cfg.region)  # the stack's region's prices (catalogue/prices.py)
    fixed_type = catalogue.by_name.get(args.fixed_instance_type)
    if fixed_type is None or fixed_type.on_demand_hourly is None:
        why = "not in the catalogue" if fixed_type is None else "has no catalogue price"
        raise PlanError(f"--fixed-instance-type {args.fixed_instance_type}: {why}")
    sim = Simulation(args.stack, cfg.region, str(args.workload), workload,
                     schedule(pools_for_stack(cfg, catalogue), workload, catalogue.label_keys),
                     schedule_fixed(fixed_type, workload), catalogue)
    render = {"json": render_json, "markdown": render_markdown, "text": render_text}[args.format]
    sys.stdout.write(render(sim))
    return 0


def cmd_smoke(args: argparse.Namespace) -> int:
    return smoke.cmd_smoke(args)


def cmd_pins(args: argparse.Namespace) -> int:
    from eks_karpenter.tools import pins

    return pins.run(args)


COMMANDS = {"plan": cmd_plan, "schema": cmd_schema, "policy-pack": cmd_policy_pack, "deploy-policy": cmd_deploy_policy,
            "diff": cmd_diff, "import-legacy": cmd_import_legacy, "cost": cmd_cost, "simulate": cmd_simulate,
            "smoke": cmd_smoke, "pins": cmd_pins, "preflight": cmd_preflight}


COMMAND_GC_THRESHOLDS = (10_000, 10, 10)
"""Collector thresholds for a command run as its own process (CPython's default is (700, 10, 10))."""


def _unknown_option(parser: argparse.ArgumentParser, words: list[str]) -> str | None:
    """`plan --stak dev`: the first `--option` the command run does not have, with the closest one it has."""
    from eks_karpenter.config.errors import suggest

    commands = next((a.choices for a in parser._actions if isinstance(a.choices, dict)), {})
    command = next((w for w in words if w in commands), None)
    target: argparse.ArgumentParser = commands[command] if command else parser
    known = [s for a in target._actions for s in a.option_strings]
    for word in words:
        option = word.split("=", 1)[0]
        if option.startswith("--") and not any(k.startswith(option) for k in known):  # (prefixes are accepted)
            return f"{target.prog}: unknown option {option}{suggest(option, known)}"
    return None


def main(argv: list[str] | None = None, prog: str = "eks-karpenter") -> int:
    """Run one command; returns the exit code (0, or 1 with one `error:` line on stderr).

    Called as the process's command (`argv` from `sys.argv`), it first raises the collector's thresholds: a plan
    keeps hundreds of thousands of objects alive to its end (provider modules, resources, the plan), and at
    CPython's defaults the collector re-scans them all in full collections, a large share of a large plan's
    time. Cyclic garbage is still collected, less often; a caller's own process is left as it is."""
    if argv is None:
        gc.set_threshold(*COMMAND_GC_THRESHOLDS)
    try:
        parser = _parser(prog)
        words = sys.argv[1:] if argv is None else argv
        if not words:  # what there is to run, rather than only that something is missing
            sys.stderr.write(parser.format_help() + "\n")
            raise UsageError(f"{prog}: no command given: run `{prog} COMMAND` (`{prog} COMMAND --help` for its "
                             "options)")
        try:
            args = parser.parse_args(words)
        except UsageError as exc:  # a misspelt option reads as a missing one: name it first
            raise UsageError(_unknown_option(parser, words) or str(exc)) from None
        return COMMANDS[args.command](args)
    except (pulumi.RunError, PlanError, PlanReferenceError, UsageError) as exc:
        # Config errors are for people: the message names the file and key; a traceback would bury it.
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # `python -m eks_karpenter.tools.cli`, the console script's equivalent without a script
    sys.exit(main())
