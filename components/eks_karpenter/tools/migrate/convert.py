"""Convert Karpenter's 2022-2023 API (v1alpha5 `Provisioner`, v1alpha1 `AWSNodeTemplate`) to v1.

Input is parsed YAML documents, output is this library's stack config (`eks-karpenter:nodePools`,
`eks-karpenter:nodeClasses`) or v1 `NodePool` / `EC2NodeClass` manifests. The converter is strict: a field it
does not know, a field in the wrong object, or a setting v1 cannot express is a problem naming the file, the
document and the field path. Nothing is dropped silently; settings that are dropped on purpose (and legacy
defaults that are written out because v1's defaults differ) are reported as notes.

Where v1's defaults differ from v1alpha5's, the old behaviour is written out explicitly, so importing changes
the API version and not what the nodes do:

- no `ttlSecondsAfterEmpty` and no consolidation: v1alpha5 never removed nodes for being empty or underused,
  so the pool gets `consolidationPolicy: WhenEmpty` with `consolidateAfter: Never`;
- no `ttlSecondsUntilExpired`: v1alpha5 never expired nodes, so `expireAfter: Never` (v1 defaults to 720h);
- the requirements the v1alpha5 webhook added when absent (on-demand, amd64, linux, and for pools that do not
  name instance types, categories c/m/r of generation > 2) are added explicitly (v1 adds none);
- no `limits`, no drain deadline: the library's default ceiling and `terminationGracePeriod` are switched off;
- no `metadataOptions`: v1alpha1 used a hop limit of 2 (v1 uses 1), written out explicitly; a partial
  `metadataOptions` is completed with EC2's defaults, as v1alpha1 did;
- no `blockDeviceMappings`: v1alpha1's disks for the AMI family (20Gi gp3 root on AL2) are written out, since
  this library's default is larger;
- no `amiFamily`: v1alpha1 assumed AL2; an `amiSelector` without `aws::owners` only matched AMIs owned by `self`
  or `amazon`, so those owners are written out.

Without an `amiSelector` the AMI family becomes an alias term: the pinned `versions.AMI_ALIAS` for AL2023,
`<family>@latest` (with a note to pin it) for AL2 and Bottlerocket. The target is the stack's Kubernetes version:
from 1.33 on, where EKS publishes no AL2 AMIs, a template without `amiFamily` becomes AL2023 (with a note) and
one that says AL2 is a problem.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from eks_karpenter import versions
from eks_karpenter.config.errors import Issue, issues_from_validation_error
from eks_karpenter.config.errors import render_path as render_config_path
from eks_karpenter.labels import CAPACITY_TYPE, PROVISIONER_NAME_LABEL, ZONE
from eks_karpenter.platform.nodepool.config import NodeClassConfig, NodePoolConfig
from eks_karpenter.platform.nodepool.rules import validate_node_config
from eks_karpenter.platform.version_rules import validate_node_class_amis
from eks_karpenter.tools.migrate.fields import CLASSES_KEY, NAME, POOLS_KEY
from eks_karpenter.tools.migrate.model import Conversion, Doc, LegacyImportError
from eks_karpenter.tools.migrate.node_template import convert_template
from eks_karpenter.tools.migrate.parse import ProvisionerDoc, TemplateDoc, split_documents
from eks_karpenter.tools.migrate.provisioner import PoolDraft, convert_provisioner
from eks_karpenter.tools.migrate.reader import Ctx, Report, brief


def convert_documents(docs: list[Doc], kubernetes_version: str = versions.KUBERNETES_VERSION) -> Conversion:
    """Convert parsed legacy documents for a cluster on `kubernetes_version` (the stack's `cluster.version`: AMI
    aliases must have AMIs for it). Raises `LegacyImportError` listing every problem found."""
    report = Report()
    provisioners, templates = split_documents(docs, report)
    by_name = _named_templates(templates)
    drafts, inline = _convert_provisioners(provisioners, by_name)
    classes, origin = _convert_templates([*by_name.values(), *inline], kubernetes_version)
    node_classes, pool_class = _place_kubelet(drafts, classes, origin)
    referenced = {d.template for d in drafts if d.template}
    for name, tpl in by_name.items():
        if name not in referenced and name in classes:
            tpl.ctx.note((), "not referenced by any Provisioner in these files; converted anyway")
    node_pools = [{"name": d.name, "nodeClass": pool_class.get(d.name, d.template or d.name), **d.body}
                  for d in drafts]
    class_ctx = {c["name"]: origin[c.pop("_from")] for c in node_classes}
    if not report.problems:
        _validate(node_pools, [d.ctx for d in drafts], node_classes, [class_ctx[c["name"]] for c in node_classes],
                  kubernetes_version)
    if not report.problems and not node_pools and not node_classes:
        report.problems.append("no karpenter.sh/v1alpha5 Provisioner or karpenter.k8s.aws/v1alpha1 AWSNodeTemplate "
                               "in the given files")
    if report.problems:
        raise LegacyImportError(report.problems)
    _closing_notes(report, node_pools, node_classes, class_ctx)
    origins = {name: ctx.where.label() for name, ctx in class_ctx.items()}
    return Conversion(node_pools=node_pools, node_classes=node_classes, notes=report.notes, origins=origins)


def _duplicate(doc: TemplateDoc | ProvisionerDoc, seen: Mapping[str, TemplateDoc | ProvisionerDoc], kind: str) -> bool:
    """Whether a document of this kind and name came earlier (reported on the later one)."""
    if doc.name not in seen:
        return False
    first = seen[doc.name].ctx.where
    doc.ctx.problem(("metadata", "name"), f"duplicate {kind} name (first in {first.file} document {first.doc})")
    return True


def _named_templates(templates: Sequence[TemplateDoc]) -> dict[str, TemplateDoc]:
    """The AWSNodeTemplates by name (the first of each name; a repeat is a problem)."""
    by_name: dict[str, TemplateDoc] = {}
    for tpl in templates:
        if not _duplicate(tpl, by_name, "AWSNodeTemplate"):
            _check_name(tpl.ctx, tpl.name, "EC2NodeClass")
            by_name[tpl.name] = tpl
    return by_name


def _convert_provisioners(provisioners: Sequence[ProvisionerDoc],
                          by_name: Mapping[str, TemplateDoc]) -> tuple[list[PoolDraft], list[TemplateDoc]]:
    """The converted pools, and the inline providers (`spec.provider`) to convert as node classes of their own."""
    seen: dict[str, ProvisionerDoc] = {}
    drafts: list[PoolDraft] = []
    inline: list[TemplateDoc] = []
    for prov in provisioners:
        if _duplicate(prov, seen, "Provisioner"):
            continue
        seen[prov.name] = prov
        _check_name(prov.ctx, prov.name, "NodePool")
        draft = convert_provisioner(prov, by_name)
        if draft is None:
            continue
        drafts.append(draft)
        if draft.template is None:
            inline.append(TemplateDoc(prov.ctx, prov.name, prov.spec["provider"], ("spec", "provider"), inline=True))
    return drafts, inline


def _convert_templates(templates: Sequence[TemplateDoc],
                       kubernetes_version: str) -> tuple[dict[str, dict[str, Any]], dict[str, Ctx]]:
    """The converted node classes by name, and the document each came from."""
    classes: dict[str, dict[str, Any]] = {}
    origin: dict[str, Ctx] = {}
    for tpl in templates:
        if tpl.name in origin:
            tpl.ctx.problem(("spec", "provider"), f"the inline provider becomes an EC2NodeClass named {tpl.name!r}, "
                            "but an AWSNodeTemplate of that name exists: reference it with spec.providerRef or "
                            "rename one of them")
            continue
        origin[tpl.name] = tpl.ctx
        converted = convert_template(tpl, kubernetes_version)
        if converted is not None:
            classes[tpl.name] = converted
    return classes, origin


def _closing_notes(report: Report, node_pools: Sequence[Mapping[str, Any]],
                   node_classes: Sequence[Mapping[str, Any]], class_ctx: Mapping[str, Ctx]) -> None:
    """What the user still has to do: instance profiles, interruption handling for spot, the pool label."""
    for cls in node_classes:
        if "instanceProfile" not in cls:
            class_ctx[cls["name"]].note((), f"no instanceProfile (v1alpha1 used the controller's default one): "
                                        f"EC2NodeClass {cls['name']!r} leaves `role` unset in stack config, so nodes "
                                        "get the platform's node role; --format manifests needs --node-role")
    spot = [p["name"] for p in node_pools if any(r["key"] == CAPACITY_TYPE and r["operator"] == "In"
                                                 and "spot" in r.get("values", []) for r in p["requirements"])]
    if spot:
        report.notes.append(f"spot pools ({', '.join(spot)}): the stack needs eks-karpenter:interruption enabled "
                            "(it replaces aws-node-termination-handler), or spotWithoutInterruptionHandling: true")
    if node_pools:
        report.notes.append(f"workloads that select nodes by {PROVISIONER_NAME_LABEL} must use karpenter.sh/nodepool "
                            "(same value: each pool keeps its provisioner's name)")


def _check_name(ctx: Ctx, name: str, kind: str) -> None:
    if not NAME.fullmatch(name):
        ctx.problem(("metadata", "name"), f"{name!r} cannot name a {kind} in this library's config: lowercase "
                    "letters, digits and '-', at most 63 characters")


def _validate(pools: list[dict[str, Any]], pool_ctx: list[Ctx], classes: list[dict[str, Any]],
              class_ctx: list[Ctx], kubernetes_version: str) -> None:
    """The library's models and rules have the last word: what they refuse would not load from a stack file.

    Their findings are reported against the legacy document the entry came from. Two stack-level facts are not
    known here and are assumed: the network's zones (every zone the pools name) and interruption handling.
    """
    parsed: dict[str, list[Any]] = {POOLS_KEY: [], CLASSES_KEY: []}
    for key, model, entries, ctxs in ((POOLS_KEY, NodePoolConfig, pools, pool_ctx),
                                      (CLASSES_KEY, NodeClassConfig, classes, class_ctx)):
        for i, (entry, ctx) in enumerate(zip(entries, ctxs, strict=True)):
            try:
                parsed[key].append(model.model_validate(entry))
            except ValidationError as err:
                for issue in issues_from_validation_error(err, (key, i), model):
                    ctx.problem((), _converted_problem(issue, entry))
    if any(ctx.report.problems for ctx in pool_ctx + class_ctx):
        return
    zones = sorted({v for p in pools for r in p.get("requirements", []) if r["key"] == ZONE
                    for v in r.get("values", [])})
    issues = validate_node_config(parsed[POOLS_KEY], parsed[CLASSES_KEY], zones, True, (POOLS_KEY,),
                                  (CLASSES_KEY,))
    # The version's AMI rules too (an AL2 family from 1.33 on, an alias older than the version).
    issues += validate_node_class_amis(kubernetes_version, parsed[CLASSES_KEY], (CLASSES_KEY,))
    for issue in issues:
        section, index = issue.path[0], issue.path[1]
        i = index if isinstance(index, int) else 0
        ctx, entry = (pool_ctx[i], pools[i]) if section == POOLS_KEY else (class_ctx[i], classes[i])
        ctx.problem((), _converted_problem(issue, entry))


def _converted_problem(issue: Issue, entry: Mapping[str, Any]) -> str:
    path = render_config_path((issue.path[0], entry.get("name", "?")) + tuple(issue.path[2:]))
    got = f" (got {brief(issue.value)})" if issue.has_value else ""
    return f"the converted entry is refused at {path}: {issue.message}{got}"


def _place_kubelet(drafts: list[PoolDraft], classes: dict[str, dict[str, Any]],
                   origin: dict[str, Ctx]) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Move each provisioner's kubelet settings onto its class.

    v1 keeps `kubelet` on the EC2NodeClass, so provisioners that share a template but differ in kubelet settings
    need one class each: the variant without kubelet settings (else the first one) keeps the template's name,
    every other variant gets a copy named `<template>-<first provisioner using it>`. Each returned class carries
    `_from`, the name of the class whose document it came from (for error messages), which callers remove.
    """
    pool_class: dict[str, str] = {}
    extra: dict[str, list[dict[str, Any]]] = {}
    for name in classes:
        users = [d for d in drafts if (d.template or d.name) == name]
        variants: list[tuple[str, dict[str, Any] | None, list[PoolDraft]]] = []
        for d in users:
            key = json.dumps(d.kubelet, sort_keys=True)
            for k, _, members in variants:
                if k == key:
                    members.append(d)
                    break
            else:
                variants.append((key, d.kubelet, [d]))
        if not variants:
            continue
        keeper = next((v for v in variants if v[1] is None), variants[0])
        for key, kubelet, members in variants:
            if key == keeper[0]:
                target = name
                if kubelet is not None:
                    classes[name]["kubelet"] = kubelet
            else:
                target = f"{name}-{members[0].name}"
                if target in classes or any(c["name"] == target for cs in extra.values() for c in cs):
                    members[0].ctx.problem(("spec", "kubeletConfiguration"),
                                           f"needs its own EC2NodeClass {target!r}, but that name is taken")
                    continue
                if not NAME.fullmatch(target):
                    members[0].ctx.problem(("spec", "kubeletConfiguration"),
                                           f"needs its own EC2NodeClass, and {target!r} is not a valid name (at "
                                           "most 63 characters): shorten the template or provisioner name")
                    continue
                clone = {**copy.deepcopy(classes[name]), "name": target, "_from": name}
                if kubelet is not None:
                    clone["kubelet"] = kubelet
                else:
                    clone.pop("kubelet", None)
                extra.setdefault(name, []).append(clone)
                names = ", ".join(m.name for m in members)
                members[0].ctx.note(("spec", "kubeletConfiguration"),
                                    f"v1 keeps kubelet settings on the EC2NodeClass and AWSNodeTemplate {name!r} is "
                                    f"shared with different kubelet settings: {names} get their own copy "
                                    f"{target!r}")
            for m in members:
                pool_class[m.name] = target
    ordered: list[dict[str, Any]] = []
    for name, cls in classes.items():
        ordered.append({**cls, "_from": name})
        ordered.extend(extra.get(name, []))
    return ordered, pool_class
