"""Check Helm values against a chart's values.yaml key tree and its templates, without Helm.

Helm silently ignores a values key the templates never read, so a misspelt key (`settings.interuptionQueue`)
is a configuration that quietly does not apply. These helpers find such keys offline:

- `undefined_keys`: value paths absent from the chart's values.yaml key tree;
- `template_reads` / `verbatim_maps`: which `.Values` paths the templates read, and which they render whole
  with `toYaml` (so any key below them is passed through to Kubernetes: an open map).

Paths are dotted (`settings.featureGates.nodeRepair`); lists are leaves (Helm replaces lists, never merges them).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

KARPENTER_OPEN_MAPS = frozenset({
    # Each is rendered whole by `toYaml` in the templates (checked by test_open_maps_are_rendered_verbatim), so
    # its keys are Kubernetes' or the user's, not the chart's.
    "additionalLabels",                            # _helpers.tpl karpenter.labels
    "additionalAnnotations",                       # every object's metadata.annotations
    "service.annotations",                         # service.yaml
    "serviceAccount.annotations",                  # serviceaccount.yaml (IRSA role ARN)
    "serviceMonitor.additionalLabels",             # servicemonitor.yaml
    "serviceMonitor.endpointConfig",               # servicemonitor.yaml endpoint fields
    "strategy",                                    # deployment.yaml spec.strategy
    "podLabels",                                   # deployment.yaml pod labels
    "podAnnotations",                              # deployment.yaml pod annotations
    "podSecurityContext",                          # deployment.yaml pod securityContext
    "dnsConfig",                                   # deployment.yaml pod dnsConfig
    "nodeSelector",                                # deployment.yaml pod nodeSelector
    "affinity",                                    # deployment.yaml pod affinity (label selectors patched in)
    "controller.resources",                        # deployment.yaml container resources
    "controller.securityContext.appArmorProfile",  # deployment.yaml container securityContext fields
    "controller.securityContext.seLinuxOptions",
    "controller.securityContext.seccompProfile",
    # Not open: `settings.featureGates` -- the template reads each gate by name into FEATURE_GATES, so an
    # unknown gate would be dropped without a word.
})
"""Open-map paths of the `karpenter` chart."""

KARPENTER_CRD_OPEN_MAPS = frozenset({"additionalAnnotations"})
"""Open-map paths of the `karpenter-crd` chart (rendered into each CRD's metadata.annotations)."""


def undefined_keys(values: Mapping[str, Any], chart_values: Mapping[str, Any], open_maps: set[str] | frozenset[str],
                   ) -> list[str]:
    """Every key path in `values` that the chart's values.yaml does not define, in document order.

    Below an open-map path anything goes; lists are leaves; a map given where the chart has a scalar (or null)
    has undefined keys below it.
    """
    found: list[str] = []

    def walk(ours: Mapping[str, Any], chart: Any, prefix: tuple[str, ...]) -> None:
        for key, value in ours.items():
            path = prefix + (str(key),)
            dotted = ".".join(path)
            if not isinstance(chart, Mapping) or key not in chart:
                found.append(dotted)
                continue
            if dotted in open_maps or not isinstance(value, Mapping):
                continue
            walk(value, chart[key], path)

    walk(values, chart_values, ())
    return found


def leaf_paths(values: Mapping[str, Any], open_maps: set[str] | frozenset[str]) -> Iterator[tuple[str, Any]]:
    """`(dotted path, value)` of every leaf: scalars, lists, and open maps taken whole."""
    def walk(ours: Mapping[str, Any], prefix: str) -> Iterator[tuple[str, Any]]:
        for key, value in ours.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            if isinstance(value, Mapping) and path not in open_maps:
                yield from walk(value, path)
            else:
                yield path, value
    yield from walk(values, "")


_MISSING = object()


def lookup(tree: Mapping[str, Any], path: str) -> Any:
    """The value at a dotted path, or `MISSING`."""
    node: Any = tree
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return _MISSING
        node = node[part]
    return node


MISSING = _MISSING

# --- template scanning -------------------------------------------------------------------------------------------

_ACTION = re.compile(r"{{-?\s*(.*?)\s*-?}}", re.S)
_VALUES_REF = re.compile(r"\$?\.Values\.([A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*)")
_OPENS = ("if ", "range ", "define ", "block ")


def _scan(template: str) -> tuple[set[str], set[str]]:
    """(`.Values` paths read, paths rendered whole by `toYaml`) in one template's text.

    Tracks `with` blocks so a relative `.field` inside `with .Values.a` counts as `a.field`; `range` and `define`
    change `.` to something that is not a values map, so relative references inside them are not resolved.
    """
    reads: set[str] = set()
    verbatim: set[str] = set()
    stack: list[str | None] = []

    def current() -> str | None:
        return stack[-1] if stack else None

    for match in _ACTION.finditer(template):
        action = match.group(1)
        if action.startswith("/*"):
            continue
        reads.update(_VALUES_REF.findall(action))
        if action.startswith("with "):
            target = action[5:].strip()
            absolute = _VALUES_REF.fullmatch(target)
            if absolute:
                stack.append(absolute.group(1))
            elif re.fullmatch(r"\.[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*", target) and current() is not None:
                resolved = f"{current()}{target}"
                reads.add(resolved)
                stack.append(resolved)
            else:
                stack.append(None)
        elif action.startswith("if "):
            stack.append(current())
        elif action.startswith(_OPENS):
            stack.append(None)
        elif action == "end":
            stack.pop()
        if re.search(r"\btoYaml \.(\s|\||$)", action) and current() is not None:
            verbatim.add(str(current()))
        verbatim.update(re.findall(r"\btoYaml \$?\.Values\.([A-Za-z0-9_.]+)", action))
    if stack:
        raise ValueError(f"unbalanced template actions ({len(stack)} blocks left open)")
    return reads, verbatim


def template_reads(templates: Path) -> tuple[set[str], set[str]]:
    """(`.Values` paths read, paths rendered whole) over every template file of a chart."""
    reads: set[str] = set()
    verbatim: set[str] = set()
    for path in sorted(templates.iterdir()):
        if path.suffix in {".yaml", ".yml", ".tpl"}:
            r, v = _scan(path.read_text())
            reads |= r
            verbatim |= v
    return reads, verbatim


def unread_keys(values: Mapping[str, Any], reads: set[str], verbatim: set[str]) -> list[str]:
    """Leaf paths of `values` no template reads (neither by name nor under a map rendered whole)."""
    missing = []
    for path, _value in leaf_paths(values, verbatim):
        parts = path.split(".")
        prefixes = {".".join(parts[:i]) for i in range(1, len(parts) + 1)}
        if path not in reads and not prefixes & verbatim:
            missing.append(path)
    return missing
