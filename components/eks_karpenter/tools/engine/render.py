"""Ways to show a plan: a readable tree, Markdown for pull requests, and files for review."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from eks_karpenter.labels import (
    ARCH,
    CAPACITY_TYPE,
    INSTANCE_CATEGORY,
    INSTANCE_FAMILY,
    INSTANCE_GENERATION,
    INSTANCE_SIZE,
    INSTANCE_TYPE,
    OS,
    ZONE,
)
from eks_karpenter.tools.engine.document import PlanDocument, PlannedResource
from eks_karpenter.tools.engine.plan_cost import plan_cost_lines, plan_cost_pools

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
            text = value if isinstance(value, str) else json.dumps(as_written(value))
            parts.append(f"{key}={text}")
    if r.type.startswith("kubernetes:") and "kind" in r.inputs:
        parts.append(f"kind={r.inputs['kind']}")
    if r.options.get("protect"):
        parts.append("protected")
    return "  ".join(parts)


def as_written(value: Any) -> Any:
    """Numbers as the stack file wrote them: the engine's protobuf Struct makes every number a float, so a
    whole float is shown as the integer it was (`300`, not `300.0`); keys sorted, since the order a Struct's map
    comes back in depends on the protobuf version and the hash seed."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: as_written(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [as_written(v) for v in value]
    return value


def _limits(limits: dict[str, Any]) -> str:
    """A NodePool's `spec.limits` as `cpu 16, memory 64Gi`, by resource name (not as the engine returned them)."""
    return ", ".join(f"{k} {_text(v)}" for k, v in as_written(limits).items())


def _text(value: Any) -> str:
    value = as_written(value)
    return value if isinstance(value, str) else json.dumps(value)


# Requirement keys a reviewer reads first, with short labels, in this order; others follow by key.
_REQUIREMENT_LABELS = {
    CAPACITY_TYPE: "capacity",
    ARCH: "arch",
    OS: "os",
    INSTANCE_CATEGORY: "categories",
    INSTANCE_FAMILY: "families",
    INSTANCE_TYPE: "instance types",
    INSTANCE_GENERATION: "generation",
    INSTANCE_SIZE: "sizes",
    ZONE: "zones",
}
_OPERATORS = {"In": "", "NotIn": "not ", "Gt": "> ", "Lt": "< ", "Exists": "any", "DoesNotExist": "none", "Gte": ">= ",
              "Lte": "<= "}


def _requirement(req: dict[str, Any]) -> str:
    key = str(req.get("key"))
    label = _REQUIREMENT_LABELS.get(key, key)
    op = str(req.get("operator"))
    values = ", ".join(_text(v) for v in req.get("values", []))
    shown = _OPERATORS.get(op, f"{op} ")
    return f"{label}: {shown}{values}" if op not in ("Exists", "DoesNotExist") else f"{label}: {shown}"


def _budget(budget: dict[str, Any]) -> str:
    text = f"nodes {_text(budget.get('nodes', '10%'))}"
    if budget.get("schedule"):
        text += f" from \"{budget['schedule']}\" for {budget.get('duration', '?')}"
    if budget.get("reasons"):
        text += f" ({', '.join(budget['reasons'])})"
    return text


def karpenter_details(r: PlannedResource) -> list[str]:
    """What a reviewer needs of a NodePool (what it may launch, how much, how it disrupts) or an
    EC2NodeClass (its AMI and role), as short lines."""
    spec = r.inputs.get("spec")
    if not isinstance(spec, dict):
        return []
    kind = r.inputs.get("kind")
    if kind == "NodePool":
        return _node_pool_details(spec)
    if kind == "EC2NodeClass":
        return [_node_class_details(spec)]
    return []


def _node_pool_details(spec: dict[str, Any]) -> list[str]:
    """Requirements (the ones a reviewer reads first, first), limits and the rest, disruption."""
    template = (spec.get("template") or {}).get("spec") or {}
    reqs = [q for q in template.get("requirements", []) if isinstance(q, dict)]
    order = list(_REQUIREMENT_LABELS)
    reqs.sort(key=lambda q: (order.index(q["key"]) if q.get("key") in order else len(order), str(q.get("key"))))
    limits = spec.get("limits") or {}
    shown = _limits(limits) or "none (unbounded)"
    extra = _pool_extras(spec, template)
    disruption = spec.get("disruption") or {}
    policy = disruption.get("consolidationPolicy", "WhenEmptyOrUnderutilized")
    after = disruption.get("consolidateAfter")
    budgets = "; ".join(_budget(b) for b in disruption.get("budgets", [])) or "nodes 10% (default)"
    return [" · ".join(_requirement(q) for q in reqs) or "requirements: none",
            f"limits: {shown} · " + " · ".join(extra) if extra else f"limits: {shown}",
            f"disruption: {policy}" + (f" after {after}" if after else "") + f" · budgets: {budgets}"]


def _pool_extras(spec: dict[str, Any], template: dict[str, Any]) -> list[str]:
    """The pool's class, weight, expiry and taints, those it sets."""
    node_class = (template.get("nodeClassRef") or {}).get("name")
    extra = [f"class {node_class}"] if node_class else []
    if "weight" in spec:
        extra.append(f"weight {_text(spec['weight'])}")
    if template.get("expireAfter"):
        extra.append(f"expireAfter {template['expireAfter']}")
    if template.get("taints"):
        extra.append("taints " + ", ".join(f"{t.get('key')}={t.get('value', '')}:{t.get('effect')}"
                                            for t in template["taints"]))
    return extra


def _node_class_details(spec: dict[str, Any]) -> str:
    """Its AMI selector terms, and the role or instance profile its nodes get."""
    amis = [f"{k} {_text(v)}" for term in spec.get("amiSelectorTerms", []) for k, v in as_written(term).items()]
    who = (f"role {spec['role']}" if spec.get("role") else
           f"instance profile {spec['instanceProfile']}" if spec.get("instanceProfile") else "")
    return "ami: " + ("; ".join(amis) or "none") + (f" · {who}" if who else "")


def at_a_glance(doc: PlanDocument) -> list[str]:
    """What a first cluster's owner checks before anything else: the NAT gateways it pays for whatever the load,
    and how far each NodePool may grow (its `spec.limits`, and what that costs at the cpu limit, on-demand)."""
    lines: list[str] = []
    nats = len(doc.by_type("aws:ec2/natGateway:NatGateway"))
    if doc.by_type("aws:ec2/vpc:Vpc") or nats:
        per = "one for all zones (network.natGateways: single)" if nats == 1 else \
            "one per zone (network.natGateways: perAz; `single` shares one)" if nats else "none"
        lines.append(f"  NAT gateways: {nats}, {per}")
    pools = [r for r in doc.resources if r.inputs.get("kind") == "NodePool" and isinstance(r.inputs.get("spec"), dict)]
    if pools:
        ceilings = {str(p["name"]): p for p in plan_cost_pools(doc)}
        shown = []
        for r in pools:
            name = str((r.inputs.get("metadata") or {}).get("name") or r.name)
            limits = r.inputs["spec"].get("limits") or {}
            text = _limits(limits) or "no limits (unbounded)"
            cost = (ceilings.get(name) or {}).get("monthlyAtCpuLimit")
            if isinstance(cost, dict) and cost.get("max") is not None:
                text += f" (up to ${cost['max']:,.0f}/month at the cpu limit, on-demand)"
            shown.append(f"{name} {text}")
        lines.append("  NodePool ceilings: " + "; ".join(shown))
    return lines


def render_tree(doc: PlanDocument) -> str:
    """Components and their children, indented, with the key inputs of each resource."""
    by_parent: dict[str, list[PlannedResource]] = {}
    for r in doc.resources:
        by_parent.setdefault(r.parent, []).append(r)
    custom = sum(1 for r in doc.resources if r.custom)
    lines = [f"{doc.project} / {doc.stack}: {custom} resources in {len(doc.resources) - custom} components",
             *at_a_glance(doc)]

    def walk(parent: str, prefix: str) -> None:
        kids = by_parent.get(parent, [])
        for i, r in enumerate(kids):
            last = i == len(kids) - 1
            extra = _key_inputs(r)
            lines.append(f"{prefix}{'└─ ' if last else '├─ '}{r.type} {r.name}" + (f"  {extra}" if extra else ""))
            inner = prefix + ("   " if last else "│  ")
            has_kids = bool(by_parent.get(r.urn))
            lines.extend(f"{inner}{'│' if has_kids else ' '}   {d}" for d in karpenter_details(r))
            walk(r.urn, inner)

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
        cell = "<br>".join(part for part in [_key_inputs(r), *karpenter_details(r)] if part).replace("|", "\\|")
        lines.append(f"| `{r.type}` | `{r.name}` | {cell} |")
    lines += ["", "</details>"]
    lines += plan_cost_lines(doc)
    windows = doc.outputs.get("disruptionWindows") or {}
    if windows:  # NodePool budgets given in local time (platform/nodepool/windows.py)
        lines += ["", "**Disruption windows** (local time, as rendered to Karpenter's UTC schedules)", ""]
        lines += [f"- `{pool}`: {w['local']} -> {w['utc']}" + (f". {w['daylightSaving']}" if w["daylightSaving"]
                                                                 else " (no daylight saving: exact)")
                  for pool, ws in sorted(windows.items()) for w in ws]
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
