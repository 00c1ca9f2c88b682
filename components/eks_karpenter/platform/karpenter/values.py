"""Helm values of the `karpenter` and `karpenter-crd` charts, as pure functions of the config.

Install shape (wired by the Karpenter component):
- `karpenter-crd` (same version as the controller chart) installs and *upgrades* the CRDs as templates;
- `karpenter` is installed with `skip_crds=True` (helm.v3.Release): its `crds/` directory is only ever
  installed by Helm, never upgraded, and would fight the CRD chart over ownership. Nothing else about CRDs
  belongs in the controller values.

Helm merges these values over the chart's defaults key by key (maps merge, lists are replaced), so every map
set here is complete for what it configures. The image is not set: each chart version pins its own image tag
and digest, which is what a per-stack `version` override should get.
"""

from __future__ import annotations

import re
from typing import Any

from eks_karpenter.labels import HOSTNAME, IRSA_ANNOTATION, NODEPOOL_LABEL, OS, SYSTEM_NODE_LABEL, ZONE
from eks_karpenter.platform.karpenter.config import ControllerResources, KarpenterConfig, ResourceList
from eks_karpenter.platform.karpenter.releases import omitted_values, release_of

CRITICAL_ADDONS_TAINT_KEY = "CriticalAddonsOnly"
"""Taint key of the system node group; the controller tolerates it."""
SERVICE_ACCOUNT = "karpenter"
"""Controller service account name (Pod Identity association / IRSA trust policy subject)."""
FULLNAME = "karpenter"
"""`fullnameOverride`: Deployment, Service and ClusterRole names stay `karpenter` whatever the release name."""
PDB_NAME = "karpenter"
"""Name of the controller's PodDisruptionBudget."""

_QUEUE_NAME = re.compile(r"^[A-Za-z0-9_-]{1,80}$")
_ROLE_ARN = re.compile(r"^arn:aws[a-z-]*:iam::[0-9]{12}:role/[A-Za-z0-9_+=,.@/-]+$")
_CLUSTER_NAME = re.compile(r"^[0-9A-Za-z][A-Za-z0-9\-_]{0,99}$")


def controller_values(cfg: KarpenterConfig, *, cluster_name: str, cluster_endpoint: str,
                      interruption_queue_name: str | None, irsa_role_arn: str | None,
                      system_node_group: bool = True, region: str | None = None) -> dict[str, Any]:
    """Values of the `karpenter` chart.

    `interruption_queue_name` is the SQS queue *name* (None disables interruption handling); `irsa_role_arn`
    is the controller role, required with `identity: irsa` and refused otherwise. `system_node_group` is False
    on a cluster this stack does not create: its nodes lack the system group's label, so the controller must
    not require it. `region` becomes the controller's `AWS_REGION`: without it the controller asks the instance
    metadata service, which a pod cannot reach on nodes with an IMDS hop limit of 1 (the default). The keys follow
    `cfg.version`'s chart (`releases.omitted_values`). Raises ValueError on inputs the chart would accept but the
    controller would choke on, and on a Karpenter release this library does not support.
    """
    if not _CLUSTER_NAME.fullmatch(cluster_name):
        raise ValueError(f"cluster_name is not an EKS cluster name: {cluster_name!r}")
    if not re.fullmatch(r"https://[^/\s]+", cluster_endpoint):
        raise ValueError(f"cluster_endpoint must be the cluster's https:// API server URL: {cluster_endpoint!r}")

    release = release_of(cfg.version)
    settings: dict[str, Any] = {
        "clusterName": cluster_name,
        "clusterEndpoint": cluster_endpoint,  # given, so the controller needs no DescribeCluster at start
        "featureGates": cfg.feature_gates.dump(),
        "enableZonalShift": cfg.zonal_shift,
        **_settings(cfg),
    }
    # Keys the release's chart does not have are left out: the config rules refuse setting them for it.
    for dotted in omitted_values(release):
        *parents, key = dotted.removeprefix("settings.").split(".")
        target = settings
        for parent in parents:
            target = target[parent]
        del target[key]
    if interruption_queue_name is not None:
        settings["interruptionQueue"] = _queue_name(interruption_queue_name)

    return {
        "fullnameOverride": FULLNAME,
        "replicas": cfg.replicas,
        # maxUnavailable, not minAvailable: the chart has no minAvailable key, and a drain of a system node must
        # never be blocked by the autoscaler (a standby replica takes over the lease).
        "podDisruptionBudget": {"name": PDB_NAME, "maxUnavailable": 1},
        "priorityClassName": cfg.priority_class_name,
        "dnsPolicy": cfg.dns_policy,
        "logLevel": cfg.log_level,
        "serviceAccount": _service_account(cfg, irsa_role_arn),
        "controller": {"resources": _resources(cfg.resources),
                       # The region is the one thing the controller would read from IMDS (cluster name and
                       # endpoint are settings above); credentials come from Pod Identity or IRSA, not IMDS.
                       **({"env": [{"name": "AWS_REGION", "value": region}]} if region else {})},
        "nodeSelector": {OS: "linux", **cfg.node_selector},
        "tolerations": [{"key": CRITICAL_ADDONS_TAINT_KEY, "operator": "Exists"},
                        *(t.dump() for t in cfg.tolerations)],
        "affinity": _affinity(cfg, system_node_group),
        # ScheduleAnyway, always: the scheduler still spreads replicas over zones when it can, but a replica is
        # never left Pending because the eligible nodes (system group or Fargate) happen to sit in fewer zones
        # than wanted. A Pending autoscaler cannot add the capacity it is waiting for (Karpenter never runs on
        # its own nodes), and leader election means one running replica is a working autoscaler. The required
        # hostname anti-affinity already keeps replicas off a shared node.
        "topologySpreadConstraints": [
            {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway"},
        ],
        "settings": settings,
    }


def crd_values() -> dict[str, Any]:
    """Values of the `karpenter-crd` chart.

    The CRDs are kept when the release is uninstalled: deleting a CRD deletes every NodePool, NodeClaim and
    EC2NodeClass with it, which drains and terminates every Karpenter node at once. Upgrades still update them.
    """
    return {"additionalAnnotations": {"helm.sh/resource-policy": "keep"}}


def _settings(cfg: KarpenterConfig) -> dict[str, Any]:
    s = cfg.settings
    return {
        "batchMaxDuration": s.batch_max_duration,
        "batchIdleDuration": s.batch_idle_duration,
        "preferencePolicy": s.preference_policy,
        "minValuesPolicy": s.min_values_policy,
        "vmMemoryOverheadPercent": s.vm_memory_overhead_percent,
        "reservedENIs": str(s.reserved_enis),  # a string in the chart (a 0 number would be dropped by `with`)
        "isolatedVPC": s.isolated_vpc,
        "amiRefreshInterval": s.ami_refresh_interval,
        "subnetRefreshInterval": s.subnet_refresh_interval,
    }


def _queue_name(name: str) -> str:
    if name.startswith("arn:"):
        raise ValueError(f"interruption queue must be the SQS queue name, not its ARN: {name!r}")
    if "://" in name or "/" in name:
        raise ValueError(f"interruption queue must be the SQS queue name, not its URL: {name!r}")
    if not _QUEUE_NAME.fullmatch(name):
        raise ValueError("interruption queue must be a standard SQS queue name (1-80 letters, digits, '-' or "
                         f"'_'): {name!r}")
    return name


def _service_account(cfg: KarpenterConfig, irsa_role_arn: str | None) -> dict[str, Any]:
    account: dict[str, Any] = {"create": True, "name": SERVICE_ACCOUNT}
    if cfg.identity == "irsa":
        if not irsa_role_arn:
            raise ValueError("identity is irsa but no controller role ARN was given")
        if not _ROLE_ARN.fullmatch(irsa_role_arn):
            raise ValueError(f"not an IAM role ARN: {irsa_role_arn!r}")
        account["annotations"] = {IRSA_ANNOTATION: irsa_role_arn}
    elif irsa_role_arn is not None:
        raise ValueError("an IRSA role ARN was given but identity is podIdentity (no annotation is wanted)")
    return account


def _resources(resources: ControllerResources) -> dict[str, Any]:
    def amounts(resource_list: ResourceList) -> dict[str, str]:
        return {k: v for k, v in (("cpu", resource_list.cpu), ("memory", resource_list.memory)) if v is not None}

    out = {"requests": amounts(resources.requests), "limits": amounts(resources.limits)}
    return {k: v for k, v in out.items() if v}


def _affinity(cfg: KarpenterConfig, system_node_group: bool) -> dict[str, Any]:
    # One node selector term: its expressions are ANDed (separate terms would be ORed).
    expressions: list[dict[str, Any]] = [{"key": NODEPOOL_LABEL, "operator": "DoesNotExist"}]
    if system_node_group and not cfg.controller_on_fargate:
        # The system node group's label: the controller requires it on a created cluster (unless on Fargate).
        key, value = SYSTEM_NODE_LABEL, "true"
        expressions.append({"key": key, "operator": "In", "values": [value]})
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": expressions}],
            },
        },
        # As upstream: at most one replica per node; the chart adds the pod label selector to the term.
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": HOSTNAME}],
        },
    }
