"""Config of the AWS Node Termination Handler (stack key `eks-karpenter:nodeTerminationHandler`).

NTH is for the nodes Karpenter does not manage: the CAS-era spot managed node groups (`cluster.spotNodeGroups`)
and self-managed Auto Scaling groups. Karpenter handles its own nodes through its interruption queue
(`eks-karpenter:interruption`); running both on one node makes them race to cordon, drain and replace it.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from eks_karpenter import versions
from eks_karpenter.config.model import Model, empty_list
from eks_karpenter.labels import EKS_CAPACITY_TYPE
from eks_karpenter.platform.cluster.config import LabelKey, LabelValue

ChartVersion = Annotated[str, StringConstraints(pattern=r"^[0-9]+\.[0-9]+\.[0-9]+$")]
Namespace = Annotated[str, StringConstraints(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max_length=63)]
AsgName = Annotated[str, StringConstraints(min_length=1, max_length=255, pattern=r"^[^:]+$")]

SPOT_GROUP_LABELS: dict[str, str] = {"lifecycle": "Ec2Spot"}
"""The label the CAS-era spot node groups carry (cluster.config.SpotNodeGroupConfig.labels' default)."""
EKS_SPOT_CAPACITY_LABELS: dict[str, str] = {EKS_CAPACITY_TYPE: "SPOT"}
"""The label EKS puts on every node of a SPOT managed node group: an alternative IMDS-mode selector."""


def _spot_group_labels() -> dict[str, str]:
    return dict(SPOT_GROUP_LABELS)


class NthConfig(Model):
    """The aws-node-termination-handler chart (the OCI chart `versions.NTH_CHART`), in one of its two modes.

    `imds`: a DaemonSet on the selected spot nodes polls each node's instance metadata for the spot interruption
    notice, scheduled events and (optionally) rebalance recommendations. No AWS resources, no IAM.

    `queue`: a Deployment reads an SQS queue fed by EventBridge (spot interruption, rebalance, state change,
    scheduled change) and by termination lifecycle hooks on the listed Auto Scaling groups. It only acts on
    instances tagged `aws-node-termination-handler/managed`, a tag this library puts on those groups only
    (propagated at launch), so it never touches Karpenter's nodes.
    """

    enabled: bool = False
    """Install NTH. Off by default: Karpenter's own interruption queue covers Karpenter's nodes."""
    mode: Literal["imds", "queue"] = "imds"
    """`imds` (DaemonSet on the spot nodes) or `queue` (Deployment + SQS + EventBridge + lifecycle hooks). Queue
    mode is refused beside `cluster.spotNodeGroups`: their Auto Scaling groups get no hook nor tag, so they would
    have no handler."""
    version: ChartVersion = versions.NTH_VERSION
    """Chart version (`oci://public.ecr.aws/aws-ec2/helm/aws-node-termination-handler`); override per stack to
    canary an upgrade (the version must be published there). The chart is versioned 0.x apart from its
    application (chart `0.y.z`, application `1.y.z`): an application version is refused."""
    namespace: Namespace = "kube-system"
    """Namespace of the release (created when it is not kube-system)."""

    enable_spot_interruption_draining: bool = True
    """IMDS mode: drain on the two-minute spot interruption notice."""
    enable_scheduled_event_draining: bool = True
    """IMDS mode: drain before an EC2 scheduled maintenance event (reboot, retirement) starts."""
    enable_rebalance_monitoring: bool = False
    """IMDS mode: cordon on a rebalance recommendation. EKS spot managed node groups already replace and drain
    on it (capacity rebalancing), so this stays off by default."""
    enable_rebalance_draining: bool = False
    """IMDS mode: also drain on a rebalance recommendation (needs `enableRebalanceMonitoring`)."""
    node_selector: dict[LabelKey, LabelValue] = Field(default_factory=_spot_group_labels)
    """IMDS mode: the nodes the DaemonSet runs on. The default is the CAS-era spot groups' label; the EKS label
    `eks.amazonaws.com/capacityType: SPOT` selects every spot managed node group instead. Karpenter's nodes are
    always excluded (required affinity `karpenter.sh/nodepool DoesNotExist`); Karpenter keys are refused, and
    so is a selector some spot node group's nodes do not carry (that group would have no handler)."""

    auto_scaling_group_names: list[AsgName] = Field(default_factory=empty_list)
    """Queue mode: self-managed Auto Scaling groups whose termination lifecycle hooks feed the queue. Each gets
    a hook and the `aws-node-termination-handler/managed` tag (propagated to new instances). A consumer program
    may pass more groups (names or outputs) to the component directly."""
    identity: Literal["podIdentity", "irsa"] = "podIdentity"
    """Queue mode: how the controller gets AWS credentials: EKS Pod Identity (needs the
    eks-pod-identity-agent add-on) or IAM roles for service accounts (needs the cluster's OIDC provider)."""

    acknowledge_spot_groups_without_handler: bool = False
    """Explicit opt-out: keep spot managed node groups without NTH (`enabled: false`), relying on EKS's
    rebalance-driven drain only."""
