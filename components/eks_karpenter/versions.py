"""Every pinned version in one place. Upgrades are deliberate: change a pin here, note it in docs/UPGRADING.md.

Each pin is a default: stacks may override the chart versions per environment (to canary an upgrade in dev).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

KARPENTER_VERSION = "1.14.1"
"""Karpenter controller and CRD chart version (`oci://public.ecr.aws/karpenter/karpenter[-crd]`): the default of
`eks-karpenter:karpenter.version`, one of `KARPENTER_RELEASES`."""

KARPENTER_CHART = "oci://public.ecr.aws/karpenter/karpenter"
KARPENTER_CRD_CHART = "oci://public.ecr.aws/karpenter/karpenter-crd"

NTH_VERSION = "0.27.6"
"""aws-node-termination-handler chart version (app v1.25.6)."""
NTH_VERSION_PINNED = date(2026, 11, 22)
"""When `NTH_VERSION` was last set here (`eks-karpenter pins` reports its age; `--write` moves it)."""
NTH_CHART = "oci://public.ecr.aws/aws-ec2/helm/aws-node-termination-handler"
"""Where the NTH chart is published. Not the eks-charts Helm repository: it stopped publishing it at 0.21.0."""


@dataclass(frozen=True)
class KarpenterRelease:
    """One Karpenter release this library renders for: what changes between releases in what it renders (the
    controller's IAM policies, the chart values, the CRDs), read off that release's own upstream files (the
    getting-started CloudFormation template, the chart's values.yaml, the CRD chart's templates); tests compare
    each against them. `scripts/upstream.lock.json` pins those files and both charts of every release."""

    version: str
    released: date
    """The release commit's date."""
    kubernetes: tuple[str, str]
    """Oldest and newest Kubernetes minor of Karpenter's compatibility matrix for this release."""
    crds: tuple[str, ...]
    """CRDs the `karpenter-crd` chart installs (`<plural>.<group>`)."""
    zonal_shift_policy: bool
    """The IAM template has the opt-in ZonalShift policy (`arc-zonal-shift:GetManagedResource`), so the
    controller's `enableZonalShift` can be set."""
    describe_instance_status: bool
    """The ResourceDiscovery policy's regional reads include `ec2:DescribeInstanceStatus`."""
    refresh_intervals: bool
    """The chart has `settings.amiRefreshInterval` and `settings.subnetRefreshInterval`."""
    capacity_buffer: bool
    """The chart has the `settings.featureGates.capacityBuffer` gate and the CRD chart the CapacityBuffer CRD."""


_KARPENTER_CRDS = ("nodepools.karpenter.sh", "nodeclaims.karpenter.sh", "nodeoverlays.karpenter.sh",
                   "ec2nodeclasses.karpenter.k8s.aws")

KARPENTER_RELEASES: dict[str, KarpenterRelease] = {r.version: r for r in (
    KarpenterRelease("1.12.2", date(2026, 7, 11), ("1.26", "1.35"), _KARPENTER_CRDS, zonal_shift_policy=False,
                     describe_instance_status=False, refresh_intervals=False, capacity_buffer=False),
    KarpenterRelease("1.13.1", date(2026, 7, 11), ("1.26", "1.36"), _KARPENTER_CRDS, zonal_shift_policy=True,
                     describe_instance_status=True, refresh_intervals=True, capacity_buffer=False),
    KarpenterRelease("1.14.1", date(2026, 8, 21), ("1.26", "1.36"),
                     (*_KARPENTER_CRDS, "capacitybuffers.autoscaling.x-k8s.io"), zonal_shift_policy=True,
                     describe_instance_status=True, refresh_intervals=True, capacity_buffer=True),
)}
"""Every Karpenter release a stack may name (`eks-karpenter:karpenter.version`), oldest first. Any other is
refused: its IAM, values and CRDs are not known to match what this library renders."""

KARPENTER_VERSIONS = tuple(KARPENTER_RELEASES)

KUBERNETES_VERSION = "1.35"
"""Default EKS Kubernetes version (in standard support: see `EKS_KUBERNETES_SUPPORT`)."""

# Karpenter 1.14's support matrix (chart minK8s 1.26 .. maxK8s 1.36), from the oldest minor EKS ran in 2025 on.
# Whether a minor may be used *today* is decided by the support dates below, not by this list.
SUPPORTED_KUBERNETES_VERSIONS = ("1.29", "1.30", "1.31", "1.32", "1.33", "1.34", "1.35", "1.36")


@dataclass(frozen=True)
class KubernetesSupport:
    """One EKS Kubernetes minor on the EKS release calendar. Standard support lasts 14 months from the EKS
    release, extended support 12 more (billed at six times the standard per-cluster hourly rate); after that
    EKS upgrades the control plane itself."""

    version: str
    released: date
    """Available on EKS."""
    end_of_standard: date
    """Last day of standard support: from the next day an EXTENDED cluster is billed extended support, and a
    STANDARD cluster is upgraded by EKS to the next minor."""
    end_of_extended: date
    """Last day of extended support."""
    projected: bool = False
    """Dates derived from the 14 + 12 month policy and an estimated release date, not read off the calendar."""


EKS_KUBERNETES_SUPPORT_COMPILED = date(2026, 11, 23)
"""When the table below was compiled (offline, from the EKS Kubernetes release calendar in the EKS user
guide, `kubernetes-versions.html`). Re-check it on every Kubernetes bump; confirm projected rows first."""

EKS_KUBERNETES_SUPPORT: dict[str, KubernetesSupport] = {s.version: s for s in (
    KubernetesSupport("1.29", date(2024, 1, 23), date(2025, 3, 23), date(2026, 3, 23)),
    KubernetesSupport("1.30", date(2024, 5, 23), date(2025, 7, 23), date(2026, 7, 23)),
    KubernetesSupport("1.31", date(2024, 9, 26), date(2025, 11, 26), date(2026, 11, 26)),
    KubernetesSupport("1.32", date(2025, 1, 23), date(2026, 3, 23), date(2027, 3, 23)),
    KubernetesSupport("1.33", date(2025, 5, 29), date(2026, 7, 29), date(2027, 7, 29)),
    KubernetesSupport("1.34", date(2025, 10, 2), date(2026, 12, 2), date(2027, 12, 2)),
    KubernetesSupport("1.35", date(2026, 1, 27), date(2027, 3, 27), date(2028, 3, 27), projected=True),
    KubernetesSupport("1.36", date(2026, 6, 10), date(2027, 8, 10), date(2028, 8, 10), projected=True),
)}
"""EKS support window of every minor in `SUPPORTED_KUBERNETES_VERSIONS`."""

AL2_LAST_KUBERNETES_VERSION = "1.32"
"""EKS publishes no Amazon Linux 2 AMIs (managed node group `AL2_*` types, Karpenter `al2@` aliases) for
Kubernetes 1.33 or newer."""

AMI_ALIAS = "al2023@v20260815"
"""Default EC2NodeClass AMI alias. Pinned: `@latest` rolls every node on each AMI release. Before bumping, check the
release exists: `aws ssm get-parameters-by-path --path /aws/service/eks/optimized-ami/<k8s>/amazon-linux-2023/`."""

# EKS add-on versions, pinned per Kubernetes minor. They were chosen without access to the EKS API (this project
# is built offline): confirm each before a first deploy, and on every bump, with
#   aws eks describe-addon-versions --kubernetes-version <minor> --addon-name <name> \
#     --query 'addons[].addonVersions[].addonVersion'
# A version EKS does not offer fails `pulumi up` on the add-on, before any workload is affected; with credentials
# the program looks each one up at preview (eks_karpenter/platform/lookups.py) and fails first.
ADDON_VERSIONS: dict[str, dict[str, str]] = {
    "1.29": {"vpc-cni": "v1.20.4-eksbuild.1", "kube-proxy": "v1.29.15-eksbuild.11",
             "coredns": "v1.11.4-eksbuild.22", "eks-pod-identity-agent": "v1.3.9-eksbuild.3"},
    "1.30": {"vpc-cni": "v1.20.4-eksbuild.1", "kube-proxy": "v1.30.14-eksbuild.8",
             "coredns": "v1.11.4-eksbuild.22", "eks-pod-identity-agent": "v1.3.9-eksbuild.3"},
    "1.31": {"vpc-cni": "v1.20.4-eksbuild.1", "kube-proxy": "v1.31.12-eksbuild.5",
             "coredns": "v1.11.4-eksbuild.22", "eks-pod-identity-agent": "v1.3.9-eksbuild.3"},
    "1.32": {"vpc-cni": "v1.20.4-eksbuild.1", "kube-proxy": "v1.32.8-eksbuild.4",
             "coredns": "v1.11.4-eksbuild.22", "eks-pod-identity-agent": "v1.3.9-eksbuild.3"},
    "1.33": {"vpc-cni": "v1.20.4-eksbuild.1", "kube-proxy": "v1.33.4-eksbuild.3",
             "coredns": "v1.12.3-eksbuild.1", "eks-pod-identity-agent": "v1.3.9-eksbuild.3"},
    "1.34": {"vpc-cni": "v1.20.4-eksbuild.1", "kube-proxy": "v1.34.1-eksbuild.2",
             "coredns": "v1.12.3-eksbuild.1", "eks-pod-identity-agent": "v1.3.9-eksbuild.3"},
    "1.35": {"vpc-cni": "v1.21.1-eksbuild.1", "kube-proxy": "v1.35.0-eksbuild.2",
             "coredns": "v1.12.4-eksbuild.1", "eks-pod-identity-agent": "v1.3.10-eksbuild.1"},
    "1.36": {"vpc-cni": "v1.21.1-eksbuild.1", "kube-proxy": "v1.36.0-eksbuild.1",
             "coredns": "v1.13.1-eksbuild.1", "eks-pod-identity-agent": "v1.3.10-eksbuild.1"},
}

ADDON_VERSIONS_PINNED = date(2026, 11, 22)
"""When `ADDON_VERSIONS` were last set here (`eks-karpenter pins` reports their age; `--write` moves it)."""

PAUSE_IMAGE = "registry.k8s.io/pause:3.10"
"""The container of the post-deploy smoke test's pods (`python -m infra smoke`): multi-arch, does nothing."""

PROMETHEUS_OPERATOR_VERSION = "0.86.0"
"""The Prometheus Operator whose `monitoring.coreos.com/v1` API (ServiceMonitor, PodMonitor, PrometheusRule) the
rendered alert rules and the charts' monitors target. The PrometheusRule is checked against this version's
schema for the fields it uses (tests/platform/observability/test_observability.py: the CRD itself is not
available offline)."""
