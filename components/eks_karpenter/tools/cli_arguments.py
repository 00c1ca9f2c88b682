"""The command line's arguments shared by several commands, and the commands that compare, convert, price and
simulate (`diff`, `import-legacy`, `cost`, `simulate`); `cli.py` builds the parser from them, as it does from
`smoke` and `pins`' own `add_parser`."""

from __future__ import annotations

import argparse
from datetime import date
from pathlib import Path
from typing import Any


def add_project_arguments(cmd: argparse.ArgumentParser, references: bool = True) -> None:
    """`--program`, and (for commands whose program may reference the platform's stack) `--platform` and
    `--stack-outputs`."""
    cmd.add_argument("--program", type=Path, metavar="DIR",
                     help="Pulumi project folder (default: the current directory)")
    if references:
        cmd.add_argument("--platform", type=Path, metavar="DIR",
                         help="the platform's Pulumi project: its offline plan answers the program's "
                              "StackReferences to it")
        cmd.add_argument("--stack-outputs", type=Path, metavar="FILE",
                         help="JSON object of stack name (<org>/<project>/<stack>) -> its outputs, answering "
                              "StackReferences (e.g. from `pulumi stack output --json`)")


def add_analysis_parsers(sub: Any) -> None:
    """The commands that compare, convert, price and simulate: diff, import-legacy, cost, simulate."""
    diff = sub.add_parser("diff", help="compare two plans: two `plan --format json` files, a stack at a git ref "
                                       "with the working tree, or a stack with the installed library and a "
                                       "candidate one; each side planned with its own code; prints Markdown",
                          description="Exit status 3 (the Markdown is printed all the same): a change `pulumi up` "
                                      "cannot carry out: a created VPC's new CIDR or reordered zones, a Kubernetes "
                                      "minor skipped or downgraded, or a create whose natural key (an access entry's "
                                      "principal, an IAM or queue name, a Kubernetes object's kind, namespace and "
                                      "name, ...) a delete of the same change still holds. See docs/changes.md.")
    diff.add_argument("files", nargs="*", type=Path, metavar="PLAN.json",
                      help="OLD and NEW: two `plan --format json` outputs of one stack")
    diff.add_argument("--base", metavar="REF", help="git ref to compare the working tree with (e.g. origin/main)")
    diff.add_argument("--library", metavar="CANDIDATE",
                      help="plan the stack with the installed library and with CANDIDATE (a wheel, a checkout "
                           "of the library, or a git URL pip can install) and compare: what "
                           "upgrading the library changes")
    diff.add_argument("--stack", help="stack to plan on both sides (with --base or --library)")
    add_project_arguments(diff, references=False)

    legacy = sub.add_parser("import-legacy", help="convert Karpenter v1alpha5 Provisioners and v1alpha1 "
                                                  "AWSNodeTemplates to stack config or v1 manifests")
    legacy.add_argument("files", nargs="+", type=Path, metavar="FILE", help="YAML files (multi-document; - = stdin)")
    legacy.add_argument("--format", choices=("config", "manifests"), default="config",
                        help="config: <project>:nodePools/nodeClasses for a stack file (default); "
                             "manifests: v1 NodePool and EC2NodeClass YAML")
    legacy.add_argument("--node-role", metavar="NAME", help="IAM role name for node classes without an "
                                                            "instanceProfile (required for manifests then)")
    target = legacy.add_mutually_exclusive_group()
    target.add_argument("--kubernetes-version", metavar="X.Y", help="the cluster's Kubernetes version: AMI aliases "
                        "must have AMIs for it (default: the library's default version)")
    target.add_argument("--stack", help="take the Kubernetes version from this stack's <project>:cluster")
    add_project_arguments(legacy, references=False)
    cost = sub.add_parser("cost", help="what a stack can cost: fixed items, per-unit prices, and each node pool's "
                                        "admitted instance types, price range and ceiling at its cpu limit")
    cost.add_argument("--stack", required=True, help="stack name: reads <stackConfigDir>/Pulumi.<stack>.yaml")
    add_project_arguments(cost)
    cost.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    cost.add_argument("--live", action="store_true", help="fetch current on-demand and spot prices for the stack's "
                      "region with your AWS credentials (needs `pip install 'eks-karpenter[live]'`)")
    cost.add_argument("--types", action="store_true", help="also list every instance type each pool admits")
    cost.add_argument("--as-of", type=date.fromisoformat, metavar="YYYY-MM-DD",
                      help="price the control plane as of this day (standard or extended support; default: today)")
    simulate = sub.add_parser("simulate", help="what-if: a workload file's pods on the stack's Karpenter pools "
                                                "versus a fixed managed node group (on-demand prices)")
    simulate.add_argument("--stack", required=True, help="stack name: reads <stackConfigDir>/Pulumi.<stack>.yaml")
    add_project_arguments(simulate, references=False)
    simulate.add_argument("--workload", required=True, metavar="FILE",
                          help="a workload file (deployments: ...), or Kubernetes manifests (Deployment, StatefulSet, "
                               "ReplicaSet, Job, CronJob, Pod, DaemonSet; documents of one file or a `kind: List`, "
                               "as `kubectl get -o yaml` prints them)")
    simulate.add_argument("--fixed-instance-type", default="m5.large", metavar="TYPE",
                          help="instance type of the fixed node group to compare with (default: m5.large)")
    simulate.add_argument("--format", choices=("text", "markdown", "json"), default="text")
