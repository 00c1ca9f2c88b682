"""Cross-field and cross-object rules for node classes and pools. Single-value checks live on the types.

Together with the types, these reject every object the Karpenter 1.14 CRDs (OpenAPI schema and CEL rules)
would reject, so a bad pool fails at `pulumi preview` instead of at apply time. A few rules go further where the
CRD lets through something Karpenter or EC2 refuses later (noted where they are).
"""

from __future__ import annotations

import email
import re
import tomllib
from collections.abc import Sequence

import yaml

from eks_karpenter._model import Issue, Path
from eks_karpenter.arns import arn_issues
from eks_karpenter.nodepool.admission import admission_issues, admission_warnings
from eks_karpenter.nodepool.config import (
    ALIAS_FAMILIES,
    ARCH,
    CAPACITY_TYPE,
    CATEGORY,
    FAMILY,
    INSTANCE_TYPE,
    OS,
    ZONE,
    AmiSelectorTerm,
    NodeClassConfig,
    NodePoolConfig,
)
from eks_karpenter.nodepool.instances import INSTANCE_CATEGORIES, family_arch
from eks_karpenter.nodepool.manifests import SHORTCUT_KEYS, Req, allowed_values, expand_sizes, pool_requirements
from eks_karpenter.quantities import bytes_issue, unitless_bytes
from eks_karpenter.stackfile import suggest

_NUMERIC = ("Gt", "Lt", "Gte", "Lte")
_KNOWN_VALUES: dict[str, tuple[str, ...]] = {
    CAPACITY_TYPE: ("spot", "on-demand", "reserved"), ARCH: ("amd64", "arm64"), OS: ("linux", "windows")}
_FIELD_BY_ALIAS = {f.alias or name: name for name, f in NodePoolConfig.model_fields.items()}


def validate_node_config(pools: Sequence[NodePoolConfig], classes: Sequence[NodeClassConfig], zones: list[str],
                         interruption_handled: bool, at_pools: Path, at_classes: Path) -> list[Issue]:
    """Every rule on `eks-karpenter:nodePools` and `eks-karpenter:nodeClasses`, with the key path to fix.

    `zones` are the network's zones; `interruption_handled` says whether Karpenter gets an interruption queue.
    """
    issues: list[Issue] = []
    issues += _duplicates([c.name for c in classes], at_classes, "node class")
    issues += _duplicates([p.name for p in pools], at_pools, "node pool")
    for i, cls in enumerate(classes):
        issues += _class_issues(cls, at_classes + (i,))
    by_name = {c.name: c for c in classes}
    for i, pool in enumerate(pools):
        at = at_pools + (i,)
        found = _pool_issues(pool, at) + _pool_context_issues(pool, by_name, zones, interruption_handled, at)
        issues += found
        if not found:  # what a well-formed pool can launch (a malformed one has its own errors)
            issues += admission_issues(pool, by_name[pool.node_class], at)
    return issues


def _duplicates(names: list[str], at: Path, what: str) -> list[Issue]:
    return [Issue(at + (i, "name"), f"{what} names must be unique", name)
            for i, name in enumerate(names) if name in names[:i]]


# --- EC2NodeClass ----------------------------------------------------------------------------------------------

def _class_issues(cls: NodeClassConfig, at: Path) -> list[Issue]:
    issues: list[Issue] = []
    if cls.role and cls.instance_profile:
        issues.append(Issue(at + ("instanceProfile",), "must specify exactly one of role and instanceProfile (leave "
                            "both out to use the platform's node role)", cls.instance_profile))
    issues += _ami_issues(cls, at)
    issues += _selector_issues(cls, at)
    issues += _block_device_issues(cls, at)
    issues += _kubelet_issues(cls, at)
    issues += _network_issues(cls, at)
    if cls.user_data is not None:
        problem = user_data_problem(cls.family, cls.user_data)
        if problem:
            issues.append(Issue(at + ("userData",), problem, cls.user_data))
    return issues


def _ami_issues(cls: NodeClassConfig, at: Path) -> list[Issue]:
    issues: list[Issue] = []
    terms = cls.ami_selector_terms
    for j, t in enumerate(terms):
        tp = at + ("amiSelectorTerms", j)
        others = [t.tags, t.name, t.owner, t.ssm_parameter]
        if not any(v is not None for v in (t.alias, t.id, t.name, t.tags, t.ssm_parameter)):
            issues.append(Issue(tp, "expected at least one of tags, id, name, alias, ssmParameter", t.dump()))
        if t.id is not None and (t.alias is not None or any(v is not None for v in others)):
            issues.append(Issue(tp + ("id",), "'id' is mutually exclusive, cannot be set with a combination of other "
                                "fields in amiSelectorTerms", t.id))
        if t.alias is not None and (t.id is not None or any(v is not None for v in others)):
            issues.append(Issue(tp + ("alias",), "'alias' is mutually exclusive, cannot be set with a combination of "
                                "other fields in amiSelectorTerms", t.alias))
    aliases = [t.alias for t in terms if t.alias is not None]
    if aliases and len(terms) != 1:
        issues.append(Issue(at + ("amiSelectorTerms",), "'alias' is mutually exclusive, cannot be set with a "
                            "combination of other amiSelectorTerms", [t.dump() for t in terms]))
    if cls.ami_family is None and not aliases:
        issues.append(Issue(at + ("amiFamily",), "must specify amiFamily if amiSelectorTerms does not contain an "
                            "alias", None, has_value=False))
    for alias in aliases:
        implied = ALIAS_FAMILIES.get(alias.split("@")[0])
        if implied and cls.ami_family not in (None, "Custom", implied):
            issues.append(Issue(at + ("amiFamily",), f"if set, amiFamily must be '{implied}' or 'Custom' when using "
                                f"alias {alias}", cls.ami_family))
    return issues


def _selector_issues(cls: NodeClassConfig, at: Path) -> list[Issue]:
    issues: list[Issue] = []
    # Upstream's CEL rejects a combined id only when every term combines it (mixed lists stay valid: the fields of
    # a term are ANDed). Mirror that exactly.
    subnets = cls.subnet_selector_terms or []
    for j, s in enumerate(subnets):
        if s.id is None and s.tags is None:
            issues.append(Issue(at + ("subnetSelectorTerms", j), "expected at least one of tags, id", s.dump()))
    if subnets and all(s.id is not None and s.tags is not None for s in subnets):
        issues += [Issue(at + ("subnetSelectorTerms", j, "id"), "'id' is mutually exclusive, cannot be set with a "
                         "combination of other fields in a subnet selector term", s.id) for j, s in enumerate(subnets)]

    groups = cls.security_group_selector_terms or []
    for j, g in enumerate(groups):
        if g.id is None and g.name is None and g.tags is None:
            issues.append(Issue(at + ("securityGroupSelectorTerms", j), "expected at least one of tags, id, name",
                                g.dump()))
    id_combined = [g.id is not None and (g.tags is not None or g.name is not None) for g in groups]
    name_combined = [g.name is not None and (g.tags is not None or g.id is not None) for g in groups]
    for field, combined in (("id", id_combined), ("name", name_combined)):
        if groups and all(combined):
            issues += [Issue(at + ("securityGroupSelectorTerms", j, field), f"'{field}' is mutually exclusive, "
                             "cannot be set with a combination of other fields in a security group selector term",
                             getattr(g, field)) for j, g in enumerate(groups)]

    reservations = cls.capacity_reservation_selector_terms or []
    for j, r in enumerate(reservations):
        if r.id is None and r.tags is None and r.instance_match_criteria is None:
            issues.append(Issue(at + ("capacityReservationSelectorTerms", j), "expected at least one of tags, id, "
                                "instanceMatchCriteria", r.dump()))
    if reservations and all(r.id is not None and (r.tags is not None or r.owner_id is not None
                                                  or r.instance_match_criteria is not None) for r in reservations):
        issues += [Issue(at + ("capacityReservationSelectorTerms", j, "id"), "'id' is mutually exclusive, cannot be "
                         "set along with other fields in a capacity reservation selector term", r.id)
                   for j, r in enumerate(reservations)]
    return issues


def _block_device_issues(cls: NodeClassConfig, at: Path) -> list[Issue]:
    issues: list[Issue] = []
    roots = 0
    for j, m in enumerate(cls.block_device_mappings or []):
        mp = at + ("blockDeviceMappings", j)
        if m.root_volume:
            roots += 1
            if roots > 1:
                issues.append(Issue(mp + ("rootVolume",), "must have only one blockDeviceMappings with rootVolume",
                                    True))
        ebs = m.ebs
        if ebs is None:
            continue
        if ebs.snapshot_id is None and ebs.volume_size is None:
            issues.append(Issue(mp + ("ebs",), "snapshotID or volumeSize must be defined", ebs.dump()))
        if ebs.volume_initialization_rate is not None and ebs.snapshot_id is None:
            issues.append(Issue(mp + ("ebs", "volumeInitializationRate"), "snapshotID must be set when "
                                "volumeInitializationRate is set", ebs.volume_initialization_rate))
        # Beyond the CRD: EC2 refuses these at launch.
        if ebs.iops is not None and ebs.volume_type in ("standard", "gp2", "sc1", "st1"):
            issues.append(Issue(mp + ("ebs", "iops"), f"iops only applies to io1, io2 and gp3 volumes, not "
                                f"{ebs.volume_type}", ebs.iops))
        if ebs.throughput is not None and ebs.volume_type not in (None, "gp3"):
            issues.append(Issue(mp + ("ebs", "throughput"), f"throughput only applies to gp3 volumes, not "
                                f"{ebs.volume_type}", ebs.throughput))
    return issues


def _kubelet_issues(cls: NodeClassConfig, at: Path) -> list[Issue]:
    k = cls.kubelet
    if k is None:
        return []
    kp = at + ("kubelet",)
    issues: list[Issue] = []
    for field, reserved in (("systemReserved", k.system_reserved), ("kubeReserved", k.kube_reserved)):
        issues += [bytes_issue(kp + (field, name), name, value) for name, value in (reserved or {}).items()
                   if unitless_bytes(name, value)]
    for field, thresholds in (("evictionHard", k.eviction_hard), ("evictionSoft", k.eviction_soft)):
        issues += [bytes_issue(kp + (field, signal), signal.split(".")[0], value)
                   for signal, value in (thresholds or {}).items()
                   if signal.endswith(".available") and signal != "pid.available" and unitless_bytes("memory", value)]
    high, low = k.image_gc_high_threshold_percent, k.image_gc_low_threshold_percent
    if high is not None and low is not None and high <= low:
        issues.append(Issue(kp + ("imageGCHighThresholdPercent",), "imageGCHighThresholdPercent must be greater "
                            f"than imageGCLowThresholdPercent ({low})", high))
    soft, grace = k.eviction_soft, k.eviction_soft_grace_period
    for key in soft or {}:
        if key not in (grace or {}):
            issues.append(Issue(kp + ("evictionSoft", key), "evictionSoft threshold has no matching "
                                "evictionSoftGracePeriod", (soft or {})[key]))
    for key in grace or {}:
        if key not in (soft or {}):
            issues.append(Issue(kp + ("evictionSoftGracePeriod", key), "evictionSoftGracePeriod has no matching "
                                "evictionSoft threshold", (grace or {})[key]))
    return issues


def _network_issues(cls: NodeClassConfig, at: Path) -> list[Issue]:
    issues: list[Issue] = []
    nics = cls.network_interfaces or []
    np = at + ("networkInterfaces",)
    if nics and not any(n.device_index == 0 and n.network_card_index == 0 and n.interface_type == "interface"
                        for n in nics):
        issues.append(Issue(np, "networkInterfaces must include a primary interface (networkCardIndex 0, deviceIndex "
                            "0) with interfaceType='interface'", [n.dump() for n in nics]))
    for j, n in enumerate(nics):
        earlier = nics[:j]
        if any((e.network_card_index, e.device_index) == (n.network_card_index, n.device_index) for e in earlier):
            issues.append(Issue(np + (j,), "networkInterfaces must not have duplicate networkCardIndex and "
                                "deviceIndex pairs", n.dump()))
        elif n.interface_type == "efa-only" and any(
                e.interface_type == "efa-only" and e.network_card_index == n.network_card_index for e in earlier):
            issues.append(Issue(np + (j,), "at most one efa-only interface per network card", n.dump()))
    pg = cls.placement_group_selector
    if pg is not None and (pg.id is None) == (pg.name is None):
        issues.append(Issue(at + ("placementGroupSelector",), "set exactly one of name and id", pg.dump()))
    ct = cls.connection_tracking
    if ct is not None and not ct.dump():
        issues.append(Issue(at + ("connectionTracking",), "at least one of tcpEstablishedTimeout, udpStreamTimeout, "
                            "or udpTimeout must be set", {}))
    return issues


def _mime_problem(text: str) -> str | None:
    msg = email.message_from_string(text.strip())
    if not msg.is_multipart():
        return "MIME user data must be multipart (Content-Type: multipart/mixed; boundary=...)"
    if msg.defects or not msg.get_payload():
        return "MIME user data is malformed (check the boundary lines and the closing --boundary--)"
    return None


def user_data_problem(family: str | None, text: str) -> str | None:
    """Why `text` is not user data Karpenter can merge for this AMI family (None when it is fine)."""
    stripped = text.strip()
    is_mime = stripped.startswith(("MIME-Version:", "Content-Type:"))
    if family in (None, "Custom"):
        return None  # used as is
    if family == "Bottlerocket":
        try:
            tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            return f"Bottlerocket user data must be TOML settings: {exc}"
        return None
    if family.startswith("Windows"):
        if "<powershell>" in text.lower() or "</powershell>" in text.lower():
            return ("Windows user data is bare PowerShell: Karpenter wraps it in <powershell> tags, and nested tags "
                    "would cut off its bootstrap section")
        if is_mime or stripped.startswith("#!"):
            return "Windows user data must be PowerShell commands"
        return None
    if is_mime:
        return _mime_problem(text)
    if stripped.startswith("#!"):
        return None  # Karpenter wraps a script in a MIME part
    if family == "AL2":
        return "AL2 user data must be MIME multi-part or a shell script starting with #!"
    return _node_config_problem(text)


def _node_config_problem(text: str) -> str | None:
    wanted = ("AL2023 user data must be a nodeadm NodeConfig (apiVersion: node.eks.aws/v1alpha1, kind: NodeConfig), "
              "MIME multi-part, or a shell script starting with #!")
    try:
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError:
        return wanted
    if len(docs) != 1 or not isinstance(docs[0], dict):
        return wanted
    doc = docs[0]
    if doc.get("apiVersion") != "node.eks.aws/v1alpha1" or doc.get("kind") != "NodeConfig":
        return wanted
    return None


# --- NodePool --------------------------------------------------------------------------------------------------

def _req_path(at: Path, req: Req, *rest: str | int) -> Path:
    """Where a rendered requirement comes from: its shortcut key, or the raw requirement's field."""
    if isinstance(req.source, int):
        return at + ("requirements", req.source) + rest
    return at + (req.source,)


def _non_negative_int(text: str) -> bool:
    return re.fullmatch(r"\d+", text) is not None and int(text) < 2**63


def _pool_issues(pool: NodePoolConfig, at: Path) -> list[Issue]:
    issues: list[Issue] = []
    for j, r in enumerate(pool.requirements):
        rp = at + ("requirements", j)
        values = r.values or []
        if r.operator == "In" and not values:
            issues.append(Issue(rp + ("values",), "requirements with operator 'In' must have a value defined",
                                r.values, has_value=r.values is not None))
        # Beyond the CRD (Kubernetes semantics, enforced by Karpenter at runtime):
        if r.operator == "NotIn" and not values:
            issues.append(Issue(rp + ("values",), "operator 'NotIn' needs at least one value", r.values,
                                has_value=r.values is not None))
        if r.operator in ("Exists", "DoesNotExist") and values:
            issues.append(Issue(rp + ("values",), f"operator '{r.operator}' takes no values", values))
        if r.operator in _NUMERIC and (len(values) != 1 or not _non_negative_int(values[0])):
            issues.append(Issue(rp + ("values",), "requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a "
                                "single non-negative integer value", r.values, has_value=r.values is not None))
        if r.operator == "In" and r.min_values is not None and len(values) < r.min_values:
            issues.append(Issue(rp + ("minValues",), f"requirements with 'minValues' must have at least that many "
                                f"values specified in 'values' (has {len(values)})", r.min_values))
        known = _KNOWN_VALUES.get(r.key)
        if known and r.operator in ("In", "NotIn"):
            issues += [Issue(rp + ("values", k), f"{r.key} is one of {', '.join(known)}", v)
                       for k, v in enumerate(values) if v not in known]
        for alias, key in SHORTCUT_KEYS.items():
            if key == r.key and pool.is_set(_FIELD_BY_ALIAS[alias]):
                issues.append(Issue(rp + ("key",), f"`{alias}` already sets {key}; a raw requirement on the same key "
                                    f"replaces it, so keep only one of them", r.key))

    for k, b in enumerate(pool.disruption.budgets):
        if (b.schedule is None) != (b.duration is None):
            missing = "duration" if b.duration is None else "schedule"
            issues.append(Issue(at + ("disruption", "budgets", k, missing), "'schedule' must be set with 'duration'",
                                None, has_value=False))
    issues += _taint_issues(pool, at)
    issues += _instance_issues(pool, at)
    issues += _label_issues(pool, at)
    issues += _limits_issues(pool, at)
    issues += _category_issues(pool, at)
    issues += _arch_issues(pool, at)
    return issues


# Resource names a NodePool limit can cap: Kubernetes' standard node resources, plus `nodes`; any extended resource
# must be domain-qualified (`nvidia.com/gpu`), so an unqualified unknown name (`cpus`) is a typo Karpenter would
# silently ignore, leaving the pool without the cap the stack file shows.
LIMIT_RESOURCES = ("cpu", "memory", "ephemeral-storage", "pods", "nodes")
COMMON_EXTENDED_RESOURCES = ("nvidia.com/gpu", "amd.com/gpu", "aws.amazon.com/neuron", "aws.amazon.com/neuroncore",
                             "aws.amazon.com/neurondevice", "habana.ai/gaudi", "vpc.amazonaws.com/efa",
                             "vpc.amazonaws.com/pod-eni")
def _limits_issues(pool: NodePoolConfig, at: Path) -> list[Issue]:
    issues: list[Issue] = []
    for name, value in pool.limits.items():
        path = at + ("limits", name)
        if "/" not in name and name not in LIMIT_RESOURCES and not name.startswith("hugepages-"):
            hint = suggest(name, LIMIT_RESOURCES + COMMON_EXTENDED_RESOURCES)
            issues.append(Issue(path, f"not a resource a limit can cap{hint} (limits take {', '.join(LIMIT_RESOURCES)}"
                                ", hugepages-<size>, or a domain-qualified extended resource like nvidia.com/gpu); "
                                "Karpenter would ignore it", value))
        elif unitless_bytes(name, value):
            issues.append(bytes_issue(path, name, value))
    return issues


def _category_issues(pool: NodePoolConfig, at: Path) -> list[Issue]:
    issues: list[Issue] = []
    found: list[tuple[Path, str]] = []
    if pool.is_set("instance_categories"):
        found += [(at + ("instanceCategories", k), c) for k, c in enumerate(pool.instance_categories or ())]
    for j, r in enumerate(pool.requirements):
        if r.key == CATEGORY and r.operator == "In":
            found += [(at + ("requirements", j, "values", k), c) for k, c in enumerate(r.values or ())]
    for path, category in found:
        if category not in INSTANCE_CATEGORIES:
            issues.append(Issue(path, f"no EC2 instance category has this name{suggest(category, INSTANCE_CATEGORIES)}"
                                f" (categories: {', '.join(sorted(INSTANCE_CATEGORIES))})", category))
    return issues


def _arch_issues(pool: NodePoolConfig, at: Path) -> list[Issue]:
    """Instance families or types of an architecture the pool does not allow can never launch."""
    reqs = pool_requirements(pool)
    arches = allowed_values(reqs, ARCH, _KNOWN_VALUES[ARCH])
    arch_req = _first(reqs, ARCH)
    where = "its requirements" if arch_req is not None and isinstance(arch_req.source, int) else "arch"
    named: list[tuple[Path, str, str]] = []
    named += [(at + ("instanceFamilies", k), f, f) for k, f in enumerate(pool.instance_families or ())]
    named += [(at + ("instanceTypes", k), t, t.partition(".")[0]) for k, t in enumerate(pool.instance_types or ())]
    for j, r in enumerate(pool.requirements):
        if r.operator == "In" and r.key in (FAMILY, INSTANCE_TYPE):
            named += [(at + ("requirements", j, "values", k), v, v.partition(".")[0])
                      for k, v in enumerate(r.values or ())]
    issues: list[Issue] = []
    for path, value, family in named:
        arch = family_arch(family)
        if arch is not None and arch not in arches:
            allowed = ", ".join(arches) or "no architecture"
            issues.append(Issue(path, f"{family} is {arch} only, but the pool allows {allowed} ({where}): no instance "
                                "of it can launch", value))
    return issues


def _ami_arch(term: AmiSelectorTerm) -> set[str] | None:
    """The architectures an AMI selector term can match, when its name or SSM path says so."""
    text = " ".join(filter(None, (term.ssm_parameter, term.name))).lower()
    found = {arch for arch, words in (("arm64", ("arm64", "aarch64")), ("amd64", ("x86_64", "x86-64", "amd64")))
             if any(w in text for w in words)}
    return found or None


def class_architectures(cls: NodeClassConfig) -> set[str] | None:
    """Architectures a node class's AMIs can boot, when every selector term names one (None: unknown, or both)."""
    if cls.alias is not None:
        return None  # EKS-optimized aliases resolve to an AMI per architecture
    arches: set[str] = set()
    for term in cls.ami_selector_terms:
        found = _ami_arch(term)
        if found is None:
            return None
        arches |= found
    return arches


def validate_node_class_environment(classes: Sequence[NodeClassConfig], region: str | None,
                                    accounts: tuple[str, ...], at_classes: Path) -> list[Issue]:
    """Rules relating node classes to the stack's region and accounts: KMS keys of their volumes."""
    issues: list[Issue] = []
    for i, cls in enumerate(classes):
        for j, m in enumerate(cls.block_device_mappings or []):
            key = m.ebs.kms_key_id if m.ebs else None
            if key is None or region is None:
                continue
            path = at_classes + (i, "blockDeviceMappings", j, "ebs", "kmsKeyID")
            if key.startswith("arn:"):
                issues += arn_issues(key, path, service="kms", region=region, accounts=accounts, what="KMS key")
            elif not re.fullmatch(r"(mrk-)?[0-9a-f-]{32,36}|alias/[\w/_-]+", key):
                issues.append(Issue(path, "a KMS key ARN, key id or alias/<name>", key))
    return issues


def _taint_issues(pool: NodePoolConfig, at: Path) -> list[Issue]:
    issues: list[Issue] = []
    for field, taints in (("taints", pool.taints), ("startupTaints", pool.startup_taints)):
        seen: set[tuple[str, str]] = set()
        for k, t in enumerate(taints):
            if (t.key, t.effect) in seen:  # the Node API refuses two taints with one key and effect
                issues.append(Issue(at + (field, k), "duplicate taint: same key and effect as an earlier one",
                                    t.dump()))
            seen.add((t.key, t.effect))
    return issues


def _family_parts(family: str) -> tuple[str, int] | None:
    match = re.match(r"^([a-z]+)(\d+)", family)
    return (match.group(1), int(match.group(2))) if match else None


def _instance_issues(pool: NodePoolConfig, at: Path) -> list[Issue]:
    """Shortcuts that contradict each other leave no instance type to launch (pools that never scale up)."""
    issues: list[Issue] = []
    if pool.min_cpu is not None and pool.max_cpu is not None and pool.min_cpu > pool.max_cpu:
        issues.append(Issue(at + ("minCpu",), f"must not exceed maxCpu ({pool.max_cpu})", pool.min_cpu))
    sizes = set(expand_sizes(pool.instance_sizes or ()))
    excluded = set(expand_sizes(pool.exclude_instance_sizes or ()))
    for k, size in enumerate(pool.exclude_instance_sizes or ()):
        if size in (pool.instance_sizes or ()):
            issues.append(Issue(at + ("excludeInstanceSizes", k), "also listed in instanceSizes", size))

    rendered = {r.source: r for r in pool_requirements(pool) if isinstance(r.source, str)}
    categories = set(rendered["instanceCategories"].values) if "instanceCategories" in rendered else None
    min_gen = int(rendered["minGeneration"].values[0]) + 1 if "minGeneration" in rendered else None

    def family_problem(family: str) -> str | None:
        parts = _family_parts(family)
        if parts is None:
            return None
        if categories is not None and parts[0] not in categories:
            return f"family {family} is outside instanceCategories {sorted(categories)}"
        if min_gen is not None and parts[1] < min_gen:
            return f"family {family} is older than minGeneration {min_gen}"
        return None

    for k, family in enumerate(pool.instance_families or ()):
        problem = family_problem(family)
        if problem:
            issues.append(Issue(at + ("instanceFamilies", k), f"{problem}: no instance would match", family))
    families = set(pool.instance_families or ())
    for k, itype in enumerate(pool.instance_types or ()):
        family, _, size = itype.partition(".")
        problem = family_problem(family)
        if families and family not in families:
            problem = f"family {family} is not in instanceFamilies"
        elif sizes and size not in sizes:
            problem = f"size {size} is not in instanceSizes"
        elif size in excluded:
            problem = f"size {size} is in excludeInstanceSizes"
        if problem:
            issues.append(Issue(at + ("instanceTypes", k), f"{problem}: this type can never launch", itype))
    return issues


def _label_issues(pool: NodePoolConfig, at: Path) -> list[Issue]:
    issues: list[Issue] = []
    reqs = pool_requirements(pool)
    for r in reqs:
        if r.key not in pool.labels:
            continue
        value = pool.labels[r.key]
        if r.operator == "Exists" or (r.operator == "In" and value in r.values):
            continue
        # A node carries the label, so a requirement excluding its value matches no node at all.
        message = (f"conflicts with label {r.key}={value}: when both are set the requirement must be In (including "
                   f"{value!r}) or Exists")
        if isinstance(r.source, int):
            field = "values" if r.operator == "In" else "operator"
            issues.append(Issue(_req_path(at, r, field), message, list(r.values) if field == "values" else r.operator))
        else:
            issues.append(Issue(at + ("labels", r.key), f"conflicts with `{r.source}` ({list(r.values)})", value))
    if len(reqs) + len(pool.labels) > 100:
        issues.append(Issue(at + ("labels",), f"requirements ({len(reqs)}) and labels ({len(pool.labels)}) may "
                            "not exceed 100 together", len(pool.labels)))
    return issues


def _first(reqs: list[Req], key: str) -> Req | None:
    return next((r for r in reqs if r.key == key), None)


def _pool_context_issues(pool: NodePoolConfig, classes: dict[str, NodeClassConfig], zones: list[str],
                         interruption_handled: bool, at: Path) -> list[Issue]:
    issues: list[Issue] = []
    reqs = pool_requirements(pool)
    cls = classes.get(pool.node_class)
    if cls is None:
        known = ", ".join(sorted(classes)) or "none"
        issues.append(Issue(at + ("nodeClass",), f"no eks-karpenter:nodeClasses entry has this name (defined: "
                            f"{known})", pool.node_class))

    for r in reqs:
        if r.key != ZONE or r.operator not in ("In", "NotIn"):
            continue
        for k, zone in enumerate(r.values):
            if zone not in zones:
                path = _req_path(at, r, "values", k) if isinstance(r.source, int) else at + (r.source, k)
                issues.append(Issue(path, f"zone is not one of the network's zones ({', '.join(zones)})", zone))

    capacity = allowed_values(reqs, CAPACITY_TYPE, _KNOWN_VALUES[CAPACITY_TYPE])
    cap_req = _first(reqs, CAPACITY_TYPE)
    cap_path = _req_path(at, cap_req, "values") if cap_req else at + ("capacityTypes",)
    if "spot" in capacity and not interruption_handled and not pool.spot_without_interruption_handling:
        issues.append(Issue(cap_path, "spot capacity needs interruption handling: enable eks-karpenter:interruption "
                            "(Karpenter then drains nodes on the two-minute spot notice), remove spot, or opt out "
                            "explicitly with spotWithoutInterruptionHandling: true", capacity))
    if cls is None:
        return issues
    if "reserved" in capacity and not cls.capacity_reservation_selector_terms:
        issues.append(Issue(cap_path, f"reserved capacity needs capacityReservationSelectorTerms on node class "
                            f"{cls.name!r}", capacity))
    family = cls.family
    if family and family != "Custom":
        want = "windows" if family.startswith("Windows") else "linux"
        os_values = allowed_values(reqs, OS, _KNOWN_VALUES[OS])
        os_req = _first(reqs, OS)
        if os_values != [want]:
            issues.append(Issue(_req_path(at, os_req, "values") if os_req else at + ("os",), f"node class "
                                f"{cls.name!r} runs {family} AMIs, so os must be [{want}]", os_values))
        arch_req = _first(reqs, ARCH)
        if want == "windows" and "arm64" in allowed_values(reqs, ARCH, _KNOWN_VALUES[ARCH]):
            issues.append(Issue(_req_path(at, arch_req, "values") if arch_req else at + ("arch",), "Windows AMIs "
                                "are amd64 only", list(arch_req.values) if arch_req else None))
    ami_arches = class_architectures(cls)
    if ami_arches is not None:
        arches = allowed_values(reqs, ARCH, _KNOWN_VALUES[ARCH])
        arch_req = _first(reqs, ARCH)
        missing = [a for a in arches if a not in ami_arches]
        if missing:
            issues.append(Issue(_req_path(at, arch_req, "values") if arch_req else at + ("arch",), f"node class "
                                f"{cls.name!r} selects only {'/'.join(sorted(ami_arches))} AMIs (amiSelectorTerms), so "
                                f"{', '.join(missing)} nodes could not boot", arches))
    return issues


# --- warnings --------------------------------------------------------------------------------------------------

def warnings_for(pools: Sequence[NodePoolConfig], classes: Sequence[NodeClassConfig], protected: bool) -> list[str]:
    """Legal but risky settings, one line each (printed, never fatal)."""
    out: list[str] = []
    for cls in classes:
        where = f"nodeClasses[{cls.name}]"
        alias = cls.alias
        if alias and alias.endswith("@latest"):
            if protected:
                out.append(f"{where}: alias {alias} on a protected stack: every new AMI release drifts and replaces "
                           "every node of the pools using this class; pin a version (e.g. al2023@v20240625)")
            else:
                out.append(f"{where}: alias {alias} rolls every node on each AMI release; pin a version before "
                           "production")
        meta = cls.metadata_options
        if meta.http_tokens == "optional":
            out.append(f"{where}: metadataOptions.httpTokens optional enables IMDSv1 (unauthenticated credential "
                       "reads)")
        if meta.http_put_response_hop_limit > 2:
            out.append(f"{where}: httpPutResponseHopLimit {meta.http_put_response_hop_limit}: 2 is enough for pods; "
                       "higher only widens who can reach the node role's credentials")
        if meta.http_endpoint == "disabled":
            out.append(f"{where}: IMDS disabled: EKS nodes read their bootstrap data from it and may never join")
        if cls.associate_public_ip_address:
            out.append(f"{where}: associatePublicIPAddress puts nodes on the internet; prefer private subnets")
    for pool in pools:
        where = f"nodePools[{pool.name}]"
        if not pool.limits:
            out.append(f"{where}: no limits: nothing caps how much capacity (and spend) the pool can add")
        spot = "spot" in allowed_values(pool_requirements(pool), CAPACITY_TYPE, _KNOWN_VALUES[CAPACITY_TYPE])
        if pool.spot_without_interruption_handling and spot:
            out.append(f"{where}: spot without interruption handling: reclaimed nodes vanish with their pods")
    out += admission_warnings(pools, classes)
    return out
