"""Every pinned version in one place. Upgrades are deliberate: change a pin here, note it in docs/UPGRADING.md.

Each pin is a default: stacks may override the chart versions per environment (to canary an upgrade in dev).
"""

from __future__ import annotations

KARPENTER_VERSION = "1.14.1"
"""Karpenter controller and CRD chart version (`oci://public.ecr.aws/karpenter/karpenter[-crd]`)."""

KARPENTER_CHART = "oci://public.ecr.aws/karpenter/karpenter"
KARPENTER_CRD_CHART = "oci://public.ecr.aws/karpenter/karpenter-crd"

NTH_VERSION = "0.27.6"
"""aws-node-termination-handler chart version (eks-charts)."""
NTH_CHART_REPO = "https://aws.github.io/eks-charts"

KUBERNETES_VERSION = "1.34"
"""Default EKS Kubernetes version."""

# Karpenter 1.14's support matrix: chart minK8s 1.26 .. maxK8s 1.36; EKS standard support sets the floor we
# accept for new clusters (older minors are extended-support only and cost six times as much per hour).
SUPPORTED_KUBERNETES_VERSIONS = ("1.29", "1.30", "1.31", "1.32", "1.33", "1.34", "1.35", "1.36")

AMI_ALIAS = "al2023@v20260815"
"""Default EC2NodeClass AMI alias. Pinned: `@latest` rolls every node on each AMI release. Before bumping, check the
release exists: `aws ssm get-parameters-by-path --path /aws/service/eks/optimized-ami/<k8s>/amazon-linux-2023/`."""

# EKS add-on versions, pinned per Kubernetes minor. They were chosen without access to the EKS API (this project
# is built offline): confirm each before a first deploy, and on every bump, with
#   aws eks describe-addon-versions --kubernetes-version <minor> --addon-name <name> \
#     --query 'addons[].addonVersions[].addonVersion'
# A version EKS does not offer fails `pulumi up` on the add-on, before any workload is affected.
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

PAUSE_IMAGE = "registry.k8s.io/pause:3.10"
"""The container of the post-deploy smoke test's pods (`python -m infra smoke`): multi-arch, does nothing."""
