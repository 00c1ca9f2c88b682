"""Command line: `python -m infra plan | schema | diff | import-legacy`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pulumi

from infra.engine import PlanError, plan_program
from infra.engine.render import render_markdown, render_tree, write_artifacts

REPO_ROOT = Path(__file__).resolve().parent.parent


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m infra", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    plan = sub.add_parser("plan", help="run the program offline under Pulumi's mock runtime")
    plan.add_argument("--stack", required=True, help="stack name: reads <stackConfigDir>/Pulumi.<stack>.yaml")
    plan.add_argument("--program", type=Path, default=REPO_ROOT, help="Pulumi project folder (default: this repo)")
    plan.add_argument("--format", choices=("tree", "json", "markdown", "mermaid"), default="tree")
    plan.add_argument("--out", type=Path, help="also write manifests, Helm values and IAM documents here")

    sub.add_parser("schema", help="print the JSON Schema of a stack file")
    return parser


def cmd_plan(args: argparse.Namespace) -> int:
    doc = plan_program(args.program, args.stack)
    if args.format == "json":
        text = doc.to_json()
    elif args.format == "markdown":
        text = render_markdown(doc)
    elif args.format == "mermaid":
        from infra.engine.mermaid import render_mermaid

        text = render_mermaid(doc)
    else:
        text = render_tree(doc)
    if args.out:
        written = write_artifacts(doc, args.out)
        print(f"wrote {len(written)} files under {args.out}", file=sys.stderr)
    sys.stdout.write(text)
    return 0


def cmd_schema(_: argparse.Namespace) -> int:
    from components.stack import stack_file_schema

    sys.stdout.write(json.dumps(stack_file_schema(), indent=2, sort_keys=True) + "\n")
    return 0


COMMANDS = {"plan": cmd_plan, "schema": cmd_schema}


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except (pulumi.RunError, PlanError) as exc:
        # Config errors are for people: the message names the file and key; a traceback would bury it.
        print(f"error: {exc}", file=sys.stderr)
        return 1
