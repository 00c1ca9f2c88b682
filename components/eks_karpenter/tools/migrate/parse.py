"""YAML text to documents, and documents to the legacy objects to convert (`List`s unpacked, kinds and
metadata checked)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from eks_karpenter.config.errors import KeyPath
from eks_karpenter.tools.migrate.fields import LAST_APPLIED, PROVISIONER_API, SERVER_METADATA, TEMPLATE_API
from eks_karpenter.tools.migrate.model import Doc, LegacyImportError
from eks_karpenter.tools.migrate.reader import Ctx, Report, Where, brief


@dataclass
class ProvisionerDoc:
    """A v1alpha5 Provisioner found in the input, not yet converted."""

    ctx: Ctx
    name: str
    spec: dict[str, Any]


@dataclass
class TemplateDoc:
    """A v1alpha1 AWSNodeTemplate, or a Provisioner's inline provider, not yet converted."""

    ctx: Ctx
    name: str
    spec: dict[str, Any]
    path: KeyPath  # where the provider fields sit: ('spec',) or ('spec', 'provider')
    inline: bool = False


def split_documents(docs: Iterable[Doc], report: Report) -> tuple[list[ProvisionerDoc], list[TemplateDoc]]:
    provisioners: list[ProvisionerDoc] = []
    templates: list[TemplateDoc] = []

    def visit(file: str, index: int, obj: Any, prefix: KeyPath) -> None:
        where = Where(file, index, prefix)
        ctx = Ctx(report, where)
        if obj is None:
            return
        if not isinstance(obj, dict):
            ctx.problem((), f"not a Kubernetes object (got {brief(obj)})")
            return
        api, kind = obj.get("apiVersion"), obj.get("kind")
        if isinstance(kind, str) and (kind == "List" or kind.endswith("List")) and "items" in obj:
            items = ctx.seq(("items",), obj["items"])
            for i, item in enumerate(items or []):
                visit(file, index, item, prefix + ("items", i))
            return
        where.kind = kind if isinstance(kind, str) else ""
        if (api, kind) not in ((PROVISIONER_API, "Provisioner"), (TEMPLATE_API, "AWSNodeTemplate")):
            ctx.problem(("kind",), _unsupported_kind(api, kind))
            return
        meta = ctx.mapping(("metadata",), obj.get("metadata"))
        name = meta.get("name") if meta else None
        if meta is not None and (not isinstance(name, str) or not name):
            ctx.problem(("metadata", "name"), "required: the object's name")
        if not meta or not isinstance(name, str) or not name:
            return
        where.name = name
        _check_metadata(ctx, meta)
        ctx.only((), obj, ("apiVersion", "kind", "metadata", "spec", "status"))
        if "status" in obj:
            ctx.note(("status",), "ignored (runtime state, not configuration)")
        spec = ctx.mapping(("spec",), obj.get("spec", {}))
        if spec is None:
            return
        if kind == "Provisioner":
            provisioners.append(ProvisionerDoc(ctx, name, spec))
        else:
            templates.append(TemplateDoc(ctx, name, spec, ("spec",)))

    for file, index, obj in docs:
        visit(file, index, obj, ())
    return provisioners, templates


def _unsupported_kind(api: Any, kind: Any) -> str:
    if kind in ("NodePool", "EC2NodeClass", "NodeClaim"):
        return (f"{api} {kind} is already the new API; this command reads karpenter.sh/v1alpha5 Provisioner and "
                "karpenter.k8s.aws/v1alpha1 AWSNodeTemplate")
    if kind in ("Provisioner", "AWSNodeTemplate"):
        want = PROVISIONER_API if kind == "Provisioner" else TEMPLATE_API
        return f"apiVersion {brief(api)} is not supported for {kind}: only {want}"
    return (f"{brief(api)} {brief(kind)} is not a legacy Karpenter object: this command reads "
            "karpenter.sh/v1alpha5 Provisioner and karpenter.k8s.aws/v1alpha1 AWSNodeTemplate")


def _check_metadata(ctx: Ctx, meta: Mapping[str, Any]) -> None:
    ctx.only(("metadata",), meta, {"name", "labels", "annotations"} | SERVER_METADATA)
    labels = meta.get("labels") or {}
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k != LAST_APPLIED} \
        if isinstance(meta.get("annotations"), dict) else {}
    if labels or annotations:
        ctx.note(("metadata",), "the object's own labels/annotations are not carried over (only the name is); "
                 "node labels and annotations in spec are")


def parse_documents(name: str, text: str) -> list[Doc]:
    """The documents of one YAML file, numbered from 1. A YAML syntax error is a `LegacyImportError`."""
    try:
        loaded = list(yaml.safe_load_all(text))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        raise LegacyImportError([f"{name}:{where} not valid YAML: {getattr(exc, 'problem', None) or exc}"]) from None
    return [(name, i, obj) for i, obj in enumerate(loaded, start=1)]
