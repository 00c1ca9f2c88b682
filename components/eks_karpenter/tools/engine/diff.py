"""Compare two offline plans of one stack: what a pull request would create, update, replace or delete.

Pure: takes two `PlanDocument`s, returns data (`PlanDiff`) and Markdown for a PR comment. Resources are matched
by URN, so a rename or a move to another parent shows as a delete plus a create, exactly as Pulumi would do it
without an alias; the diff points such pairs out, and refuses those whose two resources share a natural key
(tools/engine/identity.py: the create would fail, or be undone, before the delete). A resource whose `aliases`
option (old URNs, when the plan records them) names a URN of the old plan is compared with that resource
instead. Whether a change replaces a resource comes from the data in `eks_karpenter/tools/engine/replacements.py`.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from eks_karpenter.config.errors import KeyPath
from eks_karpenter.tools.engine.changes import MISSING, OPS, SYMBOL, Op, PropertyChange, ResourceChange, parse_path
from eks_karpenter.tools.engine.document import PlanDocument, PlannedResource
from eks_karpenter.tools.engine.fleets import Fleet, Refusal, fleet_lines, refusals, replaced_fleets
from eks_karpenter.tools.engine.identity import Collision, collision_refusal, collisions
from eks_karpenter.tools.engine.plan_cost import diff_cost_lines
from eks_karpenter.tools.engine.replacements import (
    DELETE_FIRST_WHEN_SET,
    REPLACE_ON_CHANGE,
    REPLACE_ON_REMOVE,
    REPLACED_WITH,
    STATEFUL,
    replacing_paths,
)

SECRET = "[secret]"
MAX_VALUE = 80
"""Longer rendered values are cut to head…tail so one policy document does not flood a comment."""

# Options whose change is a change to the stack. `version` (plugin version) and `provider` are left out: a
# provider upgrade touches every resource and is reviewed in the lock file, not per resource. So is `import`:
# on a resource already in the state under that id, Pulumi ignores it (the spot service-linked role is
# registered with it in a used account, without it in a fresh one, and the two are the same resource).
_OPTIONS = ("protect", "ignoreChanges", "replaceOnChanges", "deleteBeforeReplace", "retainOnDelete",
            "customTimeouts")
# Pulumi's marker for a secret value in raw JSON, in case a plan comes from elsewhere than this engine.
_SECRET_SIG = ("4dabf18193072939515e22adb298388d", "1b47061264138c4ac30d75fd1eb44270")



@dataclass(frozen=True)
class PlanDiff:
    """Every change between two plans of a stack, in URN order."""

    project: str
    stack: str
    base_stack: str
    changes: tuple[ResourceChange, ...]
    unchanged: int
    aliased: tuple[tuple[str, str], ...] = ()
    """(old URN, new URN) of resources renamed or moved with an alias: kept, compared as one resource."""
    knock_on: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Replaced URN -> URNs that depend on it (and are not replaced or deleted themselves): at apply time the
    new id or ARN reaches them, which the offline plan's name-derived placeholders cannot show."""
    cost: tuple[str, ...] = ()
    """The cost section: how the fixed monthly cost and each pool's ceiling change (tools/engine/plan_cost.py)."""
    fleets: tuple[Fleet, ...] = ()
    """Node fleets whose nodes the change replaces (Karpenter drift, node group rolls), with their pacing."""
    refused: tuple[Refusal, ...] = ()
    """Changes `pulumi up` cannot carry out (a created VPC's CIDR or zones, a create colliding with a delete on a
    natural key): the diff fails with these."""
    collisions: tuple[Collision, ...] = ()
    """Creates whose natural key a delete of the same diff still holds (tools/engine/identity.py); each is also
    in `refused`."""

    def counts(self) -> dict[Op, int]:
        found = Counter(c.op for c in self.changes)
        return {op: found.get(op, 0) for op in OPS}

    @property
    def has_changes(self) -> bool:
        return bool(self.changes)

    def moves(self) -> list[tuple[ResourceChange, ResourceChange]]:
        """(delete, create) pairs that look like one resource renamed or moved: same type and same name or
        inputs. Without an alias Pulumi deletes and recreates such a resource."""
        created = [c for c in self.changes if c.op == "create"]
        pairs = []
        for gone in (c for c in self.changes if c.op in ("delete", "forget")):
            for new in created:
                same_type = new.resource.type == gone.resource.type
                if same_type and (new.resource.name == gone.resource.name
                                  or new.resource.inputs == gone.resource.inputs):
                    pairs.append((gone, new))
                    created.remove(new)
                    break
        return pairs


def diff_plans(old: PlanDocument, new: PlanDocument) -> PlanDiff:
    """Match resources by URN and classify each difference.

    Two plans of different stacks (or projects) are compared as two stacks: resources are matched by their
    logical names (the URN with its stack and project taken out), and what only applies to one stack changing
    over time (refused changes, node rolls) is left out: neither is a change `pulumi up` would make.
    """
    base_stack = old.stack
    across = (old.stack, old.project) != (new.stack, new.project)
    if across:
        old = _as_stack(old, new)
    before = {r.urn: r for r in old.resources}
    after = {r.urn: r for r in new.resources}
    moved = _aliases(before, after)
    changes: list[ResourceChange] = []
    unchanged = 0
    for urn in sorted((before.keys() - moved.values()) | after.keys()):
        was = before.get(moved.get(urn, urn))
        if was is None:
            changes.append(ResourceChange("create", after[urn], protected=_protected(after[urn])))
        elif urn not in after:
            # A retained resource only leaves the state: say so, a "delete" would alarm for nothing.
            gone: Op = "forget" if was.options.get("retainOnDelete") else "delete"
            changes.append(ResourceChange(gone, was, protected=_protected(was)))
        else:
            change = _compare(was, after[urn])
            if change is None:
                unchanged += 1
            else:
                changes.append(change)
    changes, unchanged = _replaced_with(changes, after, before, moved, unchanged)
    collided = () if across else collisions(changes)
    return PlanDiff(project=new.project, stack=new.stack, base_stack=base_stack, changes=tuple(changes),
                    unchanged=unchanged, aliased=tuple(sorted((o, n) for n, o in moved.items())),
                    knock_on=_knock_on(changes, new), cost=diff_cost_lines(old, new) if changes else (),
                    fleets=() if across else replaced_fleets(changes, old, new),
                    refused=() if across else refusals(changes, old) + tuple(collision_refusal(c) for c in collided),
                    collisions=collided)


def _as_stack(doc: PlanDocument, like: PlanDocument) -> PlanDocument:
    """`doc` with its URNs (own, parents, dependencies, aliases) written as if it were a plan of `like`'s stack."""
    ours, theirs = (f"urn:pulumi:{d.stack}::{d.project}::" for d in (doc, like))
    moved = PlanDocument.from_json(doc.to_json().replace(json.dumps(ours)[1:-1], json.dumps(theirs)[1:-1]))
    return dataclasses.replace(moved, stack=like.stack, project=like.project, format=doc.format)


def _replaced_with(changes: list[ResourceChange], after: dict[str, PlannedResource],
                   before: dict[str, PlannedResource], moved: dict[str, str],
                   unchanged: int) -> tuple[list[ResourceChange], int]:
    """Replace the resources whose replaced dependency replaces them too (a node group with its cluster)."""
    by_urn = {c.resource.urn: c for c in changes}
    grew = True
    while grew:
        grew = False
        replaced = {urn for urn, c in by_urn.items() if c.op == "replace"}
        for urn, r in after.items():
            kinds = REPLACED_WITH.get(r.type)
            current = by_urn.get(urn)
            if not kinds or (current and current.op in ("create", "delete", "forget", "replace")):
                continue
            if moved.get(urn, urn) not in before:
                continue
            causes = tuple(d for d in r.dependencies if d in replaced and by_urn[d].resource.type in kinds)
            if causes:
                if current is None:
                    unchanged -= 1
                by_urn[urn] = ResourceChange("replace", r, current.properties if current else (),
                                             protected=current.protected if current else _protected(r),
                                             delete_first=_deletes_first(r), replaced_with=causes)
                grew = True
    return sorted(by_urn.values(), key=lambda c: c.resource.urn), unchanged


def _aliases(before: dict[str, PlannedResource], after: dict[str, PlannedResource]) -> dict[str, str]:
    """New URN -> old URN for resources whose `aliases` option names a URN that only the old plan has."""
    moved: dict[str, str] = {}
    for urn, r in after.items():
        if urn in before:
            continue
        for alias in r.options.get("aliases", []):
            if alias in before and alias not in after and alias not in moved.values():
                moved[urn] = alias
                break
    return moved


def _compare(old: PlannedResource, new: PlannedResource) -> ResourceChange | None:
    props = list(_walk(old.inputs, new.inputs, ()))
    forced = _forced_paths(old, new)
    props = [PropertyChange(p.path, p.old, p.new, replaces=any(_related(p.path, f) for f in forced))
             for p in props]
    for name in _OPTIONS:
        was, now = old.options.get(name, MISSING), new.options.get(name, MISSING)
        if not _same(was, now):
            props.append(PropertyChange((name,), was, now, option=True))
    if not props:
        return None
    op: Op = "replace" if any(p.replaces for p in props) else "update"
    return ResourceChange(op, new, tuple(props), protected=_protected(old) or _protected(new),
                          delete_first=op == "replace" and _deletes_first(new, old))


def _deletes_first(r: PlannedResource, old: PlannedResource | None = None) -> bool:
    """Whether a replacement of `r` deletes the old resource before creating the new one: asked for, or a fixed
    name the two would share. pulumi-kubernetes deletes first only when the object keeps its name and namespace
    (a renamed object is created beside the old one), so a Kubernetes rename is create-before-delete."""
    if r.options.get("deleteBeforeReplace"):
        return True
    if old is not None and r.type.startswith("kubernetes:") and any(
            _get(old.inputs, parse_path(p)) != _get(r.inputs, parse_path(p))
            for p in ("metadata.name", "metadata.namespace")):
        return False
    return any(_get(r.inputs, parse_path(p)) not in (MISSING, None, "")
               for p in replacing_paths(r.type, DELETE_FIRST_WHEN_SET))


def _forced_paths(old: PlannedResource, new: PlannedResource) -> list[KeyPath]:
    """Paths whose change replaces the resource: the type's data, and the program's own replaceOnChanges."""
    forced: list[KeyPath] = []
    listed = list(replacing_paths(new.type, REPLACE_ON_CHANGE)) + list(new.options.get("replaceOnChanges", []))
    for dotted in listed:
        if dotted == "*":  # replaceOnChanges: ["*"] means any input
            return [()]
        path = parse_path(dotted)
        if not _same(_get(old.inputs, path), _get(new.inputs, path)):
            forced.append(path)
    for dotted in replacing_paths(new.type, REPLACE_ON_REMOVE):
        path = parse_path(dotted)
        if _get(old.inputs, path) not in (MISSING, None) and _get(new.inputs, path) in (MISSING, None):
            forced.append(path)
    return forced


def _walk(old: Any, new: Any, path: KeyPath) -> Iterator[PropertyChange]:
    """Leaf-level differences; list items are compared by position, extra items reported one by one."""
    if isinstance(old, dict) and isinstance(new, dict) and not _is_secret(old) and not _is_secret(new):
        for key in sorted(old.keys() | new.keys()):
            yield from _walk(old.get(key, MISSING), new.get(key, MISSING), path + (key,))
    elif isinstance(old, list) and isinstance(new, list):
        for i in range(max(len(old), len(new))):
            yield from _walk(old[i] if i < len(old) else MISSING, new[i] if i < len(new) else MISSING, path + (i,))
    elif (embedded := _json_pair(old, new)) is not None:
        # IAM policy documents and event patterns are JSON strings: diff them as the documents they are.
        yield from _walk(*embedded, path)
    elif not _same(old, new):
        yield PropertyChange(path, old, new)


def _json_pair(old: Any, new: Any) -> tuple[Any, Any] | None:
    if not (isinstance(old, str) and isinstance(new, str)):
        return None
    try:
        a, b = json.loads(old), json.loads(new)
    except ValueError:
        return None
    return (a, b) if isinstance(a, dict | list) and isinstance(b, dict | list) else None


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b  # `True == 1` in Python, but a bool that becomes a number is a change
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b  # the engine's protobuf numbers are floats: 1 and 1.0 are one value
    return type(a) is type(b) and bool(a == b)


def _get(value: Any, path: KeyPath) -> Any:
    for part in path:
        indexable = isinstance(part, int) and isinstance(value, list) and part < len(value)
        if not (indexable or (isinstance(part, str) and isinstance(value, dict) and part in value)):
            return MISSING
        value = value[part]
    return value


def _related(path: KeyPath, forced: KeyPath) -> bool:
    """True when one path is the other or lies under it (a whole object added covers its fields)."""
    n = min(len(path), len(forced))
    return path[:n] == forced[:n]


def _protected(r: PlannedResource) -> bool:
    return bool(r.options.get("protect"))


def _knock_on(changes: list[ResourceChange], new: PlanDocument) -> dict[str, tuple[str, ...]]:
    # Offline ids are placeholders derived from names, so a replaced resource's id does not change in the plan;
    # in a real `up` it does, and everything holding it is updated, or replaced where that input forces it.
    replaced = [c.resource.urn for c in changes if c.op == "replace"]
    gone = set(replaced) | {c.resource.urn for c in changes if c.op in ("delete", "forget")}
    found: dict[str, tuple[str, ...]] = {}
    for urn in replaced:
        dependents = tuple(r.urn for r in new.resources if urn in r.dependencies and r.urn not in gone)
        if dependents:
            found[urn] = dependents
    return found


def _is_secret(value: Any) -> bool:
    if value == SECRET:
        return True
    return isinstance(value, dict) and value.get(_SECRET_SIG[0]) == _SECRET_SIG[1]


def show_value(value: Any, limit: int = MAX_VALUE) -> str:
    """A value as JSON text, secrets masked, cut to `limit` characters as head…tail."""
    if value is MISSING:
        return "(none)"
    text = json.dumps(_masked(value), sort_keys=True, ensure_ascii=False, separators=(", ", ": "))
    return shorten(text, limit)


def shorten(text: str, limit: int = MAX_VALUE) -> str:
    if len(text) <= limit:
        return text
    keep = (limit - 1) // 2
    return f"{text[:keep]}…{text[len(text) - keep:]}"


def _masked(value: Any) -> Any:
    """Secrets replaced, and whole floats shown as integers (protobuf turns every number into a float)."""
    if _is_secret(value):
        return SECRET
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v) for v in value]
    return value


def _pair(change: PropertyChange) -> tuple[str, str]:
    # If either side is secret, both are: a value that stops being secret is still not for a PR comment.
    if _is_secret(change.old) or _is_secret(change.new):
        return SECRET, SECRET
    return show_value(change.old), show_value(change.new)


def _code(text: str) -> str:
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render_diff_markdown(diff: PlanDiff, compared: str | None = None) -> str:
    """A pull-request comment: what is compared (`compared`, e.g. a base commit against the working tree, or the
    installed library against a candidate), counts, warnings, a table of changed resources, then each property
    change."""
    stacks = f"`{diff.stack}`" if diff.base_stack == diff.stack else f"`{diff.base_stack}` → `{diff.stack}`"
    lines = [f"### Plan diff: `{diff.project}` / {stacks}", ""]
    if compared:
        lines += [f"Compared: {compared}.", ""]
    if diff.base_stack != diff.stack:
        lines += [f"Comparing two stacks, `{diff.base_stack}` and `{diff.stack}`, resource by resource (matched by "
                  "logical name): not a change `pulumi up` makes, so no change is refused and no node roll is "
                  "shown. To review a change to one stack, diff two plans of that stack (`diff --base REF --stack "
                  "S`).", ""]
    kept = [f"`{_urn_name(o)}` → `{_urn_name(n)}` ({_kind(_urn_type(n))})" for o, n in diff.aliased]
    if kept:
        lines += ["Renamed or moved with an alias, so kept rather than recreated: " + ", ".join(kept) + ".", ""]
    if not diff.has_changes:
        lines.append(f"No changes ({diff.unchanged} resources unchanged).")
        return "\n".join(lines) + "\n"

    counts = diff.counts()
    lines += [" · ".join(f"**{counts[op]}** to {op}" for op in OPS if op != "forget" or counts[op])
              + f" ({diff.unchanged} unchanged)", ""]
    if diff.refused:
        lines += ["> [!CAUTION]", "> **Refused: `pulumi up` cannot carry this change out.**",
                  *[f"> - `{r.key}`: {r.message}." for r in diff.refused], ""]
    if diff.base_stack == diff.stack:  # what `pulumi up` would do applies to one stack over time only
        lines += _warnings(diff)
    if diff.fleets:
        lines += ["**Nodes replaced** (by Karpenter drift or an EKS node group update):", "",
                  *fleet_lines(diff.fleets), ""]
    lines += ["| | type | name | changed |", "| --- | --- | --- | --- |"]
    for c in diff.changes:
        changed = ", ".join([_code(p.label) for p in c.properties]
                            + [f"replaced with {_code(_urn_name(u))}" for u in c.replaced_with])
        op = f"{c.op} ({c.order})" if c.order else c.op
        lines.append(f"| {SYMBOL[c.op]} {op} | `{c.resource.type}` | `{c.resource.name}` | {_cell(changed)} |")

    detailed = [c for c in diff.changes if c.properties or c.replaced_with]
    if detailed:
        lines += ["", "<details open><summary>Property changes</summary>", ""]
        for c in detailed:
            order = f", replaced {c.order}" if c.order else ""
            lines.append(f"**{SYMBOL[c.op]} `{c.resource.name}`** (`{c.resource.type}`{order})")
            lines.append("")
            for p in c.properties:
                old, new = _pair(p)
                flag = " **(forces replacement)**" if p.replaces else ""
                lines.append(f"- {_code(p.label)}: {_code(old)} → {_code(new)}{flag}")
            for u in c.replaced_with:
                lines.append(f"- replaced with {_code(_urn_name(u))} ({_kind(_urn_type(u))}), whose outputs it takes "
                             "**(forces replacement)**")
            lines.append("")
        lines.append("</details>")
    lines += diff.cost
    return "\n".join(lines) + "\n"


def _warnings(diff: PlanDiff) -> list[str]:
    notes = []
    blocked = [f"`{c.resource.name}` ({_kind(c.resource.type)}, {c.op})" for c in diff.changes if c.blocked]
    if blocked:
        notes.append("Protected, so `pulumi up` stops with an error until `protect` is lifted on purpose: "
                     + ", ".join(blocked) + ".")
    first = [f"`{c.resource.name}` ({_kind(c.resource.type)})" for c in diff.changes
             if c.op == "replace" and c.delete_first]
    if first:
        notes.append("Deleted before the replacement exists (a fixed name, or `deleteBeforeReplace`): what it "
                     "serves is down until the new one is ready: " + ", ".join(first) + ".")
    forgotten = [f"`{c.resource.name}` ({_kind(c.resource.type)})" for c in diff.changes if c.op == "forget"]
    if forgotten:
        notes.append("Retained (`retainOnDelete`), so they only leave this stack's state and stay in the account: "
                     + ", ".join(forgotten) + ".")
    lost = [f"`{c.resource.name}` ({_kind(c.resource.type)}: {STATEFUL[c.resource.type]})"
            for c in diff.changes if c.op in ("replace", "delete") and c.resource.type in STATEFUL]
    if lost:
        notes.append("**Stateful resources are replaced or deleted**, which `pulumi up` does without asking unless "
                     "they are protected: " + "; ".join(lost) + ". If that is not the intent, revert the change; "
                     "if it is, plan the migration first.")
    enforced = _pod_security_enforcement(diff)
    if enforced:
        notes.append("Pod Security enforcement changes in namespaces (pods that break the level are refused from "
                     "their next create or rollout; run `podSecurityMode: audit` first to see which): "
                     + ", ".join(enforced) + ".")
    names = {c.resource.urn: c.resource.name for c in diff.changes}
    for urn, dependents in sorted(diff.knock_on.items()):
        shown = ", ".join(f"`{_urn_name(u)}` ({_kind(_urn_type(u))})" for u in dependents[:5])
        more = f" and {len(dependents) - 5} more" if len(dependents) > 5 else ""
        notes.append(f"`{names[urn]}` gets a new id; its dependents receive it at apply time (replaced too where "
                     f"that input forces it): {shown}{more}.")
    refused = {c.created.urn for c in diff.collisions}
    for gone, new in diff.moves():
        if new.resource.urn in refused:
            continue  # refused above, with its fix
        kind = _kind(new.resource.type)
        notes.append(f"`{gone.resource.name}` is deleted and `{new.resource.name}` created ({kind}): a rename or a "
                     "move needs an alias (`pulumi.Alias`) with the old name or parent, or Pulumi recreates the "
                     "resource.")
    if not notes:
        return []
    return ["> [!WARNING]", *[f"> - {n}" for n in notes], ""]


_ENFORCE = ("metadata", "labels", "pod-security.kubernetes.io/enforce")


def _pod_security_enforcement(diff: PlanDiff) -> list[str]:
    """Existing namespaces whose enforced Pod Security level is set, changed or lifted, as `name`: old → new (a
    new namespace has no pods to refuse)."""
    found = []
    for c in diff.changes:
        if c.resource.type != "kubernetes:core/v1:Namespace":
            continue
        for p in c.properties:
            if tuple(p.path) == _ENFORCE:
                old = "none" if p.old is MISSING else p.old
                new = "none" if p.new is MISSING else p.new
                found.append(f"`{c.resource.name}`: {old} → {new}")
    return found


def _kind(type_: str) -> str:
    """`aws:ec2/subnet:Subnet` -> `Subnet`: enough next to a resource name."""
    return type_.rsplit(":", 1)[-1]


def _urn_name(urn: str) -> str:
    return urn.rsplit("::", 1)[-1]


def _urn_type(urn: str) -> str:
    return urn.split("::")[2].rsplit("$", 1)[-1]
