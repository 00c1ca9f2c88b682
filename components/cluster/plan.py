"""Pure planning for the cluster layer: node group shapes, add-on settings, kubeconfig. No Pulumi here."""

from __future__ import annotations

import json
from typing import Any

from components import versions
from components.cluster.config import ClusterConfig, Taint

SYSTEM_LABEL_KEY = "node-role/system"
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


def system_labels(cfg: ClusterConfig) -> dict[str, str]:
    return {**cfg.system_node_group.labels, SYSTEM_LABEL_KEY: "true"}


def addon_versions(cfg: ClusterConfig) -> dict[str, str]:
    """Pinned add-on versions for the cluster's Kubernetes minor, with the stack's overrides on top."""
    return {**versions.ADDON_VERSIONS[cfg.version], **{str(k): v for k, v in cfg.addon_versions.items()}}


def coredns_configuration() -> dict[str, Any]:
    """CoreDNS runs on the tainted system group: it must start before any Karpenter node exists."""
    return {
        "tolerations": [
            {"key": CRITICAL_ADDONS_TAINT.key, "operator": "Exists", "effect": "NoSchedule"},
        ],
        "nodeSelector": {SYSTEM_LABEL_KEY: "true"},
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
