"""The vocabulary of both APIs: versions, the fields each legacy object may contain, the values v1
accepts, and what the v1alpha5/v1alpha1 webhooks defaulted (which v1 no longer does)."""

from __future__ import annotations

import re
from typing import Any

from eks_karpenter.labels import (
    ARCH,
    CAPACITY_TYPE,
    INSTANCE_CATEGORY,
    INSTANCE_FAMILY,
    INSTANCE_GENERATION,
    INSTANCE_TYPE,
    MANAGED_BY,
    OS,
    PROVISIONER_NAME_LABEL,
    RESTRICTED_TAG_KEYS,
)

PROVISIONER_API = "karpenter.sh/v1alpha5"
TEMPLATE_API = "karpenter.k8s.aws/v1alpha1"
NODEPOOL_API = "karpenter.sh/v1"
NODECLASS_API = "karpenter.k8s.aws/v1"
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


# What the v1alpha5 defaulting webhook added to a Provisioner (v1 adds nothing).
LEGACY_DEFAULT_REQUIREMENTS: tuple[tuple[str, dict[str, Any]], ...] = (
    (CAPACITY_TYPE, {"key": CAPACITY_TYPE, "operator": "In", "values": ["on-demand"]}),
    (ARCH, {"key": ARCH, "operator": "In", "values": ["amd64"]}),
    (OS, {"key": OS, "operator": "In", "values": ["linux"]}),
)
LEGACY_DEFAULT_INSTANCE_REQUIREMENTS = (
    {"key": INSTANCE_CATEGORY, "operator": "In", "values": ["c", "m", "r"]},
    {"key": INSTANCE_GENERATION, "operator": "Gt", "values": ["2"]},
)
INSTANCE_SELECTING_KEYS = frozenset({INSTANCE_TYPE, INSTANCE_FAMILY, INSTANCE_CATEGORY, INSTANCE_GENERATION})

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
RESTRICTED_TAGS = (*RESTRICTED_TAG_KEYS, PROVISIONER_NAME_LABEL, MANAGED_BY)

V1_VOLUME_SIZE = re.compile(r"^((?:[1-9][0-9]{0,3}|[1-4][0-9]{4}|[5][0-8][0-9]{3}|59000)Gi"
                            r"|(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|[6][0-3][0-9]{3}|64000)G"
                            r"|([1-9]||[1-5][0-7]|58)Ti|([1-9]||[1-5][0-9]|6[0-3]|64)T)$")
QUANTITY = re.compile(r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]"
                      r"|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$")
NAME = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
PLACEHOLDER = re.compile(r"\$\{?[A-Z_][A-Z0-9_]*\}?")
