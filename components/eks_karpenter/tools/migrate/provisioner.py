"""A v1alpha5 `Provisioner` to a node pool draft: requirements (with the webhook's defaults written
out), labels, taints, expiry and consolidation, limits, weight, kubelet settings and the template
it refers to."""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter, ValidationError

from eks_karpenter.config.errors import KeyPath
from eks_karpenter.labels import INSTANCE_CATEGORY, INSTANCE_GENERATION, PROVISIONER_NAME_LABEL
from eks_karpenter.platform.nodepool.config import LabelKey
from eks_karpenter.platform.nodepool.manifests import PINNING_KEYS
from eks_karpenter.tools.migrate.fields import (
    EVICTION_SIGNALS,
    INSTANCE_SELECTING_KEYS,
    KUBELET_FIELDS,
    LEGACY_DEFAULT_INSTANCE_REQUIREMENTS,
    LEGACY_DEFAULT_REQUIREMENTS,
    OPERATORS,
    PROVISIONER_FIELDS,
    QUANTITY,
    RESERVED_RESOURCES,
    TAINT_EFFECTS,
    TEMPLATE_API,
    TEMPLATE_FIELDS,
)
from eks_karpenter.tools.migrate.parse import ProvisionerDoc, TemplateDoc
from eks_karpenter.tools.migrate.reader import Ctx, brief

_LABEL_KEY: TypeAdapter[str] = TypeAdapter(LabelKey)


def _provisioner_hint(key: str) -> str | None:
    if key in TEMPLATE_FIELDS:
        return (f"`{key}` is an AWSNodeTemplate field, not a Provisioner field: put it in the AWSNodeTemplate "
                "named by spec.providerRef (or in spec.provider)")
    return None


@dataclass
class PoolDraft:
    """A converted pool before its class is known (kubelet settings still to be placed on one)."""

    name: str
    ctx: Ctx
    body: dict[str, Any]
    template: str | None  # a referenced AWSNodeTemplate, or None for an inline provider
    kubelet: dict[str, Any] | None


_ORDER = ("instanceCategories", "minGeneration", "requirements", "labels", "annotations", "taints", "startupTaints",
          "expireAfter", "terminationGracePeriod", "disruption", "limits", "weight")
"""Keys of a converted pool, in the order the stack file shows them."""


def convert_provisioner(prov: ProvisionerDoc, templates: Mapping[str, TemplateDoc]) -> PoolDraft | None:
    """A v1alpha5 Provisioner as a stack-file pool, or None when it cannot be converted (problems on its ctx)."""
    ctx, spec = prov.ctx, prov.spec
    ctx.only(("spec",), spec, PROVISIONER_FIELDS, _provisioner_hint)
    body: dict[str, Any] = {}
    _node_metadata(ctx, spec, body)
    _lifetime(ctx, spec, body)
    _limits_and_weight(ctx, spec, body)
    kubelet = _kubelet(ctx, ("spec", "kubeletConfiguration"), spec["kubeletConfiguration"]) \
        if "kubeletConfiguration" in spec else None
    found, template = _node_settings(ctx, spec, templates)
    if not found:
        return None
    _switch_off_library_defaults(body)
    return PoolDraft(prov.name, ctx, {k: body[k] for k in _ORDER if k in body}, template, kubelet)


def _node_metadata(ctx: Ctx, spec: Mapping[str, Any], body: dict[str, Any]) -> None:
    """Requirements (with v1alpha5's implicit defaults written out), labels, annotations and taints."""
    sp: KeyPath = ("spec",)
    requirements = _requirements(ctx, spec)
    labels: dict[str, str] = {}
    if "labels" in spec:
        labels = ctx.text_map(sp + ("labels",), spec["labels"]) or {}
        for key in labels:
            _check_label_key(ctx, sp + ("labels", key), key, "label")
    if requirements is not None:
        body["requirements"] = requirements + _legacy_defaults(ctx, requirements, labels)
    if labels:
        body["labels"] = labels
    if "annotations" in spec:
        annotations = ctx.text_map(sp + ("annotations",), spec["annotations"])
        if annotations:
            body["annotations"] = annotations
    for key in ("taints", "startupTaints"):
        if key in spec:
            taints = _taints(ctx, sp + (key,), spec[key])
            if taints:
                body[key] = taints


def _lifetime(ctx: Ctx, spec: Mapping[str, Any], body: dict[str, Any]) -> None:
    """`expireAfter` from ttlSecondsUntilExpired, and the disruption policy from consolidation or
    ttlSecondsAfterEmpty (v1alpha5 refused both)."""
    sp: KeyPath = ("spec",)
    after_empty = spec.get("ttlSecondsAfterEmpty")
    until_expired = spec.get("ttlSecondsUntilExpired")
    body["expireAfter"] = "Never"
    if until_expired is not None:
        seconds = ctx.integer(sp + ("ttlSecondsUntilExpired",), until_expired, low=1)
        if seconds is not None:
            body["expireAfter"] = f"{seconds}s"
    consolidate = False
    if "consolidation" in spec:
        cons = ctx.mapping(sp + ("consolidation",), spec["consolidation"])
        if cons is not None:
            ctx.only(sp + ("consolidation",), cons, ("enabled",))
            if "enabled" in cons:
                consolidate = bool(ctx.boolean(sp + ("consolidation", "enabled"), cons["enabled"]))
    if after_empty is not None and consolidate:
        ctx.problem(sp + ("ttlSecondsAfterEmpty",), "cannot be combined with consolidation.enabled: true "
                    "(v1alpha5 refused both; keep one: consolidation covers empty nodes too)")
    elif consolidate:
        body["disruption"] = _disruption("WhenEmptyOrUnderutilized", "0s")
    elif after_empty is not None:
        seconds = ctx.integer(sp + ("ttlSecondsAfterEmpty",), after_empty, low=0)
        if seconds is not None:
            body["disruption"] = _disruption("WhenEmpty", f"{seconds}s")
    else:
        body["disruption"] = _disruption("WhenEmpty", "Never")


def _limits_and_weight(ctx: Ctx, spec: Mapping[str, Any], body: dict[str, Any]) -> None:
    sp: KeyPath = ("spec",)
    if "limits" in spec:
        limits = ctx.mapping(sp + ("limits",), spec["limits"])
        if limits is not None:
            ctx.only(sp + ("limits",), limits, ("resources",))
            if "resources" in limits:
                resources = _limits(ctx, sp + ("limits", "resources"), limits["resources"])
                if resources:
                    body["limits"] = resources
    if "weight" in spec:
        weight = ctx.integer(sp + ("weight",), spec["weight"], low=1, high=100)
        if weight is not None:
            body["weight"] = weight


def _node_settings(ctx: Ctx, spec: Mapping[str, Any], templates: Mapping[str, TemplateDoc]) -> tuple[bool, str | None]:
    """Where the pool's node settings are: (found, the referenced AWSNodeTemplate or None for an inline
    `spec.provider`); not found reports why on `ctx`."""
    sp: KeyPath = ("spec",)
    if "provider" in spec and "providerRef" in spec:
        ctx.problem(sp + ("provider",), "set either spec.provider or spec.providerRef, not both")
        return False, None
    if "providerRef" in spec:
        template = _provider_ref(ctx, sp + ("providerRef",), spec["providerRef"], templates)
        return template is not None, template
    if "provider" in spec:
        return ctx.mapping(sp + ("provider",), spec["provider"]) is not None, None
    ctx.problem(sp, "needs spec.providerRef (an AWSNodeTemplate) or spec.provider: the node settings")
    return False, None


def _switch_off_library_defaults(body: dict[str, Any]) -> None:
    # The shortcuts that have defaults are switched off (capacityTypes, arch and os cannot be, but a raw
    # requirement on their key replaces them, and every converted pool has one); v1alpha5 had no drain deadline
    # and no limits unless set, so those library defaults are switched off too.
    # Where the requirements pin instance families or types, the library leaves the category and generation
    # defaults out by itself: no `null` is written for them then.
    body.setdefault("limits", {})
    body["terminationGracePeriod"] = None
    requirements = body.get("requirements", [])
    keys = {r["key"] for r in requirements}
    if any(r["key"] in PINNING_KEYS and r.get("operator") == "In" for r in requirements):
        return
    for shortcut, key in (("instanceCategories", INSTANCE_CATEGORY), ("minGeneration", INSTANCE_GENERATION)):
        if key not in keys:  # (with a raw requirement on its key the shortcut is replaced anyway)
            body[shortcut] = None


def _disruption(policy: str, after: str) -> dict[str, Any]:
    # v1's default budget, written out: the library and the CRD would both add it anyway.
    return {"consolidationPolicy": policy, "consolidateAfter": after, "budgets": [{"nodes": "10%"}]}


def _requirements(ctx: Ctx, spec: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    path: KeyPath = ("spec", "requirements")
    items = ctx.seq(path, spec["requirements"]) if "requirements" in spec else []
    if items is None:
        return None
    out: list[dict[str, Any]] = []
    for i, raw in enumerate(items):
        rp = path + (i,)
        req = ctx.mapping(rp, raw)
        if req is None:
            continue
        ctx.only(rp, req, ("key", "operator", "values"))
        key = ctx.text(rp + ("key",), req.get("key"))
        operator = ctx.choice(rp + ("operator",), req.get("operator"), OPERATORS)
        raw_values = req.get("values", [])
        values_list = ctx.seq(rp + ("values",), raw_values) if raw_values is not None else []
        values = [ctx.scalar_text(rp + ("values", j), v) for j, v in enumerate(values_list or [])]
        if key is None or operator is None or values_list is None or None in values:
            continue
        if not _check_label_key(ctx, rp + ("key",), key, "requirement key"):
            continue
        strs = [v for v in values if v is not None]
        if operator in ("In", "NotIn") and not strs:
            ctx.problem(rp + ("values",), f"operator {operator} needs at least one value")
            continue
        if operator in ("Exists", "DoesNotExist") and strs:
            ctx.problem(rp + ("values",), f"operator {operator} takes no values")
            continue
        if operator in ("Gt", "Lt") and (len(strs) != 1 or not strs[0].isdigit()):
            ctx.problem(rp + ("values",), f"operator {operator} takes exactly one non-negative integer")
            continue
        item: dict[str, Any] = {"key": key, "operator": operator}
        if strs:
            item["values"] = strs
        out.append(item)
    return out


def _legacy_defaults(ctx: Ctx, requirements: list[dict[str, Any]], labels: Mapping[str, str]) -> list[dict[str, Any]]:
    """The requirements the v1alpha5 webhook added, for keys neither the requirements nor the labels set.

    A label on capacity type, arch or os pinned the value in v1alpha5 (labels were requirements too); it becomes an
    explicit requirement as well, so the library's shortcut for that key cannot add a conflicting default.
    """
    keys = {r["key"] for r in requirements}
    added: list[dict[str, Any]] = []
    for key, default in LEGACY_DEFAULT_REQUIREMENTS:
        if key in keys:
            continue
        added.append({"key": key, "operator": "In", "values": [labels[key]]} if key in labels else default)
    if not (keys | set(labels)) & INSTANCE_SELECTING_KEYS:
        added += LEGACY_DEFAULT_INSTANCE_REQUIREMENTS
    added = copy.deepcopy(added)
    if added:
        text = "; ".join(f"{r['key']} {r['operator']} {','.join(r['values'])}" for r in added)
        ctx.note(("spec", "requirements"), f"added what v1alpha5 defaulted or took from labels (v1 adds nothing): "
                 f"{text}")
    return added


def _check_label_key(ctx: Ctx, path: KeyPath, key: str, what: str) -> bool:
    """v1's restrictions on requirement keys and node label keys, with the legacy label named."""
    if key == PROVISIONER_NAME_LABEL:
        ctx.problem(path, f"{PROVISIONER_NAME_LABEL} became karpenter.sh/nodepool, which v1 restricts (Karpenter sets "
                    f"it to the pool's name): remove this {what}")
        return False
    try:
        _LABEL_KEY.validate_python(key)
    except ValidationError as err:
        ctx.problem(path, f"{what} {key!r}: " + "; ".join(e["msg"].removeprefix("Value error, ") for e in err.errors()))
        return False
    return True


def _taints(ctx: Ctx, path: KeyPath, value: Any) -> list[dict[str, Any]]:
    items = ctx.seq(path, value) or []
    out = []
    for i, raw in enumerate(items):
        tp = path + (i,)
        taint = ctx.mapping(tp, raw)
        if taint is None:
            continue
        ctx.only(tp, taint, ("key", "value", "effect", "timeAdded"))
        key = ctx.text(tp + ("key",), taint.get("key"))
        effect = ctx.choice(tp + ("effect",), taint.get("effect"), TAINT_EFFECTS)
        item: dict[str, Any] = {"key": key, "effect": effect}
        if taint.get("value") not in (None, ""):
            item = {"key": key, "value": ctx.scalar_text(tp + ("value",), taint["value"]), "effect": effect}
        if "timeAdded" in taint:
            ctx.note(tp + ("timeAdded",), "dropped: the time a taint was added is set by the node controller, "
                     "not configuration")
        if None not in item.values():
            out.append(item)
    return out


def _limits(ctx: Ctx, path: KeyPath, value: Any) -> dict[str, Any]:
    data = ctx.mapping(path, value) or {}
    out: dict[str, Any] = {}
    for key, amount in data.items():
        if isinstance(amount, int) and not isinstance(amount, bool) and amount >= 0:
            out[key] = str(amount)  # quantities are strings in v1 manifests
        elif isinstance(amount, str) and QUANTITY.fullmatch(amount):
            out[key] = amount
        else:
            ctx.problem(path + (key,), f"not a Kubernetes quantity (got {brief(amount)})")
    return out


_KUBELET_ORDER = ("maxPods", "podsPerCore", "systemReserved", "kubeReserved", "evictionHard", "evictionSoft",
                  "evictionSoftGracePeriod", "evictionMaxPodGracePeriod", "imageGCHighThresholdPercent",
                  "imageGCLowThresholdPercent", "cpuCFSQuota", "clusterDNS")
"""The order v1 kubelet fields are written in."""


def _kubelet(ctx: Ctx, path: KeyPath, value: Any) -> dict[str, Any] | None:
    data = ctx.mapping(path, value)
    if data is None:
        return None
    ctx.only(path, data, KUBELET_FIELDS)
    _kubelet_runtime(ctx, path, data)
    out = _kubelet_numbers(ctx, path, data)
    if "clusterDNS" in data:
        dns = ctx.seq(path + ("clusterDNS",), data["clusterDNS"])
        if dns is not None:
            items = [ctx.text(path + ("clusterDNS", i), v) for i, v in enumerate(dns)]
            out["clusterDNS"] = None if None in items else items
    out |= _kubelet_reserved(ctx, path, data)
    out |= _kubelet_eviction(ctx, path, data)
    if None in out.values():
        return None
    return {k: out[k] for k in _KUBELET_ORDER if k in out} or None


def _kubelet_runtime(ctx: Ctx, path: KeyPath, data: Mapping[str, Any]) -> None:
    """v1 nodes always run containerd: the field goes, with a note, or a problem for any other runtime."""
    if "containerRuntime" not in data:
        return
    runtime = data["containerRuntime"]
    if runtime == "containerd":
        ctx.note(path + ("containerRuntime",), "dropped: v1 nodes always run containerd")
    else:
        ctx.problem(path + ("containerRuntime",), f"{brief(runtime)} is not available in v1 (nodes always "
                    "run containerd; dockershim left Kubernetes in 1.24): remove it")


def _kubelet_numbers(ctx: Ctx, path: KeyPath, data: Mapping[str, Any]) -> dict[str, Any]:
    """Pod counts, the eviction grace period, the image GC thresholds (high above low) and the CFS quota."""
    out: dict[str, Any] = {}
    for key in ("maxPods", "podsPerCore"):
        if key in data:
            out[key] = ctx.integer(path + (key,), data[key], low=0)
    if "evictionMaxPodGracePeriod" in data:
        out["evictionMaxPodGracePeriod"] = ctx.integer(path + ("evictionMaxPodGracePeriod",),
                                                       data["evictionMaxPodGracePeriod"])
    for key in ("imageGCHighThresholdPercent", "imageGCLowThresholdPercent"):
        if key in data:
            out[key] = ctx.integer(path + (key,), data[key], low=0, high=100)
    high, low = out.get("imageGCHighThresholdPercent"), out.get("imageGCLowThresholdPercent")
    if isinstance(high, int) and isinstance(low, int) and high <= low:
        ctx.problem(path + ("imageGCHighThresholdPercent",), "must be greater than imageGCLowThresholdPercent")
    if "cpuCFSQuota" in data:
        out["cpuCFSQuota"] = ctx.boolean(path + ("cpuCFSQuota",), data["cpuCFSQuota"])
    return out


def _kubelet_reserved(ctx: Ctx, path: KeyPath, data: Mapping[str, Any]) -> dict[str, Any]:
    """`systemReserved` and `kubeReserved`: quantities of the reservable resources, none negative."""
    out: dict[str, Any] = {}
    for key in ("systemReserved", "kubeReserved"):
        if key in data:
            out[key] = ctx.quantity_map(path + (key,), data[key], RESERVED_RESOURCES)
            for res, amount in (out[key] or {}).items():
                if amount.startswith("-"):
                    ctx.problem(path + (key, res), "must not be negative")
    return out


def _kubelet_eviction(ctx: Ctx, path: KeyPath, data: Mapping[str, Any]) -> dict[str, Any]:
    """Eviction thresholds: known signals, soft thresholds and grace periods naming the same signals, and grace
    periods that are durations."""
    out: dict[str, Any] = {}
    for key in ("evictionHard", "evictionSoft", "evictionSoftGracePeriod"):
        if key in data:
            signals = ctx.text_map(path + (key,), data[key])
            for signal in signals or {}:
                if signal not in EVICTION_SIGNALS:
                    ctx.problem(path + (key, signal),
                                f"unknown eviction signal; v1 accepts {', '.join(EVICTION_SIGNALS)}")
            out[key] = signals
    soft, grace = out.get("evictionSoft") or {}, out.get("evictionSoftGracePeriod") or {}
    for signal in set(soft) ^ set(grace):
        missing = "evictionSoftGracePeriod" if signal in soft else "evictionSoft"
        ctx.problem(path + (missing,), f"has no entry for {signal!r}: v1 needs evictionSoft and "
                    "evictionSoftGracePeriod to name the same signals")
    for key, grace_value in grace.items():
        if not re.fullmatch(r"([0-9]+(\.[0-9]+)?(s|m|h))+", grace_value):
            ctx.problem(path + ("evictionSoftGracePeriod", key), f"not a duration such as 1m30s (got {grace_value!r})")
    return out


def _provider_ref(ctx: Ctx, path: KeyPath, value: Any, templates: Mapping[str, TemplateDoc]) -> str | None:
    ref = ctx.mapping(path, value)
    if ref is None:
        return None
    ctx.only(path, ref, ("apiVersion", "kind", "name"))
    if "apiVersion" in ref and ref["apiVersion"] != TEMPLATE_API:
        ctx.problem(path + ("apiVersion",), f"must be {TEMPLATE_API} (got {brief(ref['apiVersion'])})")
    if "kind" in ref and ref["kind"] != "AWSNodeTemplate":
        ctx.problem(path + ("kind",), f"must be AWSNodeTemplate (got {brief(ref['kind'])})")
    name = ctx.text(path + ("name",), ref.get("name"))
    if name is None:
        return None
    if name not in templates:
        ctx.problem(path + ("name",), f"no AWSNodeTemplate named {name!r} in the given files: pass the file that "
                    "defines it too")
        return None
    return name
