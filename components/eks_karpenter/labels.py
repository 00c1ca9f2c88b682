"""Well-known label, annotation and tag keys of Kubernetes, Karpenter, the AWS provider and EKS: the one place
each is written (as Karpenter's own `labels.go` is), so every module reads the same key.

Karpenter writes its label keys as tags on what it launches too (`karpenter.sh/nodepool`, ...): the IAM policies
scope the controller by them.
"""

from __future__ import annotations

# --- Kubernetes ------------------------------------------------------------------------------------------------

ARCH = "kubernetes.io/arch"
OS = "kubernetes.io/os"
HOSTNAME = "kubernetes.io/hostname"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
WINDOWS_BUILD = "node.kubernetes.io/windows-build"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
LIFECYCLE = "node.kubernetes.io/lifecycle"
"""Set to `spot` by kops and some self-managed node groups (not by Karpenter or EKS)."""
INGRESS_CLASS_ANNOTATION = "kubernetes.io/ingress.class"
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
"""Marks a static pod's mirror: the kubelet owns it, nothing can evict it."""

# --- Karpenter (karpenter.sh) ----------------------------------------------------------------------------------

KARPENTER_GROUP = "karpenter.sh"
"""The API group of NodePools and NodeClaims, and the domain of Karpenter's own labels."""
NODEPOOL_LABEL = f"{KARPENTER_GROUP}/nodepool"
NODECLAIM_LABEL = f"{KARPENTER_GROUP}/nodeclaim"
CAPACITY_TYPE = f"{KARPENTER_GROUP}/capacity-type"
DO_NOT_DISRUPT = f"{KARPENTER_GROUP}/do-not-disrupt"
"""A pod annotation: Karpenter does not voluntarily disrupt the node it runs on."""
MANAGED_BY = f"{KARPENTER_GROUP}/managed-by"
"""A tag Karpenter before v1 wrote on what it launched."""
PROVISIONER_NAME_LABEL = f"{KARPENTER_GROUP}/provisioner-name"
"""The pool label before v1 (v1alpha5 Provisioners)."""

# --- Karpenter's AWS provider (karpenter.k8s.aws) --------------------------------------------------------------

AWS_GROUP = "karpenter.k8s.aws"
"""The API group of EC2NodeClasses, and the domain of the provider's instance labels."""
ZONE_ID = "topology.k8s.aws/zone-id"
NODECLASS_LABEL = f"{AWS_GROUP}/ec2nodeclass"
INSTANCE_CATEGORY = f"{AWS_GROUP}/instance-category"
INSTANCE_FAMILY = f"{AWS_GROUP}/instance-family"
INSTANCE_GENERATION = f"{AWS_GROUP}/instance-generation"
INSTANCE_SIZE = f"{AWS_GROUP}/instance-size"
INSTANCE_CPU = f"{AWS_GROUP}/instance-cpu"
INSTANCE_MEMORY = f"{AWS_GROUP}/instance-memory"
INSTANCE_HYPERVISOR = f"{AWS_GROUP}/instance-hypervisor"

AWS_LABEL_KEYS = frozenset(f"{AWS_GROUP}/{name}" for name in (
    "instance-tenancy", "capacity-reservation-type", "capacity-reservation-id", "capacity-reservation-interruptible",
    "ec2nodeclass", "instance-encryption-in-transit-supported", "instance-category", "instance-hypervisor",
    "instance-family", "instance-generation", "instance-local-nvme", "instance-size", "instance-cpu",
    "instance-cpu-manufacturer", "instance-cpu-sustained-clock-speed-mhz", "instance-memory", "instance-ebs-bandwidth",
    "instance-network-bandwidth", "instance-gpu-name", "instance-gpu-manufacturer", "instance-gpu-count",
    "instance-gpu-memory", "instance-accelerator-name", "instance-accelerator-manufacturer",
    "instance-accelerator-count", "instance-capability-flex", "placement-group-id", "placement-group-partition"))
"""The `karpenter.k8s.aws/*` keys Karpenter 1.14's CRDs accept in requirements and template labels."""

WELL_KNOWN_KEYS = AWS_LABEL_KEYS | {CAPACITY_TYPE, NODEPOOL_LABEL, ARCH, OS, ZONE, ZONE_ID, REGION, INSTANCE_TYPE,
                                   WINDOWS_BUILD}
"""Keys Karpenter knows values for. Any other key is a custom label."""

# --- EKS -------------------------------------------------------------------------------------------------------

NODEGROUP_LABEL = "eks.amazonaws.com/nodegroup"
"""Set by EKS on every node of a managed node group: its name."""
EKS_CAPACITY_TYPE = "eks.amazonaws.com/capacityType"
"""Set by EKS on managed node group nodes: `ON_DEMAND` or `SPOT`."""
EKS_COMPUTE_TYPE = "eks.amazonaws.com/compute-type"
"""Set by EKS on Fargate nodes (`fargate`)."""
EKS_CLUSTER_NAME_TAG = "eks:eks-cluster-name"
"""A tag Karpenter writes on what it launches: the cluster's name."""
IRSA_ANNOTATION = "eks.amazonaws.com/role-arn"
"""The service-account annotation IRSA reads: the IAM role its pods assume."""

CLUSTER_TAG_PREFIX = "kubernetes.io/cluster"
"""`kubernetes.io/cluster/<name>`: the tag that marks what belongs to a cluster (subnets, instances)."""
RESTRICTED_TAG_KEYS = (EKS_CLUSTER_NAME_TAG, NODEPOOL_LABEL, NODECLAIM_LABEL, NODECLASS_LABEL)
"""EC2NodeClass tag keys Karpenter v1 refuses (it sets them on every instance it launches), besides
`kubernetes.io/cluster*`."""

# --- this platform ---------------------------------------------------------------------------------------------

SYSTEM_NODE_LABEL = "node-role/system"
"""On the system node group's nodes (`true`): where the Karpenter controller and other add-ons run."""
RELEASE_OWNER_LABEL = "eks-karpenter.io/stack"
"""On the Secrets Helm stores this stack's releases in (`<project>.<stack>`, `adopted.release_owner`): Helm keeps a
release's custom labels across upgrades and copies the target revision's on a rollback, so the preflight knows
its own releases after either, and after a `pulumi import`."""
HELM_OWNER_LABEL = "owner"
"""Helm v3's label on its release Secrets (`helm`), beside `name`, `status` and `version`."""
