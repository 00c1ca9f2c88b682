"""NodePools and EC2NodeClasses checked against the CRDs of the Karpenter release the stack selects.

The config types follow the newest supported release (`versions.KARPENTER_VERSIONS[-1]`). A stack that selects an
older one (`eks-karpenter:karpenter.version`) may not use a field or an enum value that arrived later: the older
CRD would refuse the object at apply time (an unknown field is pruned or refused, an enum value refused). The
table of each release's fields (`crd_fields.py`) is generated from the releases' CRDs and read only for such a
stack, so the default release costs nothing.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Iterator, Sequence
from typing import Any

from eks_karpenter import versions
from eks_karpenter.config.errors import Issue, KeyPath
from eks_karpenter.config.model import Model, aliases
from eks_karpenter.platform.nodepool.config import NodeClassConfig, NodePoolConfig

# Where each CRD path lives in a stack file's entry: the prefix of the CRD's spec and what replaces it. NodePool
# template fields are written at the top of a pool's entry (`expireAfter`, `taints`, `labels`...).
_PREFIXES: dict[str, tuple[tuple[str, str], ...]] = {
    "NodePool": (("spec.template.spec.", ""), ("spec.template.metadata.", ""), ("spec.", "")),
    "EC2NodeClass": (("spec.", ""),),
}


@functools.cache
def _table() -> Any:
    return importlib.import_module("eks_karpenter.platform.nodepool.crd_fields")


@functools.cache
def later_additions(version: str) -> tuple[tuple[str, str, tuple[str, ...], str], ...]:
    """What the newest release's NodePool and EC2NodeClass have that `version`'s lack, as (kind, CRD path, enum
    values added (empty: the whole field), the first release that has it). A new field's own subfields are left
    out: the field is what a stack must not set."""
    fields = _table().FIELDS
    found = []
    for kind, newest in fields[versions.KARPENTER_VERSIONS[-1]].items():
        old = fields[version][kind]
        for path, values in newest.items():
            added = () if path not in old else tuple(v for v in values if v not in old[path])
            if path in old and not added:
                continue
            if path not in old and _parent(path) not in old:
                continue  # below a new field, which is reported itself
            first = next(r for r in versions.KARPENTER_VERSIONS if path in fields[r][kind] and
                         all(v in fields[r][kind][path] for v in added))
            found.append((kind, path, added, first))
    return tuple(found)


def _parent(path: str) -> str:
    for marker in ("[]", "{*}"):
        if path.endswith(marker):
            return path.removesuffix(marker)
    return path.rpartition(".")[0]


def _config_path(kind: str, crd_path: str) -> list[str] | None:
    for prefix, replacement in _PREFIXES[kind]:
        if crd_path.startswith(prefix):
            rest = replacement + crd_path.removeprefix(prefix)
            return rest.replace("[]", ".[]").replace("{*}", ".{*}").split(".")
    return None


def _written(node: Any, parts: Sequence[str], path: KeyPath) -> Iterator[tuple[KeyPath, Any]]:
    """The values at `parts` (aliases, `[]` list items, `{*}` map values) below `node`, with their key paths."""
    if node is None:
        return
    if not parts:
        yield path, node
        return
    head, rest = parts[0], parts[1:]
    if head == "[]" and isinstance(node, list):
        for i, item in enumerate(node):
            yield from _written(item, rest, path + (i,))
    elif head == "{*}" and isinstance(node, dict):
        for key, value in node.items():
            yield from _written(value, rest, path + (key,))
    elif isinstance(node, Model):
        field = {alias: name for name, alias in aliases(type(node)).items()}.get(head)
        if field is not None:
            yield from _written(getattr(node, field), rest, path + (head,))


def validate_for_release(version: str, pools: Sequence[NodePoolConfig], classes: Sequence[NodeClassConfig],
                         at_pools: KeyPath, at_classes: KeyPath) -> list[Issue]:
    """Fields and enum values of `pools` and `classes` that Karpenter `version`'s CRDs do not have."""
    if version == versions.KARPENTER_VERSIONS[-1] or version not in versions.KARPENTER_RELEASES:
        return []  # the types are the newest release's; an unknown release has its own error
    issues: list[Issue] = []
    for kind, crd_path, added, first in later_additions(version):
        parts = _config_path(kind, crd_path)
        if parts is None:
            continue
        objects: Sequence[Model] = pools if kind == "NodePool" else classes
        at = at_pools if kind == "NodePool" else at_classes
        for i, obj in enumerate(objects):
            for path, value in _written(obj, parts, at + (i,)):
                if not added:
                    issues.append(Issue(path, f"Karpenter {version}'s {kind} has no {crd_path} (it arrived in "
                                        f"{first}): upgrade eks-karpenter:karpenter.version or remove it",
                                        value.dump() if isinstance(value, Model) else value))
                elif value in added:
                    issues.append(Issue(path, f"Karpenter {version}'s {kind} does not accept {value} for "
                                        f"{crd_path} (it arrived in {first}): upgrade "
                                        "eks-karpenter:karpenter.version or choose another value", value))
    return issues
