"""Ways to show a plan: a readable tree, Markdown for pull requests, and files for review."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from infra.engine.cost import plan_cost_lines
from infra.engine.document import PlanDocument, PlannedResource

# The inputs worth a glance per type; everything else is in --format json.
KEY_INPUTS: dict[str, tuple[str, ...]] = {
    "aws:ec2/vpc:Vpc": ("cidrBlock",),
    "aws:ec2/subnet:Subnet": ("availabilityZone", "cidrBlock"),
    "aws:ec2/tag:Tag": ("resourceId", "key", "value"),
    "aws:ec2/route:Route": ("destinationCidrBlock",),
    "eks:index:Cluster": ("name", "version", "authenticationMode"),
    "eks:index:ManagedNodeGroup": ("nodeGroupName", "capacityType", "instanceTypes"),
    "aws:eks/addon:Addon": ("addonName", "addonVersion"),
    "aws:eks/accessEntry:AccessEntry": ("type",),
    "aws:iam/role:Role": ("name",),
    "aws:iam/policy:Policy": ("name",),
    "aws:sqs/queue:Queue": ("name", "messageRetentionSeconds"),
    "aws:cloudwatch/eventRule:EventRule": ("name",),
    "kubernetes:helm.sh/v3:Release": ("chart", "version", "namespace"),
}


def _key_inputs(r: PlannedResource) -> str:
    parts = []
    for key in KEY_INPUTS.get(r.type, ()):
        if key in r.inputs:
            value = r.inputs[key]
            text = value if isinstance(value, str) else json.dumps(value)
            parts.append(f"{key}={text}")
    if r.type.startswith("kubernetes:") and "kind" in r.inputs:
        parts.append(f"kind={r.inputs['kind']}")
    if r.options.get("protect"):
        parts.append("protected")
    return "  ".join(parts)


def render_tree(doc: PlanDocument) -> str:
    """Components and their children, indented, with the key inputs of each resource."""
    by_parent: dict[str, list[PlannedResource]] = {}
    for r in doc.resources:
        by_parent.setdefault(r.parent, []).append(r)
    custom = sum(1 for r in doc.resources if r.custom)
    lines = [f"{doc.project} / {doc.stack}: {custom} resources in {len(doc.resources) - custom} components"]

    def walk(parent: str, prefix: str) -> None:
        kids = by_parent.get(parent, [])
        for i, r in enumerate(kids):
            last = i == len(kids) - 1
            extra = _key_inputs(r)
            lines.append(f"{prefix}{'└─ ' if last else '├─ '}{r.type} {r.name}" + (f"  {extra}" if extra else ""))
            walk(r.urn, prefix + ("   " if last else "│  "))

    walk("", "")
    if doc.warnings:
        lines.append("")
        lines += [f"warning: {w}" for w in doc.warnings]
    return "\n".join(lines) + "\n"


def render_markdown(doc: PlanDocument) -> str:
    """A pull-request comment: counts per layer and type, then every resource with its key inputs."""
    layers = Counter(r.layer for r in doc.resources if r.custom)
    lines = [f"### Offline plan: `{doc.project}` / `{doc.stack}`", "",
             f"{sum(layers.values())} resources would be registered.", "",
             "| layer | resources |", "| --- | ---: |"]
    lines += [f"| `{layer}` | {n} |" for layer, n in sorted(layers.items())]
    lines += ["", "<details><summary>Resources</summary>", "", "| type | name | key inputs |",
              "| --- | --- | --- |"]
    for r in doc.resources:
        cell = _key_inputs(r).replace("|", "\\|")
        lines.append(f"| `{r.type}` | `{r.name}` | {cell} |")
    lines += ["", "</details>"]
    lines += plan_cost_lines(doc)
    if doc.warnings:
        lines += ["", "**Warnings**", ""] + [f"- {w}" for w in doc.warnings]
    return "\n".join(lines) + "\n"


def write_artifacts(doc: PlanDocument, out: Path) -> list[Path]:
    """Kubernetes manifests, Helm values and IAM policy documents as files, for review and validators."""
    written: list[Path] = []

    def put(rel: str, text: str) -> None:
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        written.append(path)

    for r in doc.resources:
        inputs = r.inputs
        if r.type.startswith("kubernetes:") and "kind" in inputs and "apiVersion" in inputs:
            manifest = {k: inputs[k] for k in ("apiVersion", "kind", "metadata", "spec", "data") if k in inputs}
            put(f"kubernetes/{inputs['kind'].lower()}-{r.name}.yaml", _yaml(manifest))
        elif r.type == "kubernetes:helm.sh/v3:Release":
            put(f"helm/{r.name}.values.yaml", _yaml(inputs.get("values", {})))
        for field in ("policy", "assumeRolePolicy"):
            if r.type.startswith("aws:") and isinstance(inputs.get(field), str) and inputs[field].startswith("{"):
                suffix = "" if field == "policy" else ".trust"
                put(f"iam/{r.name}{suffix}.json", json.dumps(json.loads(inputs[field]), indent=2) + "\n")
    return written


def _yaml(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False, default_flow_style=False)
