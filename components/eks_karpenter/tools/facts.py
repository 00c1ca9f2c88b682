"""An adopted cluster's facts, recorded from the live cluster (`eks-karpenter preflight --record FILE`) and read
back by the offline plan (`plan --facts FILE`) in place of the mocks' placeholders: its version and access
settings, the node groups the preflight reads, and what the cluster's API answered.

The file is small, plain JSON, and holds nothing secret (no certificate, no token): commit it beside the stack
file, or record it in CI before the plan.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from eks_karpenter.platform.adopted import IN_CLUSTER_TOKEN, NODE_GROUP_METADATA_TOKEN
from eks_karpenter.platform.preflight.hook import node_group_metadata
from eks_karpenter.platform.preflight.lookup import in_cluster_request, node_group_names
from eks_karpenter.platform.stack import StackConfig

GET_CLUSTER = "aws:eks/getCluster:getCluster"
GET_NODE_GROUP = "aws:eks/getNodeGroup:getNodeGroup"
FORMAT = 1


def record_facts(cfg: StackConfig, project: str, stack: str, eks: Any,
                 ask_cluster: Callable[[dict[str, Any]], dict[str, Any]], ec2: Any = None) -> dict[str, Any]:
    """What the preflight reads of `cfg`'s adopted cluster, from `eks` (a boto3 EKS client) and `ask_cluster` (the
    in-cluster look-up, asked as the preflight asks it); with teams, every node group's taints and metadata
    options too (`ec2`: a boto3 EC2 client, for their launch templates)."""
    name = cfg.cluster.name
    found = eks.describe_cluster(name=name)["cluster"]
    vpc = found.get("resourcesVpcConfig", {})
    cluster = {"version": found.get("version"),
               "authenticationMode": found.get("accessConfig", {}).get("authenticationMode", "CONFIG_MAP"),
               "endpointPublicAccess": vpc.get("endpointPublicAccess", True),
               "publicAccessCidrs": vpc.get("publicAccessCidrs", []),
               "clusterSecurityGroupId": vpc.get("clusterSecurityGroupId"), "vpcId": vpc.get("vpcId")}
    groups: dict[str, Any] = {}
    for group in node_group_names(cfg):
        try:
            ng = eks.describe_nodegroup(clusterName=name, nodegroupName=group)["nodegroup"]
        except Exception as exc:  # botocore's ResourceNotFoundException, AccessDenied...
            groups[group] = {"error": str(exc).splitlines()[0]}
            continue
        scaling = ng.get("scalingConfig", {})
        groups[group] = {"capacityType": ng.get("capacityType", "ON_DEMAND"), "minSize": scaling.get("minSize"),
                         "maxSize": scaling.get("maxSize"), "desiredSize": scaling.get("desiredSize"),
                         "nodeRoleArn": ng.get("nodeRole"), "subnetIds": ng.get("subnets", []),
                         "status": ng.get("status", "ACTIVE")}
    answer = None
    if cfg.cluster.preflight:
        ca = found.get("certificateAuthority", {}).get("data", "")
        answer = ask_cluster(in_cluster_request(cfg, project, stack, found.get("endpoint", ""), ca))
    recorded = {"format": FORMAT, "cluster": name, "recorded": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "clusterFacts": cluster, "nodeGroups": groups, "inCluster": answer}
    if cfg.access.teams and ec2 is not None:
        recorded["nodeGroupMetadata"] = node_group_metadata({"clusterName": name, "region": cfg.region}, eks, ec2)
    return recorded


class FactsFileError(Exception):
    """A facts file that cannot be read as one: the message names the file and what is wrong."""


def read_facts(text: str, source: str, cluster: str) -> dict[str, Any]:
    """A facts file's content, checked: JSON of this format, recorded from `cluster`."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise FactsFileError(f"{source}: not JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise FactsFileError(f"{source}: not a facts file of format {FORMAT} (record one with `eks-karpenter "
                             "preflight --stack <stack> --record FILE`)")
    if data.get("cluster") != cluster:
        raise FactsFileError(f"{source}: recorded from cluster {data.get('cluster')!r}, but the stack adopts "
                             f"{cluster!r}")
    return data


def facts_invoke_results(data: Mapping[str, Any], region: str) -> dict[str, Callable[[Mapping[str, Any]],
                                                                                     dict[str, Any]]]:
    """Answers for the preflight's look-ups from a recorded facts file: each recorded fact replaces the mocks'
    placeholder (so it is no longer labelled one); a node group the file does not hold stays a placeholder."""
    from eks_karpenter.tools.engine.mocks import LookupFailed, placeholder_answer

    facts = data.get("clusterFacts") or {}
    groups = data.get("nodeGroups") or {}

    def cluster(args: Mapping[str, Any]) -> dict[str, Any]:
        found = placeholder_answer(GET_CLUSTER, dict(args), region, recorded=True)
        if facts.get("version"):
            found["version"] = facts["version"]
        if facts.get("authenticationMode"):
            found["accessConfigs"] = [{"authenticationMode": facts["authenticationMode"]}]
        vpc = dict(found["vpcConfig"])
        for key in ("endpointPublicAccess", "publicAccessCidrs", "clusterSecurityGroupId", "vpcId"):
            if facts.get(key) is not None:
                vpc[key] = facts[key]
        found["vpcConfig"] = vpc
        return found

    def node_group(args: Mapping[str, Any]) -> dict[str, Any]:
        recorded = groups.get(str(args.get("nodeGroupName")))
        if recorded is None:
            return placeholder_answer(GET_NODE_GROUP, dict(args), region)
        if "error" in recorded:
            raise LookupFailed(str(recorded["error"]))
        found = placeholder_answer(GET_NODE_GROUP, dict(args), region, recorded=True)
        found["scalingConfigs"] = [{"minSize": recorded["minSize"], "maxSize": recorded["maxSize"],
                                    "desiredSize": recorded["desiredSize"]}]
        for key in ("capacityType", "nodeRoleArn", "subnetIds", "status"):
            if recorded.get(key) is not None:
                found[key] = recorded[key]
        return found

    results: dict[str, Callable[[Mapping[str, Any]], dict[str, Any]]] = {GET_CLUSTER: cluster,
                                                                          GET_NODE_GROUP: node_group}
    answer = data.get("inCluster")
    if isinstance(answer, dict):
        results[IN_CLUSTER_TOKEN] = lambda args: dict(answer)
    metadata = data.get("nodeGroupMetadata")
    if isinstance(metadata, dict):
        results[NODE_GROUP_METADATA_TOKEN] = lambda args: dict(metadata)
    return results
