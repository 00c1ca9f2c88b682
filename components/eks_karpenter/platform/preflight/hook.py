"""Who answers the in-cluster look-ups (the preflight's, and which CRDs a cluster has): the cluster's API server
(a real run), or the offline plan's mocks, which install themselves here for the length of a run."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from eks_karpenter.platform.adopted import ADDON_VERSIONS_TOKEN, CRDS_TOKEN, NODE_GROUP_METADATA_TOKEN

InClusterLookup = Callable[[str, dict[str, Any]], dict[str, Any]]
"""(token, request) -> answer; the token names the look-up (`IN_CLUSTER_TOKEN`, `CRDS_TOKEN`)."""


def _real(token: str, request: dict[str, Any]) -> dict[str, Any]:
    from eks_karpenter.platform.preflight import probe

    if token == ADDON_VERSIONS_TOKEN:
        return addon_versions(request)
    if token == NODE_GROUP_METADATA_TOKEN:
        return node_group_metadata(request)
    return probe.crds(request) if token == CRDS_TOKEN else probe.probe(request)


def addon_versions(request: dict[str, Any], client: Any = None) -> dict[str, Any]:
    """Every version EKS offers of `addonName` for `kubernetesVersion` in `region`, with the credentials the
    program runs with: `{"versions": [...]}`, or `{"error": ...}` when EKS cannot be asked."""
    try:
        if client is None:
            import boto3

            client = boto3.client("eks", region_name=request["region"] or None)
        versions: list[str] = []
        pages = client.get_paginator("describe_addon_versions").paginate(
            addonName=request["addonName"], kubernetesVersion=request["kubernetesVersion"])
        for page in pages:
            versions += [v["addonVersion"] for addon in page.get("addons", []) for v in addon.get("addonVersions", [])]
        return {"versions": versions}
    except Exception as exc:  # no credentials, no network, no permission: the caller says what it could not check
        return {"error": f"{type(exc).__name__}: {exc}"}


def node_group_metadata(request: dict[str, Any], eks: Any = None, ec2: Any = None) -> dict[str, Any]:
    """Every managed node group of cluster `clusterName` with its taints and the metadata options of the launch
    template version it launches from: `{"groups": {name: {"taints", "httpTokens", "hopLimit", "source"}}}`
    (no `httpTokens`/`hopLimit`: not set, EKS's or EC2's default), or `{"error": ...}` when AWS cannot be
    asked. The request's `roleArn`/`profile` are the stack's AWS identity: the groups are read in its account."""
    try:
        if eks is None or ec2 is None:
            from eks_karpenter.platform.cluster_access import aws_session

            session = aws_session(request["region"], request.get("roleArn"), request.get("profile"))
            eks = eks or session.client("eks")
            ec2 = ec2 or session.client("ec2")
        cluster = request["clusterName"]
        names = [n for page in eks.get_paginator("list_nodegroups").paginate(clusterName=cluster)
                 for n in page.get("nodegroups", [])]
        groups: dict[str, Any] = {}
        for name in names:
            group = eks.describe_nodegroup(clusterName=cluster, nodegroupName=name)["nodegroup"]
            found: dict[str, Any] = {"taints": [{"key": t.get("key", ""), "effect": t.get("effect", "")}
                                                for t in group.get("taints") or []],
                                     "source": "EKS's default launch template"}
            template = group.get("launchTemplate") or {}
            if template.get("id") or template.get("name"):
                version = str(template.get("version") or "$Default")
                ask = {"LaunchTemplateId": template["id"]} if template.get("id") else \
                    {"LaunchTemplateName": template["name"]}
                data = ec2.describe_launch_template_versions(**ask, Versions=[version])["LaunchTemplateVersions"]
                options = (data[0].get("LaunchTemplateData") or {}).get("MetadataOptions") or {} if data else {}
                found["source"] = f"launch template {template.get('id') or template.get('name')} version {version}"
                found["httpTokens"] = options.get("HttpTokens")
                found["hopLimit"] = options.get("HttpPutResponseHopLimit")
            groups[name] = found
        return {"groups": groups}
    except Exception as exc:  # no credentials, no network, no permission: the caller says what it could not check
        return {"error": f"{type(exc).__name__}: {exc}"}


_lookup: InClusterLookup = _real


def set_in_cluster_lookup(lookup: InClusterLookup | None) -> InClusterLookup:
    """Answer the in-cluster look-ups with `lookup` (None: the API server again); returns the previous one."""
    global _lookup
    previous, _lookup = _lookup, lookup or _real
    return previous


def in_cluster(request: dict[str, Any], token: str) -> dict[str, Any]:
    """The answer of the in-cluster look-up `token` to `request` (see lookup.py for what each asks)."""
    return _lookup(token, request)


def offline() -> bool:
    """Whether the look-ups are answered offline (the plan engine's mocks), not by a cluster and AWS."""
    return _lookup is not _real
