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
`<family>@latest` (with a note to pin it) for AL2 and Bottlerocket.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml
from pydantic import TypeAdapter, ValidationError

from eks_karpenter import versions
from eks_karpenter._model import Issue, issues_from_validation_error, show
from eks_karpenter._model import render_path as render_config_path
from eks_karpenter.nodepool.config import ZONE, LabelKey, NodeClassConfig, NodePoolConfig
from eks_karpenter.nodepool.rules import validate_node_config

Doc = tuple[str, int, dict[str, Any]]
"""One parsed YAML document: (file name, position of the document in its file counting from 1, object)."""

Path = tuple[str | int, ...]

PROVISIONER_API = "karpenter.sh/v1alpha5"
TEMPLATE_API = "karpenter.k8s.aws/v1alpha1"
NODEPOOL_API = "karpenter.sh/v1"
NODECLASS_API = "karpenter.k8s.aws/v1"
NODECLASS_GROUP = "karpenter.k8s.aws"
POOLS_KEY = "eks-karpenter:nodePools"
CLASSES_KEY = "eks-karpenter:nodeClasses"

# --- the legacy field sets (what each object may contain) -------------------------------------------------------

PROVISIONER_FIELDS = frozenset({
    "annotations", "labels", "taints", "startupTaints", "requirements", "kubeletConfiguration", "provider",
    "providerRef", "ttlSecondsAfterEmpty", "ttlSecondsUntilExpired", "limits", "weight", "consolidation",
})
# Fields of the inline `spec.provider` (the v1alpha1 AWS struct).
PROVIDER_FIELDS = frozenset({
    "apiVersion", "kind", "amiFamily", "context", "instanceProfile", "subnetSelector", "securityGroupSelector",
    "tags", "launchTemplate", "metadataOptions", "blockDeviceMappings",
})
# AWSNodeTemplate spec = the provider fields plus these.
TEMPLATE_ONLY_FIELDS = frozenset({"userData", "amiSelector", "detailedMonitoring", "associatePublicIpAddress"})
TEMPLATE_FIELDS = PROVIDER_FIELDS | TEMPLATE_ONLY_FIELDS
KUBELET_FIELDS = frozenset({
    "clusterDNS", "containerRuntime", "maxPods", "podsPerCore", "systemReserved", "kubeReserved", "evictionHard",
    "evictionSoft", "evictionSoftGracePeriod", "evictionMaxPodGracePeriod", "imageGCHighThresholdPercent",
    "imageGCLowThresholdPercent", "cpuCFSQuota",
})
# v1beta1/v1 spellings people paste into old objects.
NEW_API_FIELDS = {
    "subnetSelectorTerms": "subnetSelector", "securityGroupSelectorTerms": "securityGroupSelector",
    "amiSelectorTerms": "amiSelector", "role": "instanceProfile", "kubelet": "kubeletConfiguration",
    "disruption": "ttlSecondsAfterEmpty / consolidation", "template": "the flat Provisioner spec",
    "nodeClassRef": "providerRef", "expireAfter": "ttlSecondsUntilExpired",
    "associatePublicIPAddress": "associatePublicIpAddress",
}
# Metadata the API server writes: not configuration, ignored.
SERVER_METADATA = frozenset({
    "uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "selfLink", "finalizers",
    "deletionTimestamp", "deletionGracePeriodSeconds", "ownerReferences", "namespace",
})
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"

AMI_FAMILIES = ("AL2", "AL2023", "Bottlerocket", "Ubuntu", "Windows2019", "Windows2022", "Custom")
OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
VOLUME_TYPES = ("standard", "io1", "io2", "gp2", "sc1", "st1", "gp3")
RESERVED_RESOURCES = ("cpu", "memory", "ephemeral-storage", "pid")
EVICTION_SIGNALS = ("memory.available", "nodefs.available", "nodefs.inodesFree", "imagefs.available",
                    "imagefs.inodesFree", "pid.available")
ID_KEYS = ("aws-ids", "aws::ids")

CAPACITY_TYPE = "karpenter.sh/capacity-type"
ARCH = "kubernetes.io/arch"
OS = "kubernetes.io/os"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
CATEGORY = "karpenter.k8s.aws/instance-category"
FAMILY = "karpenter.k8s.aws/instance-family"
GENERATION = "karpenter.k8s.aws/instance-generation"
LEGACY_POOL_LABEL = "karpenter.sh/provisioner-name"

# What the v1alpha5 defaulting webhook added to a Provisioner (v1 adds nothing).
LEGACY_DEFAULT_REQUIREMENTS: tuple[tuple[str, dict[str, Any]], ...] = (
    (CAPACITY_TYPE, {"key": CAPACITY_TYPE, "operator": "In", "values": ["on-demand"]}),
    (ARCH, {"key": ARCH, "operator": "In", "values": ["amd64"]}),
    (OS, {"key": OS, "operator": "In", "values": ["linux"]}),
)
LEGACY_DEFAULT_INSTANCE_REQUIREMENTS = (
    {"key": CATEGORY, "operator": "In", "values": ["c", "m", "r"]},
    {"key": GENERATION, "operator": "Gt", "values": ["2"]},
)
INSTANCE_SELECTING_KEYS = frozenset({INSTANCE_TYPE, FAMILY, CATEGORY, GENERATION})

# v1alpha1 used these when `metadataOptions` was omitted entirely ...
LEGACY_METADATA_DEFAULTS = {"httpEndpoint": "enabled", "httpProtocolIPv6": "disabled",
                            "httpPutResponseHopLimit": 2, "httpTokens": "required"}
# ... and EC2's own defaults for the fields a partial `metadataOptions` left out.
EC2_METADATA_DEFAULTS = {"httpEndpoint": "enabled", "httpProtocolIPv6": "disabled",
                         "httpPutResponseHopLimit": 1, "httpTokens": "optional"}

# v1alpha1's disks when blockDeviceMappings was omitted (this library's own default is larger).
LEGACY_BLOCK_DEVICES: dict[str, list[dict[str, Any]]] = {
    family: [{"deviceName": device, "ebs": {"volumeSize": size, "volumeType": "gp3", "encrypted": True}}
             for device, size in disks]
    for family, disks in (
        ("AL2", (("/dev/xvda", "20Gi"),)),
        ("AL2023", (("/dev/xvda", "20Gi"),)),
        ("Bottlerocket", (("/dev/xvda", "4Gi"), ("/dev/xvdb", "20Gi"))),
        ("Windows2019", (("/dev/sda1", "50Gi"),)),
        ("Windows2022", (("/dev/sda1", "50Gi"),)),
    )
}

# EC2NodeClass tag keys v1 refuses (Karpenter sets them), and the ones v1alpha1 reserved.
RESTRICTED_TAGS = ("eks:eks-cluster-name", "karpenter.sh/nodepool", "karpenter.sh/nodeclaim",
                   "karpenter.k8s.aws/ec2nodeclass", LEGACY_POOL_LABEL, "karpenter.sh/managed-by")

V1_VOLUME_SIZE = re.compile(r"^((?:[1-9][0-9]{0,3}|[1-4][0-9]{4}|[5][0-8][0-9]{3}|59000)Gi"
                            r"|(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|[6][0-3][0-9]{3}|64000)G"
                            r"|([1-9]||[1-5][0-7]|58)Ti|([1-9]||[1-5][0-9]|6[0-3]|64)T)$")
QUANTITY = re.compile(r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]"
                      r"|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$")
NAME = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
PLACEHOLDER = re.compile(r"\$\{?[A-Z_][A-Z0-9_]*\}?")
_LABEL_KEY: TypeAdapter[str] = TypeAdapter(LabelKey)


class LegacyImportError(Exception):
    """The input cannot be converted; `problems` lists every reason, each naming file, document and field."""

    def __init__(self, problems: Iterable[str]) -> None:
        self.problems = list(problems)
        noun = "problem" if len(self.problems) == 1 else "problems"
        super().__init__(f"cannot import the legacy Karpenter objects, {len(self.problems)} {noun}:\n"
                         + "\n".join(self.problems))


@dataclass
class Conversion:
    """The converted objects, config-shaped (`name` plus upstream-spelled fields), and notes for the reader."""

    node_pools: list[dict[str, Any]]
    node_classes: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)
    origins: dict[str, str] = field(default_factory=dict)
    """Node class name -> the legacy document it came from (`file (document n): Kind 'name'`), for messages."""

    def config(self, node_role: str | None = None) -> dict[str, Any]:
        """The stack-config keys, ready to sit under `config:` in a stack file.

        Classes without `instanceProfile` leave `role` unset (the platform's node role) unless `node_role` is given.
        """
        classes = copy.deepcopy(self.node_classes)
        _check_role(node_role)
        if node_role:
            classes = [c if "instanceProfile" in c else _with_role(c, node_role) for c in classes]
        return {"eks-karpenter:nodePools": copy.deepcopy(self.node_pools), "eks-karpenter:nodeClasses": classes}

    def manifests(self, node_role: str | None = None, cluster_name: str | None = None) -> list[dict[str, Any]]:
        """v1 `EC2NodeClass` then `NodePool` objects.

        A class without `instanceProfile` needs the IAM role its nodes assume (`node_role`): v1alpha1 fell back
        to the controller's global default instance profile, which v1 no longer has. `cluster_name` is only used
        in the message of that error (stack config leaves `role` to the platform, which knows its node role).
        """
        _check_role(node_role)
        missing = [c["name"] for c in self.node_classes if "instanceProfile" not in c and "role" not in c]
        if missing and not node_role:
            hint = f" (e.g. KarpenterNodeRole-{cluster_name})" if cluster_name else ""
            raise LegacyImportError([
                f"{self.origins.get(name, f'EC2NodeClass {name!r}')}: no instanceProfile, so v1alpha1 used the "
                f"controller's default instance profile, which v1 dropped: EC2NodeClass {name!r} needs a role; pass "
                f"--node-role NAME, the IAM role name of your Karpenter nodes{hint}" for name in missing])
        objects: list[dict[str, Any]] = []
        for cls in self.node_classes:
            if "instanceProfile" not in cls and "role" not in cls and node_role:
                cls = _with_role(cls, node_role)
            spec = {k: copy.deepcopy(v) for k, v in cls.items() if k != "name"}
            objects.append({"apiVersion": NODECLASS_API, "kind": "EC2NodeClass",
                            "metadata": {"name": cls["name"]}, "spec": spec})
        for pool in self.node_pools:
            objects.append(_node_pool_manifest(pool))
        return objects


def _check_role(node_role: str | None) -> None:
    if node_role is not None and not re.fullmatch(r"[\w+=,.@-]{1,64}", node_role):
        raise LegacyImportError([f"--node-role {node_role!r}: give the IAM role's name (letters, digits and "
                                 "+=,.@_-, at most 64), not its ARN"])


def _with_role(cls: Mapping[str, Any], role: str) -> dict[str, Any]:
    """`role` placed where a reader expects it: after the selector terms."""
    out: dict[str, Any] = {}
    for key, value in cls.items():
        out[key] = value
        if key == "securityGroupSelectorTerms":
            out["role"] = role
    out.setdefault("role", role)
    return out


def _node_pool_manifest(pool: Mapping[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    for key in ("labels", "annotations"):
        if pool.get(key):
            meta[key] = copy.deepcopy(pool[key])
    tspec: dict[str, Any] = {"nodeClassRef": {"group": NODECLASS_GROUP, "kind": "EC2NodeClass",
                                              "name": pool["nodeClass"]},
                             "requirements": copy.deepcopy(pool["requirements"])}
    for key in ("taints", "startupTaints", "expireAfter", "terminationGracePeriod"):
        if pool.get(key) not in (None, [], {}):
            tspec[key] = copy.deepcopy(pool[key])
    template: dict[str, Any] = {"metadata": meta, "spec": tspec} if meta else {"spec": tspec}
    spec: dict[str, Any] = {"template": template, "disruption": copy.deepcopy(pool["disruption"])}
    for key in ("limits", "weight"):
        if pool.get(key) not in (None, {}):
            spec[key] = copy.deepcopy(pool[key])
    return {"apiVersion": NODEPOOL_API, "kind": "NodePool", "metadata": {"name": pool["name"]}, "spec": spec}


# --- reporting ------------------------------------------------------------------------------------------------


def render_path(path: Path) -> str:
    """`('spec', 'tags', 'kubernetes.io/cluster/x')` -> `spec.tags["kubernetes.io/cluster/x"]`."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", part):
            out += f".{part}" if out else part
        else:
            out += f"[{json.dumps(part)}]"
    return out


@dataclass
class _Where:
    """Which document a problem is in."""

    file: str
    doc: int
    prefix: Path = ()
    kind: str = ""
    name: str = ""

    def label(self) -> str:
        """`file (document n): Kind 'name'`."""
        what = f"{self.kind} {self.name!r}" if self.kind and self.name else self.kind
        return f"{self.file} (document {self.doc})" + (f": {what}" if what else "")

    def at(self, path: Path) -> str:
        where = render_path(self.prefix + path)
        return f"{self.label()}: {where}" if where else self.label()


@dataclass
class _Report:
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def problem(self, where: _Where, path: Path, message: str) -> None:
        self.problems.append(f"{where.at(path)}: {message}")

    def note(self, where: _Where, path: Path, message: str) -> None:
        self.notes.append(f"{where.at(path)}: {message}")


# --- typed reads of untrusted YAML ------------------------------------------------------------------------------


@dataclass
class _Ctx:
    report: _Report
    where: _Where

    def problem(self, path: Path, message: str) -> None:
        self.report.problem(self.where, path, message)

    def note(self, path: Path, message: str) -> None:
        self.report.note(self.where, path, message)

    def mapping(self, path: Path, value: Any) -> dict[str, Any] | None:
        if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
            self.problem(path, f"must be a mapping with string keys (got {_show(value)})")
            return None
        return value

    def seq(self, path: Path, value: Any) -> list[Any] | None:
        if not isinstance(value, list):
            self.problem(path, f"must be a list (got {_show(value)})")
            return None
        return value

    def text(self, path: Path, value: Any, placeholders_ok: bool = False) -> str | None:
        if not isinstance(value, str):
            self.problem(path, f"must be a string (got {_show(value)})")
            return None
        placeholder = None if placeholders_ok else PLACEHOLDER.search(value)
        if placeholder:
            self.problem(path, f"contains the shell placeholder {placeholder.group(0)}: run the file through "
                         "envsubst (or fill the value in) first")
            return None
        return value

    def scalar_text(self, path: Path, value: Any) -> str | None:
        """A string-valued field that YAML may have typed as a number (`cost-center: 4711`)."""
        if isinstance(value, bool) or value is None or isinstance(value, dict | list):
            self.problem(path, f"must be a string (got {_show(value)})")
            return None
        return self.text(path, value if isinstance(value, str) else str(value))

    def integer(self, path: Path, value: Any, low: int | None = None, high: int | None = None) -> int | None:
        if isinstance(value, bool) or not isinstance(value, int):
            self.problem(path, f"must be an integer (got {_show(value)})")
            return None
        if (low is not None and value < low) or (high is not None and value > high):
            bounds = f"{low if low is not None else '-inf'}..{high if high is not None else 'inf'}"
            self.problem(path, f"must be in {bounds} (got {value})")
            return None
        return value

    def boolean(self, path: Path, value: Any) -> bool | None:
        if not isinstance(value, bool):
            self.problem(path, f"must be true or false (got {_show(value)})")
            return None
        return value

    def choice(self, path: Path, value: Any, allowed: Iterable[str]) -> str | None:
        options = tuple(allowed)
        if value not in options:
            self.problem(path, f"must be one of {', '.join(options)} (got {_show(value)})")
            return None
        return str(value)

    def text_map(self, path: Path, value: Any) -> dict[str, str] | None:
        data = self.mapping(path, value)
        if data is None:
            return None
        out: dict[str, str] = {}
        for key, item in data.items():
            text = self.scalar_text(path + (key,), item)
            if text is not None:
                out[key] = text
        return out if len(out) == len(data) else None

    def quantity_map(self, path: Path, value: Any, keys: Iterable[str] | None = None) -> dict[str, str] | None:
        data = self.text_map(path, value)
        if data is None:
            return None
        allowed = tuple(keys) if keys is not None else None
        ok = True
        for key, item in data.items():
            if allowed is not None and key not in allowed:
                self.problem(path + (key,), f"unknown key; v1 accepts {', '.join(allowed)}")
                ok = False
            elif not QUANTITY.fullmatch(item):
                self.problem(path + (key,), f"not a Kubernetes quantity (got {_show(item)})")
                ok = False
        return data if ok else None

    def only(self, path: Path, data: Mapping[str, Any], known: Iterable[str],
             hint: Callable[[str], str | None] | None = None) -> None:
        """Refuse every key of `data` not in `known`, with a hint for misplaced or newer-API fields."""
        allowed = frozenset(known)
        for key in data:
            if key in allowed:
                continue
            extra = hint(key) if hint else None
            if extra is None and key in NEW_API_FIELDS:
                extra = (f"`{key}` is the v1beta1/v1 spelling; this command reads v1alpha5/v1alpha1 objects "
                         f"(there it is {NEW_API_FIELDS[key]})")
            self.problem(path + (key,), extra or f"unknown field; expected one of {', '.join(sorted(allowed))}")


def _show(value: Any) -> str:
    return show(value, width=60)


def _provisioner_hint(key: str) -> str | None:
    if key in TEMPLATE_FIELDS:
        return (f"`{key}` is an AWSNodeTemplate field, not a Provisioner field: put it in the AWSNodeTemplate "
                "named by spec.providerRef (or in spec.provider)")
    return None


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


# --- documents --------------------------------------------------------------------------------------------------


@dataclass
class _Provisioner:
    ctx: _Ctx
    name: str
    spec: dict[str, Any]


@dataclass
class _Template:
    ctx: _Ctx
    name: str
    spec: dict[str, Any]
    path: Path  # where the provider fields sit: ('spec',) or ('spec', 'provider')
    inline: bool = False


@dataclass
class _PoolDraft:
    name: str
    ctx: _Ctx
    body: dict[str, Any]
    template: str | None  # a referenced AWSNodeTemplate, or None for an inline provider
    kubelet: dict[str, Any] | None


def _split_documents(docs: Iterable[Doc], report: _Report) -> tuple[list[_Provisioner], list[_Template]]:
    provisioners: list[_Provisioner] = []
    templates: list[_Template] = []

    def visit(file: str, index: int, obj: Any, prefix: Path) -> None:
        where = _Where(file, index, prefix)
        ctx = _Ctx(report, where)
        if obj is None:
            return
        if not isinstance(obj, dict):
            ctx.problem((), f"not a Kubernetes object (got {_show(obj)})")
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
            provisioners.append(_Provisioner(ctx, name, spec))
        else:
            templates.append(_Template(ctx, name, spec, ("spec",)))

    for file, index, obj in docs:
        visit(file, index, obj, ())
    return provisioners, templates


def _unsupported_kind(api: Any, kind: Any) -> str:
    if kind in ("NodePool", "EC2NodeClass", "NodeClaim"):
        return (f"{api} {kind} is already the new API; this command reads karpenter.sh/v1alpha5 Provisioner and "
                "karpenter.k8s.aws/v1alpha1 AWSNodeTemplate")
    if kind in ("Provisioner", "AWSNodeTemplate"):
        want = PROVISIONER_API if kind == "Provisioner" else TEMPLATE_API
        return f"apiVersion {_show(api)} is not supported for {kind}: only {want}"
    return (f"{_show(api)} {_show(kind)} is not a legacy Karpenter object: this command reads "
            "karpenter.sh/v1alpha5 Provisioner and karpenter.k8s.aws/v1alpha1 AWSNodeTemplate")


def _check_metadata(ctx: _Ctx, meta: Mapping[str, Any]) -> None:
    ctx.only(("metadata",), meta, {"name", "labels", "annotations"} | SERVER_METADATA)
    labels = meta.get("labels") or {}
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k != LAST_APPLIED} \
        if isinstance(meta.get("annotations"), dict) else {}
    if labels or annotations:
        ctx.note(("metadata",), "the object's own labels/annotations are not carried over (only the name is); "
                 "node labels and annotations in spec are")


# --- conversion -------------------------------------------------------------------------------------------------


def convert_documents(docs: list[Doc]) -> Conversion:
    """Convert parsed legacy documents. Raises `LegacyImportError` listing every problem found."""
    report = _Report()
    provisioners, templates = _split_documents(docs, report)

    by_name: dict[str, _Template] = {}
    for tpl in templates:
        if tpl.name in by_name:
            first = by_name[tpl.name].ctx.where
            tpl.ctx.problem(("metadata", "name"), f"duplicate AWSNodeTemplate name (first in {first.file} "
                            f"document {first.doc})")
            continue
        _check_name(tpl.ctx, tpl.name, "EC2NodeClass")
        by_name[tpl.name] = tpl
    seen: dict[str, _Provisioner] = {}
    drafts: list[_PoolDraft] = []
    inline: list[_Template] = []
    for prov in provisioners:
        if prov.name in seen:
            first = seen[prov.name].ctx.where
            prov.ctx.problem(("metadata", "name"), f"duplicate Provisioner name (first in {first.file} "
                             f"document {first.doc})")
            continue
        seen[prov.name] = prov
        _check_name(prov.ctx, prov.name, "NodePool")
        draft = _convert_provisioner(prov, by_name)
        if draft is None:
            continue
        drafts.append(draft)
        if draft.template is None:
            inline.append(_Template(prov.ctx, prov.name, prov.spec["provider"], ("spec", "provider"), inline=True))

    classes: dict[str, dict[str, Any]] = {}
    origin: dict[str, _Ctx] = {}
    for tpl in [*by_name.values(), *inline]:
        if tpl.name in origin:
            tpl.ctx.problem(("spec", "provider"), f"the inline provider becomes an EC2NodeClass named {tpl.name!r}, "
                            "but an AWSNodeTemplate of that name exists: reference it with spec.providerRef or "
                            "rename one of them")
            continue
        origin[tpl.name] = tpl.ctx
        converted = _convert_template(tpl)
        if converted is not None:
            classes[tpl.name] = converted

    node_classes, pool_class = _place_kubelet(drafts, classes, origin)
    referenced = {d.template for d in drafts if d.template}
    for name, tpl in by_name.items():
        if name not in referenced and name in classes:
            tpl.ctx.note((), "not referenced by any Provisioner in these files; converted anyway")
    node_pools = [{"name": d.name, "nodeClass": pool_class.get(d.name, d.template or d.name), **d.body}
                  for d in drafts]
    class_ctx = {c["name"]: origin[c.pop("_from")] for c in node_classes}
    if not report.problems:
        _validate(node_pools, [d.ctx for d in drafts], node_classes, [class_ctx[c["name"]] for c in node_classes])
    if not report.problems and not node_pools and not node_classes:
        report.problems.append("no karpenter.sh/v1alpha5 Provisioner or karpenter.k8s.aws/v1alpha1 AWSNodeTemplate "
                               "in the given files")
    if report.problems:
        raise LegacyImportError(report.problems)
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
        report.notes.append(f"workloads that select nodes by {LEGACY_POOL_LABEL} must use karpenter.sh/nodepool "
                            "(same value: each pool keeps its provisioner's name)")
    origins = {name: ctx.where.label() for name, ctx in class_ctx.items()}
    return Conversion(node_pools=node_pools, node_classes=node_classes, notes=report.notes, origins=origins)


def _check_name(ctx: _Ctx, name: str, kind: str) -> None:
    if not NAME.fullmatch(name):
        ctx.problem(("metadata", "name"), f"{name!r} cannot name a {kind} in this library's config: lowercase "
                    "letters, digits and '-', at most 63 characters")


def _validate(pools: list[dict[str, Any]], pool_ctx: list[_Ctx], classes: list[dict[str, Any]],
              class_ctx: list[_Ctx]) -> None:
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
                for issue in issues_from_validation_error(err, (key, i)):
                    ctx.problem((), _converted_problem(issue, entry))
    if any(ctx.report.problems for ctx in pool_ctx + class_ctx):
        return
    zones = sorted({v for p in pools for r in p.get("requirements", []) if r["key"] == ZONE
                    for v in r.get("values", [])})
    issues = validate_node_config(parsed[POOLS_KEY], parsed[CLASSES_KEY], zones, True, (POOLS_KEY,),
                                  (CLASSES_KEY,))
    for issue in issues:
        section, index = issue.path[0], issue.path[1]
        i = index if isinstance(index, int) else 0
        ctx, entry = (pool_ctx[i], pools[i]) if section == POOLS_KEY else (class_ctx[i], classes[i])
        ctx.problem((), _converted_problem(issue, entry))


def _converted_problem(issue: Issue, entry: Mapping[str, Any]) -> str:
    path = render_config_path((issue.path[0], entry.get("name", "?")) + tuple(issue.path[2:]))
    got = f" (got {_show(issue.value)})" if issue.has_value else ""
    return f"the converted entry is refused at {path}: {issue.message}{got}"


def _place_kubelet(drafts: list[_PoolDraft], classes: dict[str, dict[str, Any]],
                   origin: dict[str, _Ctx]) -> tuple[list[dict[str, Any]], dict[str, str]]:
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
        variants: list[tuple[str, dict[str, Any] | None, list[_PoolDraft]]] = []
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


def _convert_provisioner(prov: _Provisioner, templates: Mapping[str, _Template]) -> _PoolDraft | None:
    ctx, spec = prov.ctx, prov.spec
    sp: Path = ("spec",)
    ctx.only(sp, spec, PROVISIONER_FIELDS, _provisioner_hint)
    body: dict[str, Any] = {}

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

    kubelet = _kubelet(ctx, sp + ("kubeletConfiguration",), spec["kubeletConfiguration"]) \
        if "kubeletConfiguration" in spec else None

    template: str | None = None
    if "provider" in spec and "providerRef" in spec:
        ctx.problem(sp + ("provider",), "set either spec.provider or spec.providerRef, not both")
        return None
    if "providerRef" in spec:
        template = _provider_ref(ctx, sp + ("providerRef",), spec["providerRef"], templates)
    elif "provider" in spec:
        if ctx.mapping(sp + ("provider",), spec["provider"]) is None:
            return None
    else:
        ctx.problem(sp, "needs spec.providerRef (an AWSNodeTemplate) or spec.provider: the node settings")

    # The shortcuts that have defaults are switched off (capacityTypes, arch and os cannot be, but a raw
    # requirement on their key replaces them, and every converted pool has one); v1alpha5 had no drain deadline
    # and no limits unless set, so those library defaults are switched off too.
    body.setdefault("limits", {})
    body["terminationGracePeriod"] = None
    keys = {r["key"] for r in body.get("requirements", [])}
    for shortcut, key in (("instanceCategories", CATEGORY), ("minGeneration", GENERATION)):
        if key not in keys:  # (with a raw requirement on its key the shortcut is replaced anyway)
            body[shortcut] = None
    order = ("instanceCategories", "minGeneration", "requirements", "labels", "annotations", "taints",
             "startupTaints", "expireAfter", "terminationGracePeriod", "disruption", "limits", "weight")
    ordered = {k: body[k] for k in order if k in body}
    if "provider" not in spec and template is None:
        return None
    return _PoolDraft(prov.name, ctx, ordered, template, kubelet)


def _disruption(policy: str, after: str) -> dict[str, Any]:
    # v1's default budget, written out: the library and the CRD would both add it anyway.
    return {"consolidationPolicy": policy, "consolidateAfter": after, "budgets": [{"nodes": "10%"}]}


def _requirements(ctx: _Ctx, spec: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    path: Path = ("spec", "requirements")
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


def _legacy_defaults(ctx: _Ctx, requirements: list[dict[str, Any]], labels: Mapping[str, str]) -> list[dict[str, Any]]:
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


def _check_label_key(ctx: _Ctx, path: Path, key: str, what: str) -> bool:
    """v1's restrictions on requirement keys and node label keys, with the legacy label named."""
    if key == LEGACY_POOL_LABEL:
        ctx.problem(path, f"{LEGACY_POOL_LABEL} became karpenter.sh/nodepool, which v1 restricts (Karpenter sets "
                    f"it to the pool's name): remove this {what}")
        return False
    try:
        _LABEL_KEY.validate_python(key)
    except ValidationError as err:
        ctx.problem(path, f"{what} {key!r}: " + "; ".join(e["msg"].removeprefix("Value error, ") for e in err.errors()))
        return False
    return True


def _taints(ctx: _Ctx, path: Path, value: Any) -> list[dict[str, Any]]:
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


def _limits(ctx: _Ctx, path: Path, value: Any) -> dict[str, Any]:
    data = ctx.mapping(path, value) or {}
    out: dict[str, Any] = {}
    for key, amount in data.items():
        if isinstance(amount, int) and not isinstance(amount, bool) and amount >= 0:
            out[key] = str(amount)  # quantities are strings in v1 manifests
        elif isinstance(amount, str) and QUANTITY.fullmatch(amount):
            out[key] = amount
        else:
            ctx.problem(path + (key,), f"not a Kubernetes quantity (got {_show(amount)})")
    return out


def _kubelet(ctx: _Ctx, path: Path, value: Any) -> dict[str, Any] | None:
    data = ctx.mapping(path, value)
    if data is None:
        return None
    ctx.only(path, data, KUBELET_FIELDS)
    out: dict[str, Any] = {}
    if "containerRuntime" in data:
        runtime = data["containerRuntime"]
        if runtime == "containerd":
            ctx.note(path + ("containerRuntime",), "dropped: v1 nodes always run containerd")
        else:
            ctx.problem(path + ("containerRuntime",), f"{_show(runtime)} is not available in v1 (nodes always "
                        "run containerd; dockershim left Kubernetes in 1.24): remove it")
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
    if "clusterDNS" in data:
        dns = ctx.seq(path + ("clusterDNS",), data["clusterDNS"])
        if dns is not None:
            items = [ctx.text(path + ("clusterDNS", i), v) for i, v in enumerate(dns)]
            out["clusterDNS"] = None if None in items else items
    for key in ("systemReserved", "kubeReserved"):
        if key in data:
            out[key] = ctx.quantity_map(path + (key,), data[key], RESERVED_RESOURCES)
            for res, amount in (out[key] or {}).items():
                if amount.startswith("-"):
                    ctx.problem(path + (key, res), "must not be negative")
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
    if None in out.values():
        return None
    order = ("maxPods", "podsPerCore", "systemReserved", "kubeReserved", "evictionHard", "evictionSoft",
             "evictionSoftGracePeriod", "evictionMaxPodGracePeriod", "imageGCHighThresholdPercent",
             "imageGCLowThresholdPercent", "cpuCFSQuota", "clusterDNS")
    return {k: out[k] for k in order if k in out} or None


def _provider_ref(ctx: _Ctx, path: Path, value: Any, templates: Mapping[str, _Template]) -> str | None:
    ref = ctx.mapping(path, value)
    if ref is None:
        return None
    ctx.only(path, ref, ("apiVersion", "kind", "name"))
    if "apiVersion" in ref and ref["apiVersion"] != TEMPLATE_API:
        ctx.problem(path + ("apiVersion",), f"must be {TEMPLATE_API} (got {_show(ref['apiVersion'])})")
    if "kind" in ref and ref["kind"] != "AWSNodeTemplate":
        ctx.problem(path + ("kind",), f"must be AWSNodeTemplate (got {_show(ref['kind'])})")
    name = ctx.text(path + ("name",), ref.get("name"))
    if name is None:
        return None
    if name not in templates:
        ctx.problem(path + ("name",), f"no AWSNodeTemplate named {name!r} in the given files: pass the file that "
                    "defines it too")
        return None
    return name


# --- node templates -> node classes -----------------------------------------------------------------------------


def _convert_template(tpl: _Template) -> dict[str, Any] | None:
    ctx, spec, sp = tpl.ctx, tpl.spec, tpl.path
    problems_before = len(ctx.report.problems)
    if tpl.inline:
        ctx.only(sp, spec, PROVIDER_FIELDS, _provider_hint)
    else:
        ctx.only(sp, spec, TEMPLATE_FIELDS, _template_hint)
    if "apiVersion" in spec and spec["apiVersion"] not in ("extension.karpenter.sh/v1alpha1", TEMPLATE_API):
        ctx.problem(sp + ("apiVersion",), f"unexpected provider apiVersion {_show(spec['apiVersion'])}")
    if "kind" in spec and spec["kind"] not in ("AWS", "AWSNodeTemplate"):
        ctx.problem(sp + ("kind",), f"unexpected provider kind {_show(spec['kind'])}")
    if "launchTemplate" in spec:
        ctx.problem(sp + ("launchTemplate",), "custom launch templates were removed (v0.32 / v1): express the "
                    "settings as EC2NodeClass fields (amiSelector, userData, blockDeviceMappings, metadataOptions, "
                    "securityGroupSelector)")
    out: dict[str, Any] = {"name": tpl.name}
    written: list[str] = []  # v1alpha1 defaults written out because v1's (or this library's) differ

    family, ami_terms = _ami(ctx, sp, spec)
    if family is not None and "amiSelector" in spec:
        out["amiFamily"] = family
        if "amiFamily" not in spec:
            written.append("amiFamily AL2 (v1 requires it next to an amiSelector)")
    if ami_terms is not None:
        out["amiSelectorTerms"] = ami_terms
    for legacy, v1, prefix in (("subnetSelector", "subnetSelectorTerms", "subnet-"),
                               ("securityGroupSelector", "securityGroupSelectorTerms", "sg-")):
        if legacy not in spec:
            ctx.problem(sp + (legacy,), f"required: v1 needs {v1}")
            continue
        terms = _selector_terms(ctx, sp + (legacy,), spec[legacy], prefix)
        if terms is not None:
            out[v1] = terms
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
    out["metadataOptions"] = _metadata_options(ctx, sp, spec, written)
    if "blockDeviceMappings" in spec:
        mappings = _block_devices(ctx, sp + ("blockDeviceMappings",), spec["blockDeviceMappings"])
        if mappings:
            out["blockDeviceMappings"] = mappings
    elif family is not None and family in LEGACY_BLOCK_DEVICES:
        out["blockDeviceMappings"] = copy.deepcopy(LEGACY_BLOCK_DEVICES[family])
        sizes = " + ".join(d["ebs"]["volumeSize"] for d in LEGACY_BLOCK_DEVICES[family])
        written.append(f"blockDeviceMappings ({sizes} encrypted gp3, v1alpha1's default for {family})")
    if "detailedMonitoring" in spec:
        out["detailedMonitoring"] = ctx.boolean(sp + ("detailedMonitoring",), spec["detailedMonitoring"])
    if "associatePublicIpAddress" in spec:
        out["associatePublicIPAddress"] = ctx.boolean(sp + ("associatePublicIpAddress",),
                                                      spec["associatePublicIpAddress"])
    if "context" in spec:
        out["context"] = ctx.text(sp + ("context",), spec["context"])
    if written:
        ctx.note(sp, "v1alpha1 defaults written out explicitly: " + "; ".join(written))
    if len(ctx.report.problems) != problems_before:
        return None
    return out


def _ami(ctx: _Ctx, sp: Path, spec: Mapping[str, Any]) -> tuple[str | None, list[dict[str, Any]] | None]:
    """(the AMI family in effect, amiSelectorTerms). Without an amiSelector the family becomes an alias term."""
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


def _ami_terms(ctx: _Ctx, path: Path, value: Any) -> list[dict[str, Any]] | None:
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


def _selector_terms(ctx: _Ctx, path: Path, value: Any, id_prefix: str) -> list[dict[str, Any]] | None:
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


def _tags(ctx: _Ctx, path: Path, value: Any) -> dict[str, str] | None:
    tags = ctx.text_map(path, value)
    if tags is None:
        return None
    ok = True
    for key in tags:
        reason = None
        if key == "":
            reason = "empty tag key"
        elif key.startswith("kubernetes.io/cluster"):
            reason = "kubernetes.io/cluster/* is restricted in v1 (Karpenter tags instances with it)"
        elif key in RESTRICTED_TAGS:
            reason = f"{key} is restricted (Karpenter sets it)"
        elif key.lower().startswith("aws:"):
            reason = "the aws: prefix is reserved by AWS"
        if reason:
            ctx.problem(path + (key,), reason)
            ok = False
    return tags if ok else None


def _metadata_options(ctx: _Ctx, sp: Path, spec: Mapping[str, Any], written: list[str]) -> dict[str, Any] | None:
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


def _block_devices(ctx: _Ctx, path: Path, value: Any) -> list[dict[str, Any]] | None:
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


def _ebs(ctx: _Ctx, path: Path, value: Any) -> dict[str, Any] | None:
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
                        f"(got {_show(size)})")
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


# --- YAML in and out --------------------------------------------------------------------------------------------


def parse_documents(name: str, text: str) -> list[Doc]:
    """The documents of one YAML file, numbered from 1. A YAML syntax error is a `LegacyImportError`."""
    try:
        loaded = list(yaml.safe_load_all(text))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        raise LegacyImportError([f"{name}:{where} not valid YAML: {getattr(exc, 'problem', None) or exc}"]) from None
    return [(name, i, obj) for i, obj in enumerate(loaded, start=1)]


class _Dumper(yaml.SafeDumper):
    """Block style, multi-line strings (userData) as literal blocks, keys in the order written."""


def _str_representer(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if "\n" in value:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


def _list_representer(dumper: yaml.SafeDumper, value: list[Any]) -> yaml.SequenceNode:
    # Short lists of scalars (requirement values, clusterDNS) read best inline: `values: [spot, on-demand]`.
    flat = bool(value) and all(isinstance(v, str | int | float) and "\n" not in str(v) for v in value)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=flat)


_Dumper.add_representer(str, _str_representer)
_Dumper.add_representer(list, _list_representer)


def dump_yaml(data: Any) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, default_flow_style=False, allow_unicode=True, width=120)


def render_config(conversion: Conversion, sources: Iterable[str] = (), node_role: str | None = None) -> str:
    """The stack-config snippet: paste its `config:` entries into stacks/Pulumi.<stack>.yaml."""
    names = ", ".join(sources)
    header = (f"# Converted by `python -m infra import-legacy` from: {names}\n" if names else "") + \
        "# Paste these keys under `config:` in stacks/Pulumi.<stack>.yaml.\n"
    return header + dump_yaml({"config": conversion.config(node_role)})


def render_manifests(objects: Iterable[Mapping[str, Any]]) -> str:
    return "".join("---\n" + dump_yaml(dict(obj)) for obj in objects)
