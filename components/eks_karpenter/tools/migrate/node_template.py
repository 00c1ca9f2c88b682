"""A v1alpha1 `AWSNodeTemplate` (or a Provisioner's inline `spec.provider`) to an EC2NodeClass entry:
AMI family and selector, subnet and security group selectors, instance profile, tags, IMDS
settings and disks, with v1alpha1's defaults written out where v1's differ."""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

from eks_karpenter import versions
from eks_karpenter.config.errors import KeyPath
from eks_karpenter.labels import CLUSTER_TAG_PREFIX
from eks_karpenter.platform.cluster.rules import al2_unavailable
from eks_karpenter.tools.migrate.fields import (
    AMI_FAMILIES,
    EC2_METADATA_DEFAULTS,
    ID_KEYS,
    LEGACY_BLOCK_DEVICES,
    LEGACY_METADATA_DEFAULTS,
    PROVIDER_FIELDS,
    PROVISIONER_FIELDS,
    RESTRICTED_TAGS,
    TEMPLATE_API,
    TEMPLATE_FIELDS,
    TEMPLATE_ONLY_FIELDS,
    V1_VOLUME_SIZE,
    VOLUME_TYPES,
)
from eks_karpenter.tools.migrate.parse import TemplateDoc
from eks_karpenter.tools.migrate.reader import Ctx, brief


def _template_hint(key: str) -> str | None:
    if key in PROVISIONER_FIELDS:
        return f"`{key}` is a Provisioner field, not an AWSNodeTemplate field: move it to the Provisioner's spec"
    return None


def _provider_hint(key: str) -> str | None:
    if key in TEMPLATE_ONLY_FIELDS:
        return (f"`{key}` only exists on AWSNodeTemplate (v1alpha5 ignored it in an inline spec.provider): "
                "move the provider settings to an AWSNodeTemplate and reference it with spec.providerRef")
    if key in PROVISIONER_FIELDS:
        return f"`{key}` is a Provisioner spec field, not a provider field: move it up to spec"
    return None


def convert_template(tpl: TemplateDoc, kubernetes_version: str = versions.KUBERNETES_VERSION) -> dict[str, Any] | None:
    ctx, spec, sp = tpl.ctx, tpl.spec, tpl.path
    problems_before = len(ctx.report.problems)
    _check_template_kind(tpl)
    out: dict[str, Any] = {"name": tpl.name}
    written: list[str] = []  # v1alpha1 defaults written out because v1's (or this library's) differ
    family = _convert_ami(ctx, sp, spec, kubernetes_version, out, written)
    _convert_selectors(ctx, sp, spec, out)
    _convert_identity(ctx, sp, spec, out)
    out["metadataOptions"] = _metadata_options(ctx, sp, spec, written)
    _convert_block_devices(ctx, sp, spec, family, out, written)
    _convert_flags(ctx, sp, spec, out)
    if written:
        ctx.note(sp, "v1alpha1 defaults written out explicitly: " + "; ".join(written))
    if len(ctx.report.problems) != problems_before:
        return None
    return out


def _check_template_kind(tpl: TemplateDoc) -> None:
    """Only the fields a template (or an inline provider) has, of a known apiVersion and kind, and no custom
    launch template (v1 has none)."""
    ctx, spec, sp = tpl.ctx, tpl.spec, tpl.path
    if tpl.inline:
        ctx.only(sp, spec, PROVIDER_FIELDS, _provider_hint)
    else:
        ctx.only(sp, spec, TEMPLATE_FIELDS, _template_hint)
    if "apiVersion" in spec and spec["apiVersion"] not in ("extension.karpenter.sh/v1alpha1", TEMPLATE_API):
        ctx.problem(sp + ("apiVersion",), f"unexpected provider apiVersion {brief(spec['apiVersion'])}")
    if "kind" in spec and spec["kind"] not in ("AWS", "AWSNodeTemplate"):
        ctx.problem(sp + ("kind",), f"unexpected provider kind {brief(spec['kind'])}")
    if "launchTemplate" in spec:
        ctx.problem(sp + ("launchTemplate",), "custom launch templates were removed (v0.32 / v1): express the "
                    "settings as EC2NodeClass fields (amiSelector, userData, blockDeviceMappings, metadataOptions, "
                    "securityGroupSelector)")


def _convert_ami(ctx: Ctx, sp: KeyPath, spec: Mapping[str, Any], kubernetes_version: str, out: dict[str, Any],
                 written: list[str]) -> str | None:
    """`amiFamily` (when an amiSelector needs it beside) and `amiSelectorTerms`; the family in effect."""
    family, ami_terms = _ami(ctx, sp, spec, kubernetes_version)
    if family is not None and "amiSelector" in spec:
        out["amiFamily"] = family
        if "amiFamily" not in spec:
            written.append("amiFamily AL2 (v1 requires it next to an amiSelector)")
    if ami_terms is not None:
        out["amiSelectorTerms"] = ami_terms
    return family


def _convert_selectors(ctx: Ctx, sp: KeyPath, spec: Mapping[str, Any], out: dict[str, Any]) -> None:
    """The subnet and security group selectors, both required, as v1 selector terms."""
    for legacy, v1, prefix in (("subnetSelector", "subnetSelectorTerms", "subnet-"),
                               ("securityGroupSelector", "securityGroupSelectorTerms", "sg-")):
        if legacy not in spec:
            ctx.problem(sp + (legacy,), f"required: v1 needs {v1}")
            continue
        terms = _selector_terms(ctx, sp + (legacy,), spec[legacy], prefix)
        if terms is not None:
            out[v1] = terms


def _convert_identity(ctx: Ctx, sp: KeyPath, spec: Mapping[str, Any], out: dict[str, Any]) -> None:
    """The instance profile (a name, not an ARN), user data and tags."""
    if "instanceProfile" in spec:
        profile = ctx.text(sp + ("instanceProfile",), spec["instanceProfile"])
        if profile is not None:
            if profile.startswith("arn:"):
                ctx.problem(sp + ("instanceProfile",), "must be the instance profile's name, not its ARN")
            else:
                out["instanceProfile"] = profile
    if "userData" in spec:
        user_data = ctx.text(sp + ("userData",), spec["userData"], placeholders_ok=True)
        if user_data is not None:
            out["userData"] = user_data
    if "tags" in spec:
        tags = _tags(ctx, sp + ("tags",), spec["tags"])
        if tags:
            out["tags"] = tags


def _convert_block_devices(ctx: Ctx, sp: KeyPath, spec: Mapping[str, Any], family: str | None,
                           out: dict[str, Any], written: list[str]) -> None:
    """The template's block devices, or v1alpha1's default ones for its family written out (v1's differ)."""
    if "blockDeviceMappings" in spec:
        mappings = _block_devices(ctx, sp + ("blockDeviceMappings",), spec["blockDeviceMappings"])
        if mappings:
            out["blockDeviceMappings"] = mappings
    elif family is not None and family in LEGACY_BLOCK_DEVICES:
        out["blockDeviceMappings"] = copy.deepcopy(LEGACY_BLOCK_DEVICES[family])
        sizes = " + ".join(d["ebs"]["volumeSize"] for d in LEGACY_BLOCK_DEVICES[family])
        written.append(f"blockDeviceMappings ({sizes} encrypted gp3, v1alpha1's default for {family})")


def _convert_flags(ctx: Ctx, sp: KeyPath, spec: Mapping[str, Any], out: dict[str, Any]) -> None:
    """Detailed monitoring, a public IP address and the context, as given."""
    if "detailedMonitoring" in spec:
        out["detailedMonitoring"] = ctx.boolean(sp + ("detailedMonitoring",), spec["detailedMonitoring"])
    if "associatePublicIpAddress" in spec:
        out["associatePublicIPAddress"] = ctx.boolean(sp + ("associatePublicIpAddress",),
                                                      spec["associatePublicIpAddress"])
    if "context" in spec:
        out["context"] = ctx.text(sp + ("context",), spec["context"])


def _ami(ctx: Ctx, sp: KeyPath, spec: Mapping[str, Any],
         kubernetes_version: str) -> tuple[str | None, list[dict[str, Any]] | None]:
    """(the AMI family in effect, amiSelectorTerms). Without an amiSelector the family becomes an alias term, one
    that has AMIs for `kubernetes_version`: v1alpha1's implied AL2 becomes AL2023 where AL2 has none."""
    family = "AL2"  # v1alpha1's default
    if "amiFamily" in spec:
        chosen = ctx.choice(sp + ("amiFamily",), spec["amiFamily"], AMI_FAMILIES)
        if chosen is None:
            return None, None
        family = chosen
    if family == "Ubuntu":
        ctx.problem(sp + ("amiFamily",), "Ubuntu was removed in Karpenter v1: use AL2023 (EKS-optimised AMIs, "
                    "amiSelectorTerms alias) or Custom with an amiSelector naming your Ubuntu AMIs")
        return None, None
    if family == "AL2" and al2_unavailable(kubernetes_version):
        no_al2 = (f"EKS publishes no Amazon Linux 2 AMIs for Kubernetes {kubernetes_version} (the last is "
                  f"{versions.AL2_LAST_KUBERNETES_VERSION})")
        if "amiFamily" in spec:
            ctx.problem(sp + ("amiFamily",), f"AL2: {no_al2}: set amiFamily AL2023 or Bottlerocket (and rewrite any "
                        "userData for it), or import for the cluster's own version with --kubernetes-version")
            return None, None
        if "amiSelector" in spec:
            ctx.problem(sp + ("amiFamily",), f"not set, so v1alpha1 treated the selected AMIs as AL2, and {no_al2}: "
                        "say which family the selected AMIs are (amiFamily AL2023, Bottlerocket or Custom)")
            return None, None
        family = "AL2023"
        rewrite = (" Its userData was written for AL2's bootstrap.sh: AL2023 nodes boot with nodeadm, so rewrite "
                   "it (a NodeConfig, or a shell script for what runs before the kubelet)."
                   if "userData" in spec else "")
        ctx.note(sp + ("amiFamily",), f"not set: v1alpha1 assumed AL2, and {no_al2}, so the class uses AL2023 "
                 f"(amiSelectorTerms alias {versions.AMI_ALIAS}).{rewrite}")
        return family, [{"alias": versions.AMI_ALIAS}]
    if "amiSelector" in spec:
        return family, _ami_terms(ctx, sp + ("amiSelector",), spec["amiSelector"])
    if family == "Custom":
        ctx.problem(sp + ("amiFamily",), "Custom needs an amiSelector naming the AMIs")
        return None, None
    if family == "AL2023":
        return family, [{"alias": versions.AMI_ALIAS}]
    alias = f"{family.lower()}@latest"
    implied = "" if "amiFamily" in spec else " (amiFamily not set: v1alpha1 assumed AL2)"
    if family in ("Windows2019", "Windows2022"):
        ctx.note(sp + ("amiFamily",), f"{family} -> amiSelectorTerms alias {alias} (Windows aliases only take "
                 "'latest')")
    else:
        extra = (" AL2 AMIs are not published for Kubernetes 1.33 and later: plan the move to AL2023 "
                 f"({versions.AMI_ALIAS})." if family == "AL2" else "")
        ctx.note(sp + ("amiFamily",), f"{family}{implied} -> amiSelectorTerms alias {alias}: v1alpha1 also took the "
                 f"newest EKS-optimised AMI, but @latest rolls every node on each AMI release; pin a version "
                 f"(e.g. {family.lower()}@vYYYYMMDD).{extra}")
    return family, [{"alias": alias}]


def _ami_terms(ctx: Ctx, path: KeyPath, value: Any) -> list[dict[str, Any]] | None:
    selector = ctx.text_map(path, value)
    if selector is None:
        return None
    ids: list[str] = []
    names: list[str] = []
    owners: list[str] = []
    tags: dict[str, str] = {}
    for key, item in selector.items():
        if item == "":
            ctx.problem(path + (key,), "empty value (v1alpha1 refused it too)")
            return None
        if key in ID_KEYS:
            ids = _split(item)
            bad = [i for i in ids if not re.fullmatch(r"ami-[0-9a-z]+", i)]
            if bad:
                ctx.problem(path + (key,), f"not AMI ids: {', '.join(bad)}")
                return None
        elif key == "aws::name":
            names = [item]
        elif key == "aws::owners":
            owners = _split(item)
        else:
            tags[key] = item
    if ids:
        if names or owners or tags:
            ctx.problem(path, "aws::ids cannot be combined with other amiSelector keys in v1 (an id term stands "
                        "alone): keep only the ids, or only the name/owner/tag filters")
            return None
        return [{"id": i} for i in ids]
    if not names and not tags:
        ctx.problem(path, "needs aws::ids, aws::name or tags (aws::owners alone selects nothing in v1)")
        return None
    if not owners:
        owners = ["self", "amazon"]  # v1alpha1's default owners, written out
    terms: list[dict[str, Any]] = []
    for owner in owners:
        term: dict[str, Any] = {}
        if names:
            term["name"] = names[0]
        term["owner"] = owner
        if tags:
            term["tags"] = dict(tags)
        terms.append(term)
    if len(terms) > 30:
        ctx.problem(path, f"expands to {len(terms)} amiSelectorTerms; v1 allows 30")
        return None
    return terms


def _split(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def _selector_terms(ctx: Ctx, path: KeyPath, value: Any, id_prefix: str) -> list[dict[str, Any]] | None:
    selector = ctx.text_map(path, value)
    if selector is None:
        return None
    if not selector:
        ctx.problem(path, "must not be empty")
        return None
    ids: list[str] = []
    tags: dict[str, str] = {}
    for key, item in selector.items():
        if item == "":
            ctx.problem(path + (key,), "empty value (v1alpha1 refused it too); use \"*\" to match any value")
            return None
        if key in ID_KEYS:
            ids = _split(item)
            bad = [i for i in ids if not re.fullmatch(re.escape(id_prefix) + r"[0-9a-z]+", i)]
            if bad:
                ctx.problem(path + (key,), f"not {id_prefix}... ids: {', '.join(bad)}")
                return None
        else:
            tags[key] = item
    if ids and tags:
        ctx.problem(path, f"{'/'.join(ID_KEYS)} cannot be combined with tag filters in v1 (an id term stands "
                    "alone): keep only the ids, or only the tags")
        return None
    if ids:
        return [{"id": i} for i in ids]
    return [{"tags": tags}]


def _tags(ctx: Ctx, path: KeyPath, value: Any) -> dict[str, str] | None:
    tags = ctx.text_map(path, value)
    if tags is None:
        return None
    ok = True
    for key in tags:
        reason = None
        if key == "":
            reason = "empty tag key"
        elif key.startswith(CLUSTER_TAG_PREFIX):
            reason = "kubernetes.io/cluster/* is restricted in v1 (Karpenter tags instances with it)"
        elif key in RESTRICTED_TAGS:
            reason = f"{key} is restricted (Karpenter sets it)"
        elif key.lower().startswith("aws:"):
            reason = "the aws: prefix is reserved by AWS"
        if reason:
            ctx.problem(path + (key,), reason)
            ok = False
    return tags if ok else None


def _metadata_options(ctx: Ctx, sp: KeyPath, spec: Mapping[str, Any], written: list[str]) -> dict[str, Any] | None:
    path = sp + ("metadataOptions",)
    if "metadataOptions" not in spec:
        written.append("metadataOptions (httpPutResponseHopLimit 2, so pods without hostNetwork can reach IMDS; "
                       "v1 would use 1)")
        return dict(LEGACY_METADATA_DEFAULTS)
    data = ctx.mapping(path, spec["metadataOptions"])
    if data is None:
        return None
    ctx.only(path, data, tuple(EC2_METADATA_DEFAULTS))
    out: dict[str, Any] = {}
    choices = {"httpEndpoint": ("enabled", "disabled"), "httpProtocolIPv6": ("enabled", "disabled"),
               "httpTokens": ("required", "optional")}
    for key, default in EC2_METADATA_DEFAULTS.items():
        if key not in data:
            out[key] = default
        elif key == "httpPutResponseHopLimit":
            out[key] = ctx.integer(path + (key,), data[key], low=1, high=64)
        else:
            out[key] = ctx.choice(path + (key,), data[key], choices[key])
    filled = [k for k in EC2_METADATA_DEFAULTS if k not in data]
    if filled:
        written.append("metadataOptions " + ", ".join(f"{k}={out[k]}" for k in filled) + " (EC2's defaults for "
                       "fields left out, as v1alpha1 applied them)")
    if out.get("httpTokens") == "optional":
        ctx.note(path + ("httpTokens",), "optional allows IMDSv1; v1 defaults to required")
    return out


def _block_devices(ctx: Ctx, path: KeyPath, value: Any) -> list[dict[str, Any]] | None:
    items = ctx.seq(path, value)
    if items is None:
        return None
    out: list[dict[str, Any]] = []
    for i, raw in enumerate(items):
        bp = path + (i,)
        bdm = ctx.mapping(bp, raw)
        if bdm is None:
            continue

        def hint(key: str) -> str | None:
            if key == "virtualName":
                return "instance-store virtual names are not supported in v1 (see instanceStorePolicy: RAID0)"
            return None

        ctx.only(bp, bdm, ("deviceName", "ebs"), hint)
        item: dict[str, Any] = {}
        if "deviceName" not in bdm:
            ctx.problem(bp + ("deviceName",), "required")
        else:
            item["deviceName"] = ctx.text(bp + ("deviceName",), bdm["deviceName"])
        if "ebs" in bdm:
            item["ebs"] = _ebs(ctx, bp + ("ebs",), bdm["ebs"])
        out.append(item)
    return out


def _ebs(ctx: Ctx, path: KeyPath, value: Any) -> dict[str, Any] | None:
    ebs = ctx.mapping(path, value)
    if ebs is None:
        return None
    fields = ("volumeSize", "volumeType", "iops", "throughput", "encrypted", "kmsKeyID", "deleteOnTermination",
              "snapshotID")
    ctx.only(path, ebs, fields)
    out: dict[str, Any] = {}
    if "volumeSize" in ebs:
        size = ebs["volumeSize"]
        if isinstance(size, str) and V1_VOLUME_SIZE.fullmatch(size):
            out["volumeSize"] = size
        else:
            ctx.problem(path + ("volumeSize",), f"v1 takes a whole size in Gi, G, Ti or T, such as 100Gi "
                        f"(got {brief(size)})")
    elif "snapshotID" not in ebs:
        ctx.problem(path + ("volumeSize",), "required unless snapshotID is set")
    if "volumeType" in ebs:
        out["volumeType"] = ctx.choice(path + ("volumeType",), ebs["volumeType"], VOLUME_TYPES)
    for key in ("iops", "throughput"):
        if key in ebs:
            out[key] = ctx.integer(path + (key,), ebs[key], low=0)
    for key in ("encrypted", "deleteOnTermination"):
        if key in ebs:
            out[key] = ctx.boolean(path + (key,), ebs[key])
    for key in ("kmsKeyID", "snapshotID"):
        if key in ebs:
            out[key] = ctx.text(path + (key,), ebs[key])
    return {k: out[k] for k in fields if k in out}
