"""A plan as a Mermaid flowchart: the component tree, one subgraph per layer, custom resources counted by type.

Meant for a README or a PR description (GitHub renders ```mermaid blocks). It shows the shape of a stack, not
every resource: 80 subnets and routes become a handful of "type x n" boxes. Output is deterministic: the same
plan gives the same text, so it can be committed and diffed.
"""

from __future__ import annotations

import re

from eks_karpenter.tools.engine.document import PlanDocument, PlannedResource

TIMES = "\N{MULTIPLICATION SIGN}"


class _Ids:
    """Stable, Mermaid-safe node ids: word characters only, with a prefix so no id is a keyword like `end`."""

    def __init__(self) -> None:
        self._ids: dict[tuple[str, str], str] = {}
        self._used: set[str] = set()

    def get(self, prefix: str, key: str, hint: str = "") -> str:
        """The id for `key` (a URN), readable from `hint`; the first caller's hint wins."""
        if (prefix, key) not in self._ids:
            base = f"{prefix}_" + re.sub(r"\W+", "_", hint or key).strip("_")
            candidate, n = base, 2
            while candidate in self._used:
                candidate, n = f"{base}_{n}", n + 1
            self._used.add(candidate)
            self._ids[(prefix, key)] = candidate
        return self._ids[(prefix, key)]


def _short(type_: str) -> str:
    """`aws:ec2/subnet:Subnet` -> `Subnet`: enough for an id, which only has to be unique and readable."""
    return type_.rsplit(":", 1)[-1]


def _label(*lines: str) -> str:
    return '["' + "<br/>".join(line.replace('"', "#quot;") for line in lines) + '"]'


def _summary(resources: list[PlannedResource]) -> str:
    protected = sum(1 for r in resources if r.options.get("protect"))
    text = f"{resources[0].type} {TIMES}{len(resources)}"
    if protected:
        text += " (protected)" if protected == len(resources) else f" ({protected} protected)"
    return text


def render_mermaid(doc: PlanDocument) -> str:
    """The component tree of a plan as a Mermaid `flowchart`."""
    ids = _Ids()
    children: dict[str, list[PlannedResource]] = {}
    for r in doc.resources:  # already in URN order: deterministic
        children.setdefault(r.parent, []).append(r)
    custom = sum(1 for r in doc.resources if r.custom)
    lines = ["flowchart TB", f"    %% {doc.project} / {doc.stack}: {custom} resources in "
             f"{len(doc.resources) - custom} components"]
    edges: list[str] = []

    def below(parent: str) -> tuple[list[PlannedResource], dict[str, list[PlannedResource]]]:
        """The components and (by type) the custom resources whose nearest component is `parent`: a policy
        attachment parented to its role counts for the role's component."""
        components: list[PlannedResource] = []
        by_type: dict[str, list[PlannedResource]] = {}
        pending = list(children.get(parent, []))
        while pending:
            r = pending.pop(0)
            if not r.custom:
                components.append(r)
                continue
            by_type.setdefault(r.type, []).append(r)
            pending += children.get(r.urn, [])
        return sorted(components, key=lambda r: r.urn), dict(sorted(by_type.items()))

    def component(r: PlannedResource, indent: str) -> None:
        node = ids.get("c", r.urn, r.name)
        kids, groups = below(r.urn)
        has_children = bool(children.get(r.urn))
        if has_children:
            lines.append(f"{indent}subgraph {ids.get('s', r.urn, r.name)}{_label(r.name)}")
            lines.append(f"{indent}    direction LR")
            inner = indent + "    "
        else:
            inner = indent
        lines.append(f"{inner}{node}(" + _label(r.type, r.name) + ")")
        for kid in kids:
            component(kid, inner)
            edges.append(f"    {node} --> {ids.get('c', kid.urn)}")
        for type_, members in groups.items():
            group = ids.get("g", f"{r.urn}/{type_}", f"{r.name}_{_short(type_)}")
            lines.append(f"{inner}{group}{_label(_summary(members))}")
            edges.append(f"    {node} --> {group}")
        if has_children:
            lines.append(f"{indent}end")

    tops, loose = below("")
    for top in tops:
        component(top, "    ")
    if loose:  # resources registered at the stack root, outside any component
        lines.append(f"    subgraph {ids.get('s', '', 'stack')}{_label('stack')}")
        lines += [f"        {ids.get('g', '/' + t, _short(t))}{_label(_summary(m))}" for t, m in loose.items()]
        lines.append("    end")
    lines += edges
    lines += _layer_edges(doc, ids)
    return "\n".join(lines) + "\n"


def _layer_edges(doc: PlanDocument, ids: _Ids) -> list[str]:
    """Dotted edges between layers whose resources depend on each other (cluster -> network, ...)."""
    by_urn = {r.urn: r for r in doc.resources}

    def layer(urn: str) -> PlannedResource | None:
        r = by_urn.get(urn)
        while r is not None and r.parent:
            r = by_urn.get(r.parent)
        return r if r is not None and not r.custom else None

    def box(top: PlannedResource) -> str:
        # A layer with children is a subgraph; an empty one is just its node.
        return ids.get("s" if any(r.parent == top.urn for r in doc.resources) else "c", top.urn)

    pairs: set[tuple[str, str]] = set()
    for r in doc.resources:
        for dep in r.dependencies:
            a, b = layer(r.urn), layer(dep)
            if a is not None and b is not None and a.urn != b.urn:
                pairs.add((box(a), box(b)))
    return [f"    {a} -. depends on .-> {b}" for a, b in sorted(pairs)]
