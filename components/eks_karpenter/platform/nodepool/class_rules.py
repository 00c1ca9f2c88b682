"""Rules on node classes alone: AMI selection, selector terms, disks, kubelet settings, network, user data, and
the KMS keys of their volumes. Single-value checks live on the types (class_config.py); rules relating pools to
their classes live in rules.py, which runs these too.
"""

from __future__ import annotations

import email
import re
import tomllib
from collections.abc import Sequence

import yaml

from eks_karpenter.arns import arn_issues
from eks_karpenter.config.errors import Issue, KeyPath
from eks_karpenter.platform.nodepool.config import (
    ALIAS_FAMILIES,
    AmiSelectorTerm,
    CapacityReservationSelectorTerm,
    NodeClassConfig,
    SecurityGroupSelectorTerm,
    SubnetSelectorTerm,
)
from eks_karpenter.quantities import bytes_issue, unitless_bytes


def class_issues(cls: NodeClassConfig, at: KeyPath) -> list[Issue]:
    """Every rule on one node class, at its key path `at`."""
    issues: list[Issue] = []
    if cls.role and cls.instance_profile:
        issues.append(Issue(at + ("instanceProfile",), "must specify exactly one of role and instanceProfile (leave "
                            "both out to use the platform's node role)", cls.instance_profile))
    issues += _ami_issues(cls, at)
    issues += _selector_issues(cls, at)
    issues += _block_device_issues(cls, at)
    issues += _volume_size_issues(cls, at)
    issues += _kubelet_issues(cls, at)
    issues += _network_issues(cls, at)
    if cls.user_data is not None:
        problem = user_data_problem(cls.family, cls.user_data)
        if problem:
            issues.append(Issue(at + ("userData",), problem, cls.user_data))
    return issues


def _ami_issues(cls: NodeClassConfig, at: KeyPath) -> list[Issue]:
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


def _selector_issues(cls: NodeClassConfig, at: KeyPath) -> list[Issue]:
    # Upstream's CEL rejects a combined id only when every term combines it (mixed lists stay valid: the fields of
    # a term are ANDed). Mirror that exactly.
    return [*_subnet_selector_issues(cls.subnet_selector_terms or [], at + ("subnetSelectorTerms",)),
            *_security_group_selector_issues(cls.security_group_selector_terms or [],
                                             at + ("securityGroupSelectorTerms",)),
            *_reservation_selector_issues(cls.capacity_reservation_selector_terms or [],
                                          at + ("capacityReservationSelectorTerms",))]


def _subnet_selector_issues(subnets: list[SubnetSelectorTerm], at: KeyPath) -> list[Issue]:
    issues = [Issue(at + (j,), "expected at least one of tags, id", s.dump())
              for j, s in enumerate(subnets) if s.id is None and s.tags is None]
    if subnets and all(s.id is not None and s.tags is not None for s in subnets):
        issues += [Issue(at + (j, "id"), "'id' is mutually exclusive, cannot be set with a combination of other "
                         "fields in a subnet selector term", s.id) for j, s in enumerate(subnets)]
    return issues


def _security_group_selector_issues(groups: list[SecurityGroupSelectorTerm], at: KeyPath) -> list[Issue]:
    issues = [Issue(at + (j,), "expected at least one of tags, id, name", g.dump())
              for j, g in enumerate(groups) if g.id is None and g.name is None and g.tags is None]
    id_combined = [g.id is not None and (g.tags is not None or g.name is not None) for g in groups]
    name_combined = [g.name is not None and (g.tags is not None or g.id is not None) for g in groups]
    for field, combined in (("id", id_combined), ("name", name_combined)):
        if groups and all(combined):
            issues += [Issue(at + (j, field), f"'{field}' is mutually exclusive, cannot be set with a combination "
                             "of other fields in a security group selector term", getattr(g, field))
                       for j, g in enumerate(groups)]
    return issues


def _reservation_selector_issues(reservations: list[CapacityReservationSelectorTerm], at: KeyPath) -> list[Issue]:
    issues = [Issue(at + (j,), "expected at least one of tags, id, instanceMatchCriteria", r.dump())
              for j, r in enumerate(reservations)
              if r.id is None and r.tags is None and r.instance_match_criteria is None]
    if reservations and all(r.id is not None and (r.tags is not None or r.owner_id is not None
                                                  or r.instance_match_criteria is not None) for r in reservations):
        issues += [Issue(at + (j, "id"), "'id' is mutually exclusive, cannot be set along with other fields in a "
                         "capacity reservation selector term", r.id) for j, r in enumerate(reservations)]
    return issues


VOLUME_MAX_GIB: dict[str | None, int] = {
    "gp3": 16384, "gp2": 16384, "io1": 16384, "io2": 65536, "st1": 16384, "sc1": 16384, "standard": 1024,
    None: 16384}
"""Largest EBS volume of each type, GiB (EC2 User Guide, "Amazon EBS volume types": gp2, gp3, io1, st1 and sc1
16 TiB, io2 Block Express 64 TiB, magnetic 1 TiB); no type given: EC2's default, gp2 or gp3."""

AMI_SNAPSHOT_GIB: dict[str, dict[str, int]] = {
    "AL2": {"/dev/xvda": 20}, "AL2023": {"/dev/xvda": 20},
    "Bottlerocket": {"/dev/xvda": 2, "/dev/xvdb": 20},
    "Windows2019": {"/dev/sda1": 50}, "Windows2022": {"/dev/sda1": 50}, "Windows2025": {"/dev/sda1": 50},
}
"""Size (GiB) of the snapshots behind each device of the EKS-optimized AMIs an alias selects: a volume mapped on
one of these devices may not be smaller (EC2 refuses the launch). AL2 and AL2023: one 20 GiB root volume
(awslabs/amazon-eks-ami, `launch_block_device_mappings_volume_size` in templates/*/variables-default.json).
Bottlerocket: a 2 GiB root (OS) volume and a 20 GiB data volume (bottlerocket-os/bottlerocket README, "Default
Volumes"; EKS CreateNodegroup `diskSize`: 20 GiB for Linux and Bottlerocket). Windows: a 50 GiB root volume
(EKS CreateNodegroup `diskSize`: 50 GiB for Windows)."""

_GIB = {"Gi": 1.0, "G": 10**9 / 2**30, "Ti": 1024.0, "T": 10**12 / 2**30}


def volume_gib(size: str) -> float:
    """A validated `volumeSize` (`50Gi`, `100G`, `1Ti`, `2T`) in GiB."""
    match = re.fullmatch(r"([0-9]+)(Gi|G|Ti|T)", size)
    if match is None:
        raise ValueError(f"not a volume size: {size!r}")
    return int(match.group(1)) * _GIB[match.group(2)]


def _volume_size_issues(cls: NodeClassConfig, at: KeyPath) -> list[Issue]:
    """Volumes above their type's largest size, and volumes on an EKS-optimized AMI's device smaller than the
    snapshot behind it."""
    issues: list[Issue] = []
    family = cls.family if cls.alias else None  # only an alias says which AMI (and so which snapshots) it is
    snapshots = AMI_SNAPSHOT_GIB.get(family or "", {})
    for j, m in enumerate(cls.block_device_mappings or []):
        ebs = m.ebs
        if ebs is None or ebs.volume_size is None:
            continue
        path = at + ("blockDeviceMappings", j, "ebs", "volumeSize")
        gib = volume_gib(ebs.volume_size)
        most = VOLUME_MAX_GIB[ebs.volume_type]
        if gib > most:
            kind = ebs.volume_type or "gp2/gp3 (no volumeType given)"
            issues.append(Issue(path, f"above the largest {kind} volume, {most // 1024} TiB ({most}Gi): EC2 refuses "
                                "the launch", ebs.volume_size))
        least = snapshots.get(m.device_name)
        if least is not None and ebs.snapshot_id is None and gib < least:
            issues.append(Issue(path, f"smaller than the {least} GiB snapshot the {family} AMI has on "
                                f"{m.device_name}: EC2 refuses the launch; give at least {least}Gi", ebs.volume_size))
    return issues


def _block_device_issues(cls: NodeClassConfig, at: KeyPath) -> list[Issue]:
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


def _kubelet_issues(cls: NodeClassConfig, at: KeyPath) -> list[Issue]:
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


def _network_issues(cls: NodeClassConfig, at: KeyPath) -> list[Issue]:
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
                                    accounts: tuple[str, ...], at_classes: KeyPath) -> list[Issue]:
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
            elif not re.fullmatch(r"(mrk-)?[0-9a-f-]{32,36}|alias/[A-Za-z0-9_/_-]+", key):
                issues.append(Issue(path, "a KMS key ARN, key id or alias/<name>", key))
    return issues
