"""Karpenter install config types and defaults (stack key `eks-karpenter:karpenter`).

Field-level checks (formats, ranges, enums) live on the types here; cross-field rules live in rules.py. Keys that
are passed to the Helm chart's `settings.*` are spelled exactly as the chart spells them (`reservedENIs`,
`isolatedVPC`), so a value can be looked up in the chart's documentation by its name.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field, StringConstraints

from eks_karpenter import versions
from eks_karpenter.config.model import Model, empty_dict, empty_list
from eks_karpenter.quantities import quantity_value

# --- Go durations (time.ParseDuration), as the controller parses BATCH_MAX_DURATION and friends ----------------

_DURATION_UNITS: dict[str, Decimal] = {
    "ns": Decimal("1e-9"), "us": Decimal("1e-6"), "µs": Decimal("1e-6"), "ms": Decimal("1e-3"),
    "s": Decimal(1), "m": Decimal(60), "h": Decimal(3600),
}
_DURATION_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)(ns|us|µs|ms|s|m|h)")
DURATION_PATTERN = r"^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$"


def duration_seconds(value: str) -> Decimal:
    """Seconds in a Go duration string (`1m30s` -> 90). Raises ValueError on anything else."""
    if not re.fullmatch(DURATION_PATTERN, value):
        raise ValueError(f"not a Go duration such as 10s, 500ms or 1m30s: {value!r}")
    return sum((Decimal(n) * _DURATION_UNITS[u] for n, u in _DURATION_PART.findall(value)), Decimal(0))


def _duration(value: str) -> str:
    duration_seconds(value)
    return value


Duration = Annotated[str, AfterValidator(_duration)]

def _number_as_text(value: Any) -> Any:
    # YAML `cpu: 1` arrives as a number; Kubernetes quantities are strings.
    if isinstance(value, bool):
        return value  # left for the str validator to refuse
    if isinstance(value, int | float):
        return format(Decimal(str(value)).normalize(), "f")
    return value


def _positive_quantity(value: str) -> str:
    if quantity_value(value) <= 0:
        raise ValueError("must be greater than zero")
    return value


Quantity = Annotated[str, BeforeValidator(_number_as_text), AfterValidator(_positive_quantity)]


# --- Names -------------------------------------------------------------------------------------------------------

def _karpenter_version(value: str) -> str:
    if not re.fullmatch(r"[0-9]+\.[0-9]+\.[0-9]+", value):
        raise ValueError("must be a Karpenter release such as 1.14.1 (chart versions have no leading 'v')")
    return value


KarpenterVersion = Annotated[str, AfterValidator(_karpenter_version)]
Namespace = Annotated[str, StringConstraints(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max_length=63)]
PriorityClassName = Annotated[str, StringConstraints(
    pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$", max_length=253)]
PolicyArn = Annotated[str, StringConstraints(
    pattern=r"^arn:aws[a-z-]*:iam::([0-9]{12}|aws):policy/[A-Za-z0-9_+=,.@/-]+$")]


# --- Models ------------------------------------------------------------------------------------------------------

class ResourceList(Model):
    """CPU and memory amounts for the controller container."""

    cpu: Quantity | None = None
    """CPU, e.g. `1` or `500m` (numbers are accepted and written as quantities)."""
    memory: Quantity | None = None
    """Memory, e.g. `1Gi` or `512Mi`."""


def _one_cpu_one_gib() -> ResourceList:
    return ResourceList(cpu="1", memory="1Gi")


class ControllerResources(Model):
    """Requests and limits of the controller container (chart `controller.resources`)."""

    requests: ResourceList = Field(default_factory=_one_cpu_one_gib)
    """What the scheduler reserves. The controller sizes its worker pools from `requests.cpu`."""
    limits: ResourceList = Field(default_factory=_one_cpu_one_gib)
    """Caps. `limits.memory` is required: the controller sets its Go GC soft limit to 90% of it."""


class FeatureGates(Model):
    """Karpenter feature gates (chart `settings.featureGates`), defaulting as in the chart."""

    node_repair: bool = False
    """ALPHA: replace nodes whose health conditions stay unhealthy."""
    node_overlay: bool = False
    """ALPHA: let NodeOverlay objects adjust simulated instance prices and capacity."""
    reserved_capacity: bool = True
    """BETA: launch into on-demand capacity reservations selected by EC2NodeClasses."""
    spot_to_spot_consolidation: bool = False
    """ALPHA: consolidate spot nodes onto cheaper spot nodes (needs 15+ candidate instance types)."""
    static_capacity: bool = False
    """ALPHA: NodePools with a fixed `replicas` count."""
    capacity_buffer: bool = False
    """ALPHA: CapacityBuffer objects that keep spare capacity provisioned."""


class KarpenterSettings(Model):
    """Controller settings users may tune, spelled as the chart's `settings.*` keys; defaults are the chart's."""

    batch_max_duration: Duration = "10s"
    """Longest provisioning batch window; longer windows give fewer, larger nodes but slower scale-up."""
    batch_idle_duration: Duration = "1s"
    """A batch window closes after this long without new pending pods (at most batchMaxDuration)."""
    preference_policy: Literal["Respect", "Ignore"] = "Respect"
    """Whether the scheduler simulation honours preferred affinities and ScheduleAnyway spread constraints."""
    min_values_policy: Literal["Strict", "BestEffort"] = "Strict"
    """`Strict` fails a NodePool whose requirement `minValues` cannot be met; `BestEffort` relaxes them."""
    vm_memory_overhead_percent: float = Field(0.075, ge=0, lt=1)
    """Share of instance memory assumed taken by the hypervisor (0.075 = 7.5%); must be above zero."""
    reserved_enis: int = Field(0, ge=0, alias="reservedENIs")
    """ENIs kept out of max-pods and kube-reserved calculations (VPC CNI custom networking)."""
    isolated_vpc: bool = Field(False, alias="isolatedVPC")
    """The VPC has no route to AWS services without VPC endpoints: skips the Pricing API and requires
    `nodeRole.instanceProfile` (IAM has no VPC endpoint, so Karpenter cannot manage instance profiles)."""
    ami_refresh_interval: Duration = "1m"
    """How often AMIs are re-resolved (at least 1m). Longer means fewer DescribeImages calls, slower drift."""
    subnet_refresh_interval: Duration = "1m"
    """How often subnets are re-resolved (at least 1m). Longer means fewer DescribeSubnets calls."""


class NodeRoleConfig(Model):
    """The IAM role of Karpenter-launched nodes."""

    additional_policy_arns: list[PolicyArn] = Field(default_factory=empty_list, max_length=16)
    """Managed policies attached on top of the four standard node policies (worker node, CNI, ECR pull-only,
    SSM core). IAM's default quota is 10 managed policies per role, so more than 6 extra needs a quota raise."""
    instance_profile: bool = False
    """Create an instance profile for the role and give its name to EC2NodeClasses (instead of the role, for
    which Karpenter manages profiles itself). Needed for private clusters without IAM API access."""


LabelKey = Annotated[str, StringConstraints(max_length=316,
                                            pattern=r"^([a-z0-9.-]+/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")]
LabelValue = Annotated[str, StringConstraints(max_length=63,
                                              pattern=r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")]


class Toleration(Model):
    """A pod toleration, as Kubernetes spells it."""

    key: LabelKey | None = None
    """Taint key; unset with `operator: Exists` tolerates every taint."""
    operator: Literal["Equal", "Exists"] = "Equal"
    """`Equal` matches `value`; `Exists` matches any value."""
    value: LabelValue | None = None
    """Taint value (with `Equal`)."""
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] | None = None
    """Taint effect; unset matches every effect."""


class KarpenterConfig(Model):
    """The Karpenter controller install: chart version, identity, placement, sizing and settings."""

    version: KarpenterVersion = Field(versions.KARPENTER_VERSION,
                                      json_schema_extra={"pattern": r"^[0-9]+\.[0-9]+\.[0-9]+$"})
    """Karpenter release of both charts (`karpenter`, `karpenter-crd`), no leading `v`: one of 1.12.2, 1.13.1,
    1.14.1 (`versions.KARPENTER_RELEASES`), whose IAM policies, chart values and CRDs this library renders. Override
    per stack to canary an upgrade; the cluster's Kubernetes minor must be in the release's range."""
    namespace: Namespace = "kube-system"
    """Namespace of the controller. `kube-system` is upstream's recommendation: EKS's API priority and fairness
    FlowSchemas for leader election and controllers cover it; other namespaces need their own."""
    identity: Literal["podIdentity", "irsa"] = "podIdentity"
    """How the controller gets AWS credentials: EKS Pod Identity (needs the eks-pod-identity-agent add-on) or
    IRSA (an annotated service account, via the cluster's OIDC provider)."""
    controller_on_fargate: bool = False
    """Run the controller on Fargate instead of the system node group (requires `identity: irsa`). This stack
    creates the Fargate profile for the controller's pods in its namespace, on a created or an existing
    cluster. Refused together with a `nodeSelector` that pins a managed node group (Fargate nodes carry none)."""
    node_selector: dict[LabelKey, LabelValue] = Field(default_factory=empty_dict)
    """Extra node labels the controller's nodes must carry (chart `nodeSelector`, on top of
    `kubernetes.io/os: linux`). On a created cluster the controller also requires the system node group's label
    `node-role/system: "true"`; on an existing cluster (`cluster.existing: true`) it does not, since the
    existing nodes do not carry it: by default it runs on any Linux node Karpenter did not launch. Name the
    existing nodes meant for it here (e.g. `{eks.amazonaws.com/nodegroup: system}`). On a created cluster
    a label the system node group's nodes do not carry is refused (add it to `cluster.systemNodeGroup.labels`),
    `eks.amazonaws.com/nodegroup` included: EKS generates the names of the groups this stack creates."""
    tolerations: list[Toleration] = Field(default_factory=empty_list, max_length=20)
    """Extra tolerations of the controller's pods (on top of `CriticalAddonsOnly`), for existing nodes that
    are tainted for system workloads. As the API server checks them: `operator: Exists` takes no `value`, and a
    toleration without a `key` needs `operator: Exists`."""
    adopt_existing_crds: bool = False
    """Take over Karpenter CRDs that already exist and no release of this stack owns (an earlier install, or
    another tool's), instead of failing the install on them (Helm's take-ownership); the objects in them stay.
    The preflight of an existing cluster says when this is needed."""
    replicas: int = Field(2, ge=1, le=10)
    """Controller replicas (one leader, the others on standby); each needs its own node."""
    log_level: Literal["debug", "info", "error"] = "info"
    """Controller log verbosity."""
    resources: ControllerResources = Field(default_factory=ControllerResources)
    """Controller container resources; the default (1 CPU, 1Gi, requests = limits) is upstream's guidance."""
    feature_gates: FeatureGates = Field(default_factory=FeatureGates)
    """Feature gates (chart `settings.featureGates`)."""
    settings: KarpenterSettings = Field(default_factory=KarpenterSettings)
    """Tunable controller settings (chart `settings.*`)."""
    zonal_shift: bool = False
    """Respect EKS zonal shifts: no launches into a shifted-away zone (chart `settings.enableZonalShift`). The
    cluster needs zonal shift enabled for this to have any effect."""
    node_role: NodeRoleConfig = Field(default_factory=NodeRoleConfig)
    """The node IAM role of Karpenter-launched instances."""
    spot_service_linked_role: Literal["auto", "create", "exists"] = "auto"
    """`AWSServiceRoleForEC2Spot`, without which spot launches fail. It is one per account and shared, so a
    second create fails. `auto` looks it up at every `up` and creates it only when the account has none;
    `create` always registers it (fails if the account already has it); `exists` never looks nor creates.
    A role this stack registers is never deleted by destroy (retainOnDelete)."""
    priority_class_name: PriorityClassName = "system-cluster-critical"
    """PriorityClass of the controller pods: the autoscaler must not be preempted by the pods it schedules."""
    delete_timeout: Duration = "15m"
    """How long `pulumi destroy` (or removing one from config) waits for a NodePool or EC2NodeClass to go, and
    for the Karpenter releases to uninstall, before failing instead of hanging. Their finalizers hold the delete
    until Karpenter has drained and terminated their nodes; a drain blocked by a PodDisruptionBudget can take
    longer (up to the pool's `terminationGracePeriod`): then the delete fails, and re-running destroy after
    fixing the blocker continues it. Between 1m and 24h."""
    dns_policy: Literal["ClusterFirst", "Default"] = "ClusterFirst"
    """Pod DNS policy. Use `Default` (the VPC resolver) if CoreDNS may run on Karpenter-launched nodes, so the
    controller can still start when those nodes are gone."""
