"""Pure planning for the cluster layer: node group shapes, add-on settings, kubeconfig. No Pulumi here."""

from __future__ import annotations

import json
from typing import Any

from eks_karpenter import versions
from eks_karpenter.labels import SYSTEM_NODE_LABEL
from eks_karpenter.platform.cluster.config import ApiAccessConfig, ClusterConfig, Taint

"""Label on the system node group; Karpenter's controller and CoreDNS are pinned to it."""
CRITICAL_ADDONS_TAINT = Taint(key="CriticalAddonsOnly", value="true", effect="NoSchedule")

ADDONS = ("vpc-cni", "kube-proxy", "coredns", "eks-pod-identity-agent")

# EKS managed node groups spell taint effects differently from Kubernetes.
_MNG_EFFECT = {"NoSchedule": "NO_SCHEDULE", "PreferNoSchedule": "PREFER_NO_SCHEDULE", "NoExecute": "NO_EXECUTE"}


def mng_taint(taint: Taint) -> dict[str, str]:
    """A Kubernetes taint in the EKS node group API's spelling."""
    out = {"key": taint.key, "effect": _MNG_EFFECT[taint.effect]}
    if taint.value is not None:
        out["value"] = taint.value
    return out


SYSTEM_GROUP = "system"
"""Name prefix of the system node group within the cluster."""
BOTTLEROCKET_OS_VOLUME_GIB = 4


def node_group_name_prefix(group: str) -> str:
    """A managed node group's name prefix. EKS names must be unique in the cluster, so a fixed name forces a
    replacement (new instance types, subnets or AMI type) to delete the old group first; with a prefix the new
    group is created, and its nodes ready, before the old one drains."""
    return f"{group}-"


def _volume(device: str, size_gib: int) -> dict[str, Any]:
    return {"device_name": device, "ebs": {
        "volume_size": size_gib, "volume_type": "gp3", "encrypted": "true", "delete_on_termination": "true"}}


def node_volumes(ami_type: str, disk_size: int) -> list[tuple[str, int]]:
    """(device, GiB) of each gp3 volume a managed node group's node gets: Bottlerocket keeps its OS on a volume
    of its own, beside the `diskSize` data volume."""
    if ami_type.startswith("BOTTLEROCKET"):
        return [("/dev/xvda", BOTTLEROCKET_OS_VOLUME_GIB), ("/dev/xvdb", disk_size)]
    return [("/dev/xvda", disk_size)]


def launch_template(*, ami_type: str, disk_size: int, hop_limit: int, node_name: str,
                    tags: dict[str, str]) -> dict[str, Any]:
    """Launch template inputs of a managed node group: IMDSv2 only, an encrypted gp3 root (Bottlerocket: OS
    plus data) volume, and the stack's tags on the instances and volumes (a node group's own tags reach neither).
    No AMI id, instance type or user data: EKS keeps choosing the AMI for the group's `amiType` and version.
    Any change here (tags included) is a new template version, which EKS rolls out to the group's nodes."""
    volumes = [_volume(device, size) for device, size in node_volumes(ami_type, disk_size)]
    return {
        "metadata_options": {"http_endpoint": "enabled", "http_tokens": "required",
                             "http_put_response_hop_limit": hop_limit},
        "block_device_mappings": volumes,
        "tag_specifications": [{"resource_type": kind, "tags": {**tags, "Name": node_name}}
                               for kind in ("instance", "volume")],
    }


def control_plane_log_group(cluster_name: str) -> str:
    """The log group EKS writes control-plane logs to (fixed by EKS)."""
    return f"/aws/eks/{cluster_name}/cluster"


def secrets_key_policy(partition: str, account_id: str, region: str) -> dict[str, Any]:
    """Key policy of the secrets envelope-encryption key, explicit rather than KMS's implicit default.

    The account statement is KMS's default one: it keeps the key administrable (no lockout: IAM policies of the
    account decide who manages it). The second lets principals of this account use the key only through EKS
    in this region, which is how the cluster role encrypts and decrypts secrets and how `CreateCluster` makes
    its grant, so secrets encryption does not hinge on the deploying role's own KMS permissions.
    """
    return {
        "Version": "2012-10-17",
        "Id": "eks-secrets-encryption",
        "Statement": [
            {
                "Sid": "EnableAccountAdministration",
                "Effect": "Allow",
                "Principal": {"AWS": f"arn:{partition}:iam::{account_id}:root"},
                "Action": "kms:*",
                "Resource": "*",
            },
            {
                "Sid": "AllowUseThroughEks",
                "Effect": "Allow",
                "Principal": {"AWS": "*"},
                "Action": ["kms:Encrypt", "kms:Decrypt", "kms:ReEncrypt*", "kms:GenerateDataKey*",
                           "kms:DescribeKey", "kms:CreateGrant", "kms:ListGrants"],
                "Resource": "*",
                "Condition": {"StringEquals": {"kms:CallerAccount": account_id,
                                               "kms:ViaService": f"eks.{region}.amazonaws.com"}},
            },
        ],
    }


def system_labels(cfg: ClusterConfig) -> dict[str, str]:
    return {**cfg.system_node_group.labels, SYSTEM_NODE_LABEL: "true"}


def addon_versions(cfg: ClusterConfig) -> dict[str, str]:
    """Pinned add-on versions for the cluster's Kubernetes minor, with the stack's overrides on top."""
    return {**versions.ADDON_VERSIONS[cfg.version], **{str(k): v for k, v in cfg.addon_versions.items()}}


def coredns_configuration() -> dict[str, Any]:
    """CoreDNS runs on the tainted system group: it must start before any Karpenter node exists."""
    return {
        "tolerations": [
            {"key": CRITICAL_ADDONS_TAINT.key, "operator": "Exists", "effect": "NoSchedule"},
        ],
        "nodeSelector": {SYSTEM_NODE_LABEL: "true"},
        "replicaCount": 2,
    }


def exec_kubeconfig(cluster_name: str, endpoint: str, ca_data: str, region: str, *, role_arn: str | None = None,
                    profile: str | None = None) -> str:
    """A kubeconfig that authenticates with `aws eks get-token`, as `role_arn` and/or with `profile` if given.

    Without either it uses whatever AWS credentials the process has: that is the one to hand to other stacks.
    """
    args = ["eks", "get-token", "--cluster-name", cluster_name, "--region", region, "--output", "json"]
    if role_arn:
        args += ["--role-arn", role_arn]
    if profile:
        args += ["--profile", profile]
    user = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": "aws",
            "args": args,
        }
    }
    return json.dumps({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": cluster_name, "cluster": {"server": endpoint, "certificate-authority-data": ca_data}}],
        "contexts": [{"name": cluster_name, "context": {"cluster": cluster_name, "user": cluster_name}}],
        "current-context": cluster_name,
        "users": [{"name": cluster_name, "user": user}],
    }, sort_keys=True)


def kubeconfig_cluster(kubeconfig_json: str) -> dict[str, Any]:
    """The first cluster entry of a kubeconfig (server, certificate-authority-data)."""
    clusters = json.loads(kubeconfig_json).get("clusters") or [{}]
    return dict(clusters[0].get("cluster") or {})


API_PORT = 443
"""The API server's port on the cluster security group."""


def _source_key(source: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in source.lower()).strip("-")


def api_ingress_rules(api: ApiAccessConfig, cluster_name: str) -> list[tuple[str, dict[str, Any]]]:
    """(resource-name key, inputs) of one tcp/443 ingress rule on the cluster security group per admitted source,
    keyed by the source itself so that list order never renames a rule. One rule per source: adding or removing
    a source creates or deletes a rule, and no change here ever reaches the cluster itself."""
    base = {"ip_protocol": "tcp", "from_port": API_PORT, "to_port": API_PORT}
    rules: list[tuple[str, dict[str, Any]]] = []
    for cidr in api.cidrs:
        family = "cidr_ipv6" if ":" in cidr else "cidr_ipv4"
        rules.append((f"api-from-{_source_key(cidr)}", {
            **base, family: cidr, "description": f"{cidr} to the {cluster_name} API server"}))
    for group in api.security_group_ids:
        rules.append((f"api-from-{group}", {
            **base, "referenced_security_group_id": group,
            "description": f"{group} to the {cluster_name} API server"}))
    return rules


EKS_CLUSTER_TYPE = "aws:eks/cluster:Cluster"
"""The type of the control plane resource pulumi-eks' Cluster component creates."""
IAM_ROLE_TYPE = "aws:iam/role:Role"
"""The type of the roles pulumi-eks' Cluster component creates (its cluster service role)."""


def without_creator_admin(props: dict[str, Any]) -> dict[str, Any]:
    """The inputs of pulumi-eks' `aws.eks.Cluster` with EKS's bootstrap creator entry turned off.

    pulumi-eks 4.x hard-codes `accessConfig.bootstrapClusterCreatorAdminPermissions: true` (and lists it in the
    cluster's ignoreChanges). The field is ForceNew in the provider, but that ignoreChanges keeps a deployed
    cluster from seeing the new value: only clusters created from now on start without the creator entry.
    Every identity that deploys is then an explicit, declared access entry (`access.deployers`)."""
    access = dict(props.get("accessConfig") or {})
    access["bootstrapClusterCreatorAdminPermissions"] = False
    return {**props, "accessConfig": access}
