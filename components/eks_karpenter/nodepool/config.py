"""Node config types and defaults: Karpenter EC2NodeClasses and NodePools (API `v1`, Karpenter 1.14).

Keys are spelled as upstream spells them, so a block copied from Karpenter's docs pastes in. Constraints that
concern one value (patterns, enums, ranges, restricted keys) live on the types here; rules that relate two fields
or two objects live in rules.py.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field, StringConstraints

from eks_karpenter import versions
from eks_karpenter._model import Model

# --- well-known label keys -------------------------------------------------------------------------------------

CAPACITY_TYPE = "karpenter.sh/capacity-type"
NODEPOOL_LABEL = "karpenter.sh/nodepool"
ARCH, OS = "kubernetes.io/arch", "kubernetes.io/os"
ZONE, ZONE_ID, REGION = "topology.kubernetes.io/zone", "topology.k8s.aws/zone-id", "topology.kubernetes.io/region"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
AWS_DOMAIN = "karpenter.k8s.aws"
CATEGORY, GENERATION = f"{AWS_DOMAIN}/instance-category", f"{AWS_DOMAIN}/instance-generation"
FAMILY, SIZE, CPU = f"{AWS_DOMAIN}/instance-family", f"{AWS_DOMAIN}/instance-size", f"{AWS_DOMAIN}/instance-cpu"

# The `karpenter.k8s.aws/*` keys Karpenter 1.14's CRDs accept in requirements and template labels.
AWS_LABEL_KEYS = frozenset(f"{AWS_DOMAIN}/{name}" for name in (
    "instance-tenancy", "capacity-reservation-type", "capacity-reservation-id", "capacity-reservation-interruptible",
    "ec2nodeclass", "instance-encryption-in-transit-supported", "instance-category", "instance-hypervisor",
    "instance-family", "instance-generation", "instance-local-nvme", "instance-size", "instance-cpu",
    "instance-cpu-manufacturer", "instance-cpu-sustained-clock-speed-mhz", "instance-memory", "instance-ebs-bandwidth",
    "instance-network-bandwidth", "instance-gpu-name", "instance-gpu-manufacturer", "instance-gpu-count",
    "instance-gpu-memory", "instance-accelerator-name", "instance-accelerator-manufacturer",
    "instance-accelerator-count", "instance-capability-flex", "placement-group-id", "placement-group-partition"))

WELL_KNOWN_KEYS = AWS_LABEL_KEYS | {CAPACITY_TYPE, NODEPOOL_LABEL, ARCH, OS, ZONE, ZONE_ID, REGION, INSTANCE_TYPE,
                                   "node.kubernetes.io/windows-build"}
"""Keys Karpenter knows values for. Any other key is a custom label."""

# Kubelets may not label themselves in these domains (NodeRestriction), so Karpenter refuses them on NodePools,
# except for the well-known keys and the sub-domains below.
_KUBELET_DOMAINS = ("kubernetes.io", "k8s.io")
_KUBELET_DOMAIN_EXCEPTIONS = ("kops.k8s.io", "node.kubernetes.io", "node-restriction.kubernetes.io")

# --- scalar types ----------------------------------------------------------------------------------------------

_DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN = re.compile(rf"^{_DNS_LABEL}(\.{_DNS_LABEL})*$")
_NAME_PART = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")

ResourceName = Annotated[str, StringConstraints(pattern=rf"^{_DNS_LABEL}$", max_length=63)]
"""A DNS-1123 label: the object name, and the value of the `karpenter.sh/nodepool` node label."""
LabelValue = Annotated[str, StringConstraints(max_length=63, pattern=r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")]
Duration = Annotated[str, StringConstraints(pattern=r"^((\d+[smh])+|Never)$")]
"""`720h`, `1h30m`, `90s`, or `Never`."""
GraceDuration = Annotated[str, StringConstraints(pattern=r"^(\d+[smh])+$")]
BudgetDuration = Annotated[str, StringConstraints(pattern=r"^(\d+h\d+m|\d+[hm])(0s)?$")]
"""Hours and minutes only (`8h`, `90m`, `1h30m`): budgets are cron-driven, and cron has no seconds."""
AvailabilityZone = Annotated[str, StringConstraints(pattern=r"^[a-z]{2}(-[a-z]+)+-\d[a-z]$")]
NonEmpty = Annotated[str, StringConstraints(min_length=1)]
_QUANTITY = r"(\d+(\.\d+)?|\.\d+)([KMGTPE]i|[numkMGTPE]|[eE]\d+)?"


def _int_as_str(value: Any) -> Any:
    # YAML turns `nodes: 0` or `cpu: 1000` into numbers; the API wants strings, and users should not have to quote.
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


Quantity = Annotated[str, BeforeValidator(_int_as_str), StringConstraints(pattern=rf"^{_QUANTITY}$")]
"""A non-negative Kubernetes quantity: `1000`, `500m`, `1000Gi`."""
BudgetNodes = Annotated[str, BeforeValidator(_int_as_str), StringConstraints(pattern=r"^((100|\d{1,2})%|\d+)$")]
"""A node count (`"0"`, `"5"`) or a percentage of the pool (`"10%"`)."""


def _qualified_name(value: str) -> str:
    prefix, _, name = value.rpartition("/")
    if "/" in prefix or (prefix and (len(prefix) > 253 or not _SUBDOMAIN.match(prefix))):
        raise ValueError("prefix must be a lowercase DNS subdomain, like example.com/")
    if len(name) > 63 or not _NAME_PART.match(name):
        raise ValueError("name must be 1-63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric")
    return value


def _domain(key: str) -> str:
    return key.split("/", 1)[0]


def _karpenter_key(key: str) -> str:
    """The restrictions Karpenter's CRDs put on requirement keys and template label keys."""
    domain = _domain(key)
    if key == NODEPOOL_LABEL:
        raise ValueError(f'label "{NODEPOOL_LABEL}" is restricted: Karpenter sets it to the pool name')
    if key == "kubernetes.io/hostname":
        raise ValueError('label "kubernetes.io/hostname" is restricted: every node gets its own')
    if domain.endswith("karpenter.sh") and key != CAPACITY_TYPE:
        raise ValueError('label domain "karpenter.sh" is restricted (only karpenter.sh/capacity-type is allowed)')
    if domain.endswith(AWS_DOMAIN) and key not in AWS_LABEL_KEYS:
        raise ValueError(f'label domain "{AWS_DOMAIN}" is restricted to Karpenter\'s well-known instance labels')
    in_kubelet_domain = any(domain == d or domain.endswith("." + d) for d in _KUBELET_DOMAINS)
    excepted = any(domain == d or domain.endswith("." + d) for d in _KUBELET_DOMAIN_EXCEPTIONS)
    if in_kubelet_domain and not excepted and key not in WELL_KNOWN_KEYS:
        raise ValueError("kubelets may not set labels in the kubernetes.io and k8s.io domains; use your own "
                         "domain (node.kubernetes.io/ is allowed)")
    return key


QualifiedName = Annotated[str, StringConstraints(max_length=316), AfterValidator(_qualified_name)]
LabelKey = Annotated[QualifiedName, AfterValidator(_karpenter_key)]
"""A node label key Karpenter accepts on a NodePool (requirements and template labels)."""


def _label_value_like(value: str) -> str:
    if not _NAME_PART.match(value) or len(value) > 63:
        raise ValueError("taint values are 1-63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric")
    return value


TaintValue = Annotated[str, AfterValidator(_label_value_like)]

# --- NodePool ----------------------------------------------------------------------------------------------------

Operator = Literal["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte", "Lte"]
CapacityType = Literal["spot", "on-demand", "reserved"]
Category = Annotated[str, StringConstraints(pattern=r"^[a-z]+$", max_length=63)]
InstanceFamily = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9-]*$", max_length=63)]
InstanceSize = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]*$", max_length=63)]
InstanceType = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9-]*\.[a-z0-9][a-z0-9-]*$", max_length=63)]


def _unique(values: list[Any]) -> list[Any]:
    if len(set(values)) != len(values):
        raise ValueError("values must be unique")
    return values


class Requirement(Model):
    """One node selector requirement, as in `spec.template.spec.requirements` (raw Karpenter API)."""

    key: LabelKey
    """Label key, e.g. `karpenter.k8s.aws/instance-family` or your own `example.com/team`."""
    operator: Operator
    """`In`, `NotIn`, `Exists`, `DoesNotExist`, or the numeric `Gt`, `Lt`, `Gte`, `Lte`."""
    values: list[LabelValue] | None = Field(None, max_length=100)
    """Values; numeric operators take exactly one non-negative integer."""
    min_values: int | None = Field(None, ge=1, le=50)
    """Alpha: launch only if at least this many distinct values stay available (spot diversity)."""


class Taint(Model):
    """A node taint. Pods need a matching toleration to run on the node."""

    key: Annotated[str, StringConstraints(min_length=1, max_length=316), AfterValidator(_qualified_name)]
    """Taint key, e.g. `dedicated` or `example.com/gpu`."""
    value: TaintValue | None = None
    """Optional taint value."""
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]
    """What happens to pods that do not tolerate the taint."""


_CRON_MACROS = ("@annually", "@yearly", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
# (lowest, highest, names) per field: minute, hour, day of month, month, day of week.
_CRON_FIELDS: tuple[tuple[int, int, tuple[str, ...]], ...] = (
    (0, 59, ()), (0, 23, ()), (1, 31, ()), (1, 12, _MONTHS), (0, 6, _DAYS))


def _cron_number(text: str, low: int, high: int, names: tuple[str, ...]) -> bool:
    if text.lower() in names:
        return True
    return text.isdigit() and low <= int(text) <= high


def _cron(value: str) -> str:
    if value in _CRON_MACROS:
        return value
    fields = value.split(" ")
    if len(fields) != 5 or any(not f for f in fields):
        raise ValueError("schedule must be a 5-field cron expression (minute hour day month weekday, UTC) or a "
                         f"macro ({', '.join(_CRON_MACROS)})")
    for text, (low, high, names) in zip(fields, _CRON_FIELDS, strict=True):
        for item in text.split(","):
            span, _, step = item.partition("/")
            ends = span.split("-")
            ok = (not step or (step.isdigit() and int(step) > 0)) and (
                span in ("*", "?") or (len(ends) <= 2 and all(_cron_number(e, low, high, names) for e in ends)))
            if not ok:
                raise ValueError(f"cron field {text!r} is not valid here (allowed: {low}-{high}, *, ranges, lists, "
                                 "steps)")
    return value


CronSchedule = Annotated[str, AfterValidator(_cron)]


class Budget(Model):
    """A disruption budget: how many of the pool's nodes Karpenter may disrupt at once (optionally only during a
    cron window)."""

    nodes: BudgetNodes = "10%"
    """Node count or percentage, e.g. `"10%"`, `"0"` (a number is accepted and written as a string)."""
    schedule: CronSchedule | None = None
    """Cron start of the window (UTC, no time zones), e.g. `"0 9 * * mon-fri"`. Needs `duration`."""
    duration: BudgetDuration | None = None
    """Window length, e.g. `8h`. Needs `schedule`."""
    reasons: Annotated[list[Literal["Underutilized", "Empty", "Drifted"]], AfterValidator(_unique)] | None = Field(
        None, min_length=1, max_length=50)
    """Limit the budget to these disruption reasons; absent means all reasons."""


class Disruption(Model):
    """When Karpenter may remove or replace the pool's nodes.

    The default budget lets 10% of the nodes go at once. To freeze consolidation during business hours, add for
    example `{nodes: "0", schedule: "0 8 * * mon-fri", duration: "10h", reasons: [Underutilized]}`.
    """

    consolidation_policy: Literal["WhenEmpty", "WhenEmptyOrUnderutilized", "Balanced"] = "WhenEmptyOrUnderutilized"
    """`WhenEmptyOrUnderutilized` (default) repacks pods onto cheaper nodes; `WhenEmpty` only removes empty nodes;
    `Balanced` (1.14) weighs savings against disruption."""
    consolidate_after: Duration = "1m"
    """How long a node must be empty or underutilized before consolidation acts (`Never` disables it)."""
    budgets: list[Budget] = Field(default_factory=lambda: [Budget(nodes="10%")], max_length=50)
    """Disruption budgets; the most restrictive active one wins."""


def _default_limits() -> dict[str, str]:
    return {"cpu": "1000", "memory": "1000Gi"}


def _spot_first() -> list[CapacityType]:
    return ["spot", "on-demand"]


def _amd64() -> list[Literal["amd64", "arm64"]]:
    return ["amd64"]


def _linux() -> list[Literal["linux", "windows"]]:
    return ["linux"]


class NodePoolConfig(Model):
    """One Karpenter NodePool. The shortcuts (`capacityTypes` ... `maxCpu`) become requirements; `requirements`
    adds raw ones after them, and a raw requirement on a shortcut's key replaces that shortcut."""

    name: ResourceName
    """NodePool name (also the value of the `karpenter.sh/nodepool` node label)."""
    node_class: ResourceName = "default"
    """Name of the `eks-karpenter:nodeClasses` entry these nodes use."""
    capacity_types: Annotated[list[CapacityType], AfterValidator(_unique)] = Field(
        default_factory=_spot_first, min_length=1)
    """Spot first: Karpenter picks spot when it is available and falls back to on-demand. Spot needs interruption
    handling (`eks-karpenter:interruption`). `reserved` uses the node class's capacity reservations."""
    arch: Annotated[list[Literal["amd64", "arm64"]], AfterValidator(_unique)] = Field(
        default_factory=_amd64, min_length=1)
    """CPU architectures; add `arm64` (Graviton, usually cheaper) when your images are multi-arch."""
    os: Annotated[list[Literal["linux", "windows"]], AfterValidator(_unique)] = Field(
        default_factory=_linux, min_length=1)
    """Operating systems; must match the node class's AMI family."""
    instance_categories: Annotated[list[Category], AfterValidator(_unique)] | None = Field(
        default_factory=lambda: ["c", "m", "r"], min_length=1)
    """Instance categories (c = compute, m = general, r = memory, ...), matched exactly as Karpenter labels them:
    `i` does not include `im4gn` (category `im`) or `is4gen` (`is`), and `m` does not include `mac`. The default
    is left out when `instanceFamilies` or `instanceTypes` pin the choice; `null` removes it."""
    min_generation: int | None = Field(3, ge=1, le=99)
    """Oldest instance generation allowed (3 = no m1/m2/c1...), the digit in the family name: `x2iedn` is
    generation 2, so `minGeneration: 6` leaves it out. Left out by default when `instanceFamilies` or
    `instanceTypes` pin the choice; `null` removes it."""
    instance_families: Annotated[list[InstanceFamily], AfterValidator(_unique)] | None = Field(None, min_length=1)
    """Only these families, e.g. `[m7i, m6i, c7g]`."""
    instance_sizes: Annotated[list[InstanceSize], AfterValidator(_unique)] | None = Field(None, min_length=1)
    """Only these sizes, e.g. `[large, xlarge, 2xlarge]`. `metal` means every bare-metal size (`metal`,
    `metal-24xl`, `metal-48xl`, ...: the ones the shipped instance-type catalogue knows)."""
    exclude_instance_sizes: Annotated[list[InstanceSize], AfterValidator(_unique)] | None = Field(None, min_length=1)
    """Never these sizes, e.g. `[metal, nano, micro]`. `metal` means every bare-metal size (`metal`,
    `metal-24xl`, `metal-48xl`, ...: the ones the shipped instance-type catalogue knows)."""
    instance_types: Annotated[list[InstanceType], AfterValidator(_unique)] | None = Field(None, min_length=1)
    """Only these instance types. Prefer families and sizes: a short list limits spot capacity."""
    zones: Annotated[list[AvailabilityZone], AfterValidator(_unique)] | None = Field(None, min_length=1)
    """Only these availability zones (default: every zone of the network)."""
    min_cpu: int | None = Field(None, ge=1)
    """Smallest vCPU count per node."""
    max_cpu: int | None = Field(None, ge=1)
    """Largest vCPU count per node."""
    requirements: list[Requirement] = Field(default_factory=list, max_length=100)
    """Raw requirements, appended after the shortcuts. Custom label keys that pods select on must appear here
    (e.g. `Exists`) or in `labels`."""
    labels: dict[LabelKey, LabelValue] = Field(default_factory=dict, max_length=100)
    """Labels on every node of the pool (custom keys welcome; pods can select on them)."""
    annotations: dict[QualifiedName, str] = Field(default_factory=dict)
    """Annotations on every node of the pool."""
    taints: list[Taint] = Field(default_factory=list)
    """Taints on every node; only pods that tolerate them land here (see `workload.scheduling_for`)."""
    startup_taints: list[Taint] = Field(default_factory=list)
    """Taints present at boot that something else (a DaemonSet) removes; pods need not tolerate them."""
    expire_after: Duration = "336h"
    """Replace nodes after this age (14 days: fresh AMIs and patched kernels). `Never` disables it."""
    termination_grace_period: GraceDuration | None = "48h"
    """Upper bound on draining a node; after it, remaining pods are removed even if a PodDisruptionBudget or
    `karpenter.sh/do-not-disrupt` blocks them. `null` waits forever."""
    disruption: Disruption = Field(default_factory=Disruption)
    """Consolidation and disruption budgets."""
    limits: dict[QualifiedName, Quantity] = Field(default_factory=_default_limits)
    """Ceiling on the pool's total capacity: the brake on runaway spend. `{}` removes it."""
    weight: int | None = Field(None, ge=1, le=100)
    """Priority among pools that fit a pod (higher first)."""
    spot_without_interruption_handling: bool = False
    """Explicit opt-out: allow spot although `eks-karpenter:interruption` is off, accepting that pods are killed
    without the two-minute notice being acted on."""


# --- EC2NodeClass ----------------------------------------------------------------------------------------------

AmiFamily = Literal["AL2", "AL2023", "Bottlerocket", "Custom", "Windows2019", "Windows2022", "Windows2025"]
ALIAS_FAMILIES: dict[str, AmiFamily] = {
    "al2": "AL2", "al2023": "AL2023", "bottlerocket": "Bottlerocket",
    "windows2019": "Windows2019", "windows2022": "Windows2022", "windows2025": "Windows2025"}
"""Alias family prefix -> the amiFamily it implies."""
_ALIAS_VERSION = {"al2": r"v\d{8}", "al2023": r"v\d{8}", "bottlerocket": r"v\d+\.\d+\.\d+"}


def _alias(value: str) -> str:
    if not re.match(r"^[a-zA-Z0-9]+@.+$", value):
        raise ValueError("'alias' is improperly formatted, must match the format 'family@version'")
    family, _, version = value.partition("@")
    if family not in ALIAS_FAMILIES:
        raise ValueError(f"family is not supported, must be one of: {', '.join(ALIAS_FAMILIES)}")
    if family.startswith("windows") and version != "latest":
        raise ValueError("windows families may only specify version 'latest'")
    pattern = _ALIAS_VERSION.get(family)
    if pattern and version != "latest" and not re.fullmatch(pattern, version.split("@")[0]):
        example = "v20240625" if family.startswith("al2") else "v1.26.0"
        raise ValueError(f"version must be 'latest' or a release like {example}")
    return value


SelectorTags = Annotated[dict[NonEmpty, NonEmpty], Field(min_length=1, max_length=20)]
"""Tags to match (1 to 20); `*` as a value matches any value. Keys and values may not be empty."""


class AmiSelectorTerm(Model):
    """One AMI selector term (terms are ORed, fields within a term ANDed)."""

    alias: Annotated[str, StringConstraints(max_length=30), AfterValidator(_alias)] | None = None
    """EKS-optimized AMI as `family@version`, e.g. `al2023@v20240625`. Must be the only term and field."""
    id: Annotated[str, StringConstraints(pattern=r"^ami-[0-9a-z]+$")] | None = None
    """AMI id; cannot be combined with other fields."""
    name: NonEmpty | None = None
    """AMI name (wildcards allowed)."""
    owner: NonEmpty | None = None
    """Owner account id, `self`, `amazon` or `aws-marketplace`."""
    ssm_parameter: NonEmpty | None = None
    """SSM parameter name or ARN holding an AMI id."""
    tags: SelectorTags | None = None
    """AMI tags."""


class SubnetSelectorTerm(Model):
    """One subnet selector term."""

    id: Annotated[str, StringConstraints(pattern=r"^subnet-[0-9a-z]+$")] | None = None
    """Subnet id."""
    tags: SelectorTags | None = None
    """Subnet tags."""


class SecurityGroupSelectorTerm(Model):
    """One security group selector term."""

    id: Annotated[str, StringConstraints(pattern=r"^sg-[0-9a-z]+$")] | None = None
    """Security group id."""
    name: NonEmpty | None = None
    """Security group name (not its Name tag)."""
    tags: SelectorTags | None = None
    """Security group tags."""


class CapacityReservationSelectorTerm(Model):
    """One capacity reservation (ODCR or capacity block) selector term, for `reserved` capacity."""

    id: Annotated[str, StringConstraints(pattern=r"^cr-[0-9a-z]+$")] | None = None
    """Reservation id; cannot be combined with other fields."""
    owner_id: Annotated[str, StringConstraints(pattern=r"^\d{12}$")] | None = Field(None, alias="ownerID")
    """Owning account (shared reservations)."""
    instance_match_criteria: Literal["open", "targeted"] | None = None
    """Match open or targeted reservations."""
    tags: SelectorTags | None = None
    """Reservation tags."""


class MetadataOptions(Model):
    """Instance metadata service (IMDS) settings. The default keeps IMDSv2 only and a hop limit of 1, so pods
    (which are one network hop further) cannot read the node role's credentials."""

    http_endpoint: Literal["enabled", "disabled"] = "enabled"
    """IMDS on or off (nodes need it to bootstrap)."""
    http_protocol_ipv6: Literal["enabled", "disabled"] = Field("disabled", alias="httpProtocolIPv6")
    """IMDS over IPv6."""
    http_put_response_hop_limit: int = Field(1, ge=1, le=64)
    """1 keeps pods out of IMDS. Opt in with 2 only for pods that need IMDS without `hostNetwork` (some
    controllers and SDK credential chains); they then see the node role's credentials."""
    http_tokens: Literal["required", "optional"] = "required"
    """`required` = IMDSv2 only."""


# Same ranges as the CRD's pattern, which for Ti skips x8 and x9 between 18 and 49.
_VOLUME_SIZE_OK: dict[str, Callable[[int], bool]] = {
    "Gi": lambda n: n <= 59000,
    "G": lambda n: n <= 64000,
    "Ti": lambda n: n <= 9 or n == 58 or (10 <= n <= 57 and n % 10 <= 7),
    "T": lambda n: n <= 64,
}


def _volume_size(value: str) -> str:
    match = re.fullmatch(r"([1-9]\d*)(Gi|G|Ti|T)", value)
    if match and _VOLUME_SIZE_OK[match.group(2)](int(match.group(1))):
        return value
    raise ValueError("volume size must be a whole number of Gi (1-59000), G (1-64000), Ti or T, e.g. 50Gi")


class Ebs(Model):
    """An EBS volume."""

    volume_size: Annotated[str, AfterValidator(_volume_size)] | None = None
    """Size, e.g. `50Gi`. Required unless `snapshotID` is given."""
    volume_type: Literal["standard", "io1", "io2", "gp2", "sc1", "st1", "gp3"] | None = None
    """Volume type; gp3 is the cheapest general-purpose choice."""
    iops: int | None = Field(None, ge=0)
    """Provisioned IOPS (io1, io2, gp3 only)."""
    throughput: int | None = Field(None, ge=0)
    """Throughput in MiB/s (gp3 only)."""
    encrypted: bool | None = None
    """Encrypt the volume."""
    kms_key_id: NonEmpty | None = Field(None, alias="kmsKeyID")
    """KMS key for encryption (default: the account's EBS key)."""
    delete_on_termination: bool | None = None
    """Delete the volume with the instance."""
    snapshot_id: NonEmpty | None = Field(None, alias="snapshotID")
    """Create the volume from this snapshot."""
    volume_initialization_rate: int | None = Field(None, ge=100, le=300)
    """Snapshot download rate in MiB/s (needs `snapshotID`)."""


class BlockDeviceMapping(Model):
    """A block device of the node."""

    device_name: NonEmpty
    """Device name, e.g. `/dev/xvda` (EC2 requires it)."""
    root_volume: bool | None = None
    """This device holds the kubelet root directory (at most one)."""
    ebs: Ebs | None = None
    """The EBS volume."""


EvictionSignal = Literal["memory.available", "nodefs.available", "nodefs.inodesFree", "imagefs.available",
                         "imagefs.inodesFree", "pid.available"]
EvictionThreshold = Annotated[str, StringConstraints(
    pattern=rf"^((\d{{1,2}}(\.\d{{1,2}})?|100(\.0{{1,2}})?)%|{_QUANTITY})$")]
"""A percentage (`10%`) or an absolute quantity (`500Mi`)."""
GoDuration = Annotated[str, StringConstraints(pattern=r"^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$")]
ReservedResource = Literal["cpu", "memory", "ephemeral-storage", "pid"]
_INT32 = 2**31 - 1


def _ip(value: str) -> str:
    try:
        return str(ipaddress.ip_address(value))
    except ValueError:
        raise ValueError("not an IP address") from None


class KubeletConfig(Model):
    """Kubelet settings Karpenter passes to nodes (and uses when simulating capacity)."""

    max_pods: int | None = Field(None, ge=0, le=_INT32)
    """Pods per node (default: the ENI-based limit of the instance type)."""
    pods_per_core: int | None = Field(None, ge=0, le=_INT32)
    """Pods per vCPU (capped by maxPods)."""
    system_reserved: dict[ReservedResource, Quantity] | None = None
    """Resources reserved for the OS (`cpu`, `memory`, `ephemeral-storage`, `pid`)."""
    kube_reserved: dict[ReservedResource, Quantity] | None = None
    """Resources reserved for the kubelet and container runtime."""
    eviction_hard: dict[EvictionSignal, EvictionThreshold] | None = None
    """Hard eviction thresholds, e.g. `memory.available: 5%`."""
    eviction_soft: dict[EvictionSignal, EvictionThreshold] | None = None
    """Soft eviction thresholds; each needs a grace period."""
    eviction_soft_grace_period: dict[EvictionSignal, GoDuration] | None = None
    """Grace period per soft threshold, e.g. `memory.available: 1m30s`."""
    eviction_max_pod_grace_period: int | None = Field(None, ge=-_INT32 - 1, le=_INT32)
    """Longest pod termination grace period (s) honoured on soft eviction."""
    image_gc_high_threshold_percent: int | None = Field(None, ge=0, le=100, alias="imageGCHighThresholdPercent")
    """Disk use (%) above which image garbage collection always runs."""
    image_gc_low_threshold_percent: int | None = Field(None, ge=0, le=100, alias="imageGCLowThresholdPercent")
    """Disk use (%) image garbage collection frees down to; below imageGCHighThresholdPercent."""
    cpu_cfs_quota: bool | None = Field(None, alias="cpuCFSQuota")
    """Enforce CPU limits with CFS quota."""
    cluster_dns: list[Annotated[str, AfterValidator(_ip)]] | None = Field(None, alias="clusterDNS")
    """Cluster DNS server addresses (default: the cluster's)."""


class NetworkInterface(Model):
    """An extra network interface (EFA setups)."""

    network_card_index: int = Field(ge=0, le=_INT32)
    """Network card."""
    device_index: int = Field(ge=0, le=_INT32)
    """Device index on that card."""
    interface_type: Literal["interface", "efa-only"]
    """`interface` (ENA, with IPs) or `efa-only`."""


class PlacementGroupSelector(Model):
    """The placement group to launch into (by name or id)."""

    id: Annotated[str, StringConstraints(pattern=r"^pg-[0-9a-z]+$")] | None = None
    """Placement group id."""
    name: NonEmpty | None = None
    """Placement group name."""


class ConnectionTracking(Model):
    """Idle connection-tracking timeouts of the node's network interfaces (seconds)."""

    tcp_established_timeout: int | None = Field(None, ge=60, le=432000)
    """Idle established TCP flows."""
    udp_stream_timeout: int | None = Field(None, ge=60, le=180)
    """Idle UDP flows with more than one request-response."""
    udp_timeout: int | None = Field(None, ge=30, le=60)
    """Other idle UDP flows."""


class CpuOptions(Model):
    """CPU options."""

    nested_virtualization: Literal["enabled", "disabled"] | None = None
    """Restrict to instance types supporting nested virtualization."""


def _tag_key(key: str) -> str:
    if key == "eks:eks-cluster-name" or key.startswith("kubernetes.io/cluster") or key in (
            NODEPOOL_LABEL, "karpenter.sh/nodeclaim", f"{AWS_DOMAIN}/ec2nodeclass"):
        raise ValueError("restricted tag key: Karpenter sets it on every instance it launches")
    if key.lower().startswith("aws:"):
        raise ValueError("tag keys starting with aws: are reserved by AWS")
    return key


NodeTagKey = Annotated[str, StringConstraints(min_length=1, max_length=128), AfterValidator(_tag_key)]


def _iam_name(value: str) -> str:
    if value.startswith("arn:"):
        raise ValueError("give the name, not the ARN")
    if not re.fullmatch(r"[\w+=,.@-]+", value):
        raise ValueError("IAM names use letters, digits and +=,.@_-")
    return value


IamName = Annotated[str, StringConstraints(min_length=1, max_length=128), AfterValidator(_iam_name)]


def _default_ami_terms() -> list[AmiSelectorTerm]:
    return [AmiSelectorTerm(alias=versions.AMI_ALIAS)]


class NodeClassConfig(Model):
    """One Karpenter EC2NodeClass: the AWS side of nodes (AMI, subnets, security groups, IAM, disks, IMDS).

    Subnets and security groups default to those tagged `karpenter.sh/discovery: <cluster>`, and the IAM role to
    the platform's node role.
    """

    name: ResourceName
    """EC2NodeClass name; pools refer to it with `nodeClass`."""
    ami_family: AmiFamily | None = None
    """AMI family (user data format, default disks). Implied by an `alias` term; required without one."""
    ami_selector_terms: list[AmiSelectorTerm] = Field(default_factory=_default_ami_terms, min_length=1, max_length=30)
    """AMIs to use. Default: the pinned EKS-optimized AL2023 alias from eks_karpenter/versions.py."""
    subnet_selector_terms: list[SubnetSelectorTerm] | None = Field(None, min_length=1, max_length=30)
    """Subnets (default: tagged `karpenter.sh/discovery: <cluster>`)."""
    security_group_selector_terms: list[SecurityGroupSelectorTerm] | None = Field(None, min_length=1, max_length=30)
    """Security groups (default: tagged `karpenter.sh/discovery: <cluster>`)."""
    role: IamName | None = None
    """IAM role name for nodes; Karpenter manages its instance profile. Default: the platform's node role."""
    instance_profile: IamName | None = None
    """Existing instance profile name instead of `role` (private clusters without IAM access)."""
    user_data: str | None = None
    """Extra user data, merged with Karpenter's: AL2023 a nodeadm NodeConfig, MIME multi-part or shell script;
    Bottlerocket TOML; AL2 MIME multi-part or shell script; Windows bare PowerShell (Karpenter adds the
    `<powershell>` tags); Custom anything (used as is)."""
    tags: dict[NodeTagKey, Annotated[str, StringConstraints(max_length=256)]] = Field(default_factory=dict)
    """Tags on instances, volumes and launch templates (merged over the stack-wide tags)."""
    metadata_options: MetadataOptions = Field(default_factory=MetadataOptions)
    """IMDS settings (IMDSv2 only, hop limit 1)."""
    block_device_mappings: list[BlockDeviceMapping] | None = Field(None, max_length=50)
    """Disks. Default: one encrypted gp3 root volume, 50Gi (/dev/xvda on AL2/AL2023, /dev/sda1 on Windows; a 4Gi
    OS plus 50Gi data volume on Bottlerocket; none for Custom)."""
    detailed_monitoring: bool | None = None
    """One-minute CloudWatch metrics (extra cost)."""
    kubelet: KubeletConfig | None = None
    """Kubelet settings."""
    associate_public_ip_address: bool | None = Field(None, alias="associatePublicIPAddress")
    """Public IPs on nodes (default: the subnet's setting)."""
    instance_store_policy: Literal["RAID0"] | None = None
    """`RAID0`: stripe local NVMe disks and use them for container storage."""
    capacity_reservation_selector_terms: list[CapacityReservationSelectorTerm] | None = Field(None, max_length=30)
    """Capacity reservations for pools that allow `reserved` capacity."""
    context: NonEmpty | None = None
    """EC2 Fleet context (reserved by AWS for specific programs)."""
    network_interfaces: list[NetworkInterface] | None = Field(None, max_length=150)
    """Explicit network interfaces (EFA)."""
    placement_group_selector: PlacementGroupSelector | None = None
    """Launch into this placement group."""
    connection_tracking: ConnectionTracking | None = None
    """Connection-tracking timeouts."""
    cpu_options: CpuOptions | None = None
    """CPU options."""
    ip_prefix_count: int | None = Field(None, ge=0, le=_INT32)
    """IPv4 prefixes to assign to the primary interface."""

    @property
    def alias(self) -> str | None:
        """The alias term's value, if the AMI is chosen by alias."""
        return next((t.alias for t in self.ami_selector_terms if t.alias), None)

    @property
    def family(self) -> AmiFamily | None:
        """The AMI family Karpenter will use: `amiFamily`, else the alias's family."""
        if self.ami_family:
            return self.ami_family
        alias = self.alias
        return ALIAS_FAMILIES.get(alias.split("@")[0]) if alias else None


def default_node_classes() -> list[NodeClassConfig]:
    """One class named `default` with every default: pinned AL2023, discovery-tagged subnets and groups."""
    return [NodeClassConfig(name="default")]


def default_node_pools() -> list[NodePoolConfig]:
    """One pool named `default` on the `default` class, spot first."""
    return [NodePoolConfig(name="default")]
