"""Node config types and defaults: Karpenter EC2NodeClasses and NodePools (API `v1`, Karpenter 1.14).

Keys are spelled as upstream spells them, so a block copied from Karpenter's docs pastes in. Constraints that
concern one value (patterns, enums, ranges, restricted keys) live on the types; rules that relate two fields or
two objects live in rules.py. Every node config type is importable from here; they live in three modules:

- fields.py: well-known label keys and the value types both kinds share;
- class_config.py: `NodeClassConfig` with its selector terms, disks, IMDS and kubelet settings;
- this module: `NodePoolConfig` with its requirements, taints and disruption budgets, and the defaults. (They
  stay here because the JSON Schema names `Taint`, which the cluster config also defines, by its module path.)
"""

from __future__ import annotations

from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import AfterValidator, Field, StringConstraints

from eks_karpenter.config.model import Model, empty_dict, empty_list
from eks_karpenter.platform.nodepool.class_config import (
    ALIAS_FAMILIES,
    AmiFamily,
    AmiSelectorTerm,
    BlockDeviceMapping,
    CapacityReservationSelectorTerm,
    ConnectionTracking,
    CpuOptions,
    Ebs,
    EvictionSignal,
    EvictionThreshold,
    GoDuration,
    IamName,
    KubeletConfig,
    MetadataOptions,
    NetworkInterface,
    NodeClassConfig,
    NodeTagKey,
    PlacementGroupSelector,
    ReservedResource,
    SecurityGroupSelectorTerm,
    SelectorTags,
    SubnetSelectorTerm,
)
from eks_karpenter.platform.nodepool.fields import (
    AvailabilityZone,
    BudgetDuration,
    BudgetNodes,
    Duration,
    GraceDuration,
    LabelKey,
    LabelValue,
    NonEmpty,
    QualifiedName,
    Quantity,
    ResourceName,
    TaintValue,
    qualified_name,
)

__all__ = [
    "ALIAS_FAMILIES",
    "AmiFamily",
    "AmiSelectorTerm",
    "AvailabilityZone",
    "BlockDeviceMapping",
    "Budget",
    "BudgetDuration",
    "BudgetNodes",
    "CapacityReservationSelectorTerm",
    "CapacityType",
    "Category",
    "ConnectionTracking",
    "CpuOptions",
    "CronSchedule",
    "Disruption",
    "Duration",
    "Ebs",
    "EvictionSignal",
    "EvictionThreshold",
    "GoDuration",
    "GraceDuration",
    "IamName",
    "InstanceFamily",
    "InstanceSize",
    "InstanceType",
    "KubeletConfig",
    "LabelKey",
    "LabelValue",
    "MetadataOptions",
    "NetworkInterface",
    "NodeClassConfig",
    "NodePoolConfig",
    "NodeTagKey",
    "NonEmpty",
    "Operator",
    "PlacementGroupSelector",
    "QualifiedName",
    "Quantity",
    "Requirement",
    "ReservedResource",
    "ResourceName",
    "SecurityGroupSelectorTerm",
    "SelectorTags",
    "SubnetSelectorTerm",
    "Taint",
    "TaintValue",
    "default_node_classes",
    "default_node_pools",
]


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

    key: Annotated[str, StringConstraints(min_length=1, max_length=316), AfterValidator(qualified_name)]
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


def _time_zone(value: str) -> str:
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError("not an IANA time zone such as Europe/Berlin, America/New_York or UTC") from None
    return value


TimeZone = Annotated[str, StringConstraints(min_length=1, max_length=64), AfterValidator(_time_zone)]
LocalTime = Annotated[str, StringConstraints(pattern=r"^([01][0-9]|2[0-3]):[0-5][0-9]$")]
Weekday = Literal["sun", "mon", "tue", "wed", "thu", "fri", "sat"]


def _weekdays() -> list[Weekday]:
    return ["mon", "tue", "wed", "thu", "fri"]


class LocalWindow(Model):
    """A disruption budget during local hours (`disruption.timeZone`), rendered to a UTC cron budget that covers
    the local window under every UTC offset of the zone (daylight saving included; the plan's
    `disruptionWindows` output shows both)."""

    nodes: BudgetNodes = "0"
    """Nodes Karpenter may disrupt at once during the window: `"0"` (default) holds them all."""
    days: Annotated[list[Weekday], AfterValidator(_unique)] = Field(default_factory=_weekdays, min_length=1)
    """Local weekdays the window starts on (default mon-fri)."""
    start: LocalTime
    """Local start, `HH:MM` (24h), e.g. `08:00`."""
    end: LocalTime
    """Local end, `HH:MM`; earlier than `start` means the next day (`22:00`-`06:00`)."""
    reasons: Annotated[list[Literal["Underutilized", "Empty", "Drifted"]], AfterValidator(_unique)] | None = Field(
        None, min_length=1, max_length=50)
    """Limit the window to these disruption reasons; absent means all reasons."""


def _ten_percent() -> list[Budget]:
    return [Budget(nodes="10%")]


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
    budgets: list[Budget] = Field(default_factory=_ten_percent, max_length=50)
    """Disruption budgets; the most restrictive active one wins."""
    time_zone: TimeZone | None = None
    """IANA time zone of `windows`, e.g. `Europe/Berlin` (this library's setting: Karpenter's cron is UTC). It
    applies to `windows` only (refused without any; budgets' `schedule` stays UTC, with a warning beside
    windows). Name a place: an abbreviation or fixed offset (`EST`, `Etc/GMT+5`) has no daylight saving, and is
    warned about."""
    windows: list[LocalWindow] = Field(default_factory=empty_list, max_length=50)
    """Budgets in local business hours (needs `timeZone`), added to `budgets` as UTC schedules, e.g. `{nodes:
    "0", start: "08:00", end: "18:00", reasons: [Underutilized, Drifted]}` to hold nodes while people work. A
    window that an always-on budget (`nodes: "0"`, no schedule) already covers has no effect and is refused."""


def _default_limits() -> dict[str, str]:
    return {"cpu": "1000", "memory": "1000Gi"}


def _general_purpose_categories() -> list[str]:
    return ["c", "m", "r"]


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
        default_factory=_general_purpose_categories, min_length=1)
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
    requirements: list[Requirement] = Field(default_factory=empty_list, max_length=100)
    """Raw requirements, appended after the shortcuts. Custom label keys that pods select on must appear here
    (e.g. `Exists`) or in `labels`."""
    labels: dict[LabelKey, LabelValue] = Field(default_factory=empty_dict, max_length=100)
    """Labels on every node of the pool (custom keys welcome; pods can select on them)."""
    annotations: dict[QualifiedName, str] = Field(default_factory=empty_dict)
    """Annotations on every node of the pool."""
    taints: list[Taint] = Field(default_factory=empty_list)
    """Taints on every node; only pods that tolerate them land here (see `workload.scheduling_for`)."""
    startup_taints: list[Taint] = Field(default_factory=empty_list)
    """Taints present at boot that something else (a DaemonSet) removes; pods need not tolerate them."""
    expire_after: Duration = "720h"
    """Replace nodes after this age (30 days, Karpenter v1's default: fresh AMIs and patched kernels). In v1
    expiry is forceful: it ignores disruption budgets (and `do-not-disrupt`), so a node may be replaced during
    a budget's `nodes: "0"` window; `terminationGracePeriod` bounds its drain. `Never` disables it."""
    termination_grace_period: GraceDuration | None = "48h"
    """Upper bound on draining a node; after it, remaining pods are removed even if a PodDisruptionBudget or
    `karpenter.sh/do-not-disrupt` blocks them. `null` waits forever."""
    disruption: Disruption = Field(default_factory=Disruption)
    """Consolidation and disruption budgets."""
    limits: dict[QualifiedName, Quantity] = Field(default_factory=_default_limits)
    """Ceiling on the pool's total capacity: the brake on runaway spend. `{}` removes it. A `cpu` or `memory`
    limit below the smallest instance the pool admits is refused (the pool could never launch a node); `"0"`
    pauses the pool."""
    weight: int | None = Field(None, ge=1, le=100)
    """Priority among pools that fit a pod (higher first)."""
    spot_without_interruption_handling: bool = False
    """Explicit opt-out: allow spot although `eks-karpenter:interruption` is off, accepting that pods are killed
    without the two-minute notice being acted on."""


def default_node_classes() -> list[NodeClassConfig]:
    """One class named `default` with every default: pinned AL2023, discovery-tagged subnets and groups."""
    return [NodeClassConfig(name="default")]


def default_node_pools() -> list[NodePoolConfig]:
    """One pool named `default` on the `default` class, spot first."""
    return [NodePoolConfig(name="default")]
