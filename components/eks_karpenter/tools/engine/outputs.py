"""What the providers would return for a registration: ids, ARNs and the other outputs a program reads.

Pure data in, data out, deterministic: the same inputs give the same state, byte for byte. Two rules keep the
offline plan as informative as a preview:

- every output a later resource takes as an input is filled with a value of the real shape (an alias gets its
  key's `keyId`, a route its NAT gateway's `nat-...` id, a pool's class the role's name), never left empty;
- an id changes exactly when the resource would be replaced: it is derived from the resource's name and the
  values of its replacing inputs (`tools/engine/replacements.py`), so replacing a VPC gives it a new id, which
  reaches its subnets' `vpcId`, and from there the cluster's subnets, just as a real `pulumi up` would.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable
from typing import Any

from eks_karpenter.arns import EXAMPLE_ACCOUNT, partition_of
from eks_karpenter.tools.engine.replacements import REPLACE_ON_CHANGE, replacing_paths

ACCOUNT_ID = EXAMPLE_ACCOUNT  # the offline plan runs as the example account of the shipped stacks
"""Placeholder account: every ARN in an offline plan uses it."""

CA_DATA = "LS0tLS1CRUdJTiBQTEFDRUhPTERFUiBDQS0tLS0t"  # base64 of a placeholder PEM header


def digest(text: str, size: int = 17) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:size]


def partition(region: str) -> str:
    """The ARN partition of a region, so placeholders in every partition's plans are well-formed (the one table
    of partitions, `eks_karpenter.arns`)."""
    return partition_of(region)


# Resource id prefixes AWS uses, so placeholders read like the real thing.
ID_PREFIX = {
    "aws:ec2/vpc:Vpc": "vpc",
    "aws:ec2/subnet:Subnet": "subnet",
    "aws:ec2/eip:Eip": "eipalloc",
    "aws:ec2/natGateway:NatGateway": "nat",
    "aws:ec2/internetGateway:InternetGateway": "igw",
    "aws:ec2/routeTable:RouteTable": "rtb",
    "aws:ec2/routeTableAssociation:RouteTableAssociation": "rtbassoc",
    "aws:ec2/securityGroup:SecurityGroup": "sg",
    "aws:ec2/securityGroupRule:SecurityGroupRule": "sgrule",
    "aws:ec2/launchTemplate:LaunchTemplate": "lt",
    "aws:ec2/networkInterface:NetworkInterface": "eni",
}

# ARN shapes by type: (service, regional, resource path template over the state and `{id}`).
ARN = {
    "aws:iam/role:Role": ("iam", False, "role{path}{name}"),
    "aws:iam/policy:Policy": ("iam", False, "policy{path}{name}"),
    "aws:iam/instanceProfile:InstanceProfile": ("iam", False, "instance-profile{path}{name}"),
    "aws:iam/serviceLinkedRole:ServiceLinkedRole": ("iam", False, "role/aws-service-role/{awsServiceName}/{name}"),
    "aws:iam/openIdConnectProvider:OpenIdConnectProvider": ("iam", False, "oidc-provider/{host}"),
    "aws:sqs/queue:Queue": ("sqs", True, "{name}"),
    "aws:cloudwatch/eventRule:EventRule": ("events", True, "rule/{name}"),
    "aws:cloudwatch/logGroup:LogGroup": ("logs", True, "log-group:{name}"),
    "aws:kms/key:Key": ("kms", True, "key/{id}"),
    "aws:kms/alias:Alias": ("kms", True, "{name}"),
    "aws:ec2/vpc:Vpc": ("ec2", True, "vpc/{id}"),
    "aws:ec2/subnet:Subnet": ("ec2", True, "subnet/{id}"),
    "aws:ec2/internetGateway:InternetGateway": ("ec2", True, "internet-gateway/{id}"),
    "aws:ec2/routeTable:RouteTable": ("ec2", True, "route-table/{id}"),
    "aws:ec2/securityGroup:SecurityGroup": ("ec2", True, "security-group/{id}"),
    "aws:ec2/launchTemplate:LaunchTemplate": ("ec2", True, "launch-template/{id}"),
    "aws:ec2/eip:Eip": ("ec2", True, "elastic-ip/{id}"),
    "aws:ec2/natGateway:NatGateway": ("ec2", True, "natgateway/{id}"),
    "aws:eks/cluster:Cluster": ("eks", True, "cluster/{name}"),
    "aws:eks/nodeGroup:NodeGroup": ("eks", True, "nodegroup/{clusterName}/{nodeGroupName}/{generation}"),
    "aws:eks/addon:Addon": ("eks", True, "addon/{clusterName}/{addonName}/{generation}"),
    "aws:eks/fargateProfile:FargateProfile": ("eks", True, "fargateprofile/{clusterName}/{fargateProfileName}/"
                                                             "{generation}"),
    "aws:eks/accessEntry:AccessEntry": ("eks", True, "access-entry/{clusterName}/role/{generation}"),
    "aws:eks/podIdentityAssociation:PodIdentityAssociation": ("eks", True, "podidentityassociation/{clusterName}/"
                                                                           "a-{generation}"),
    "aws:autoscaling/group:Group": ("autoscaling", True, "autoScalingGroup:{generation}:autoScalingGroupName/{id}"),
}

# Types whose physical name Pulumi auto-generates (name + 7 random hex) when the program gives none.
AUTONAMED_FIELD = {
    "aws:iam/role:Role": "name",
    "aws:iam/policy:Policy": "name",
    "aws:iam/instanceProfile:InstanceProfile": "name",
    "aws:iam/rolePolicy:RolePolicy": "name",
    "aws:sqs/queue:Queue": "name",
    "aws:cloudwatch/eventRule:EventRule": "name",
    "aws:cloudwatch/logGroup:LogGroup": "name",
    "aws:ec2/securityGroup:SecurityGroup": "name",
    "aws:ec2/launchTemplate:LaunchTemplate": "name",
    "aws:eks/fargateProfile:FargateProfile": "fargateProfileName",
}


def generation(typ: str, name: str, inputs: dict[str, Any]) -> str:
    """A digest that changes exactly when the resource is replaced: its name and its replacing inputs."""
    forcing = {p: _get(inputs, p) for p in replacing_paths(typ, REPLACE_ON_CHANGE)}
    return digest(f"{typ}::{name}::" + json.dumps(forcing, sort_keys=True, default=str))


def provider_state(typ: str, name: str, inputs: dict[str, Any], region: str,
                   import_id: str | None = None) -> tuple[str, dict[str, Any]]:
    """The id and output state a provider would return for one registration."""
    state = dict(inputs)
    gen = generation(typ, name, inputs)
    field = AUTONAMED_FIELD.get(typ)
    if field and not state.get(field) and not state.get(f"{field}Prefix"):
        state[field] = f"{name}-{digest(typ + '::' + name, 7)}"
    prefix = ID_PREFIX.get(typ)
    id_ = import_id or (f"{prefix}-{gen}" if prefix else _natural_id(typ, name, state, gen))
    fill = _COMPUTED.get(typ)
    if fill is not None:
        for key, value in fill(state, id_, gen, region).items():
            state.setdefault(key, value)
    shape = ARN.get(typ)
    if shape and "arn" not in state:
        service, regional, path = shape
        host = str(state.get("url", "")).removeprefix("https://")
        fields = {"path": "/", "host": host, **state, "id": id_, "generation": gen}
        fields["path"] = str(fields["path"]) if str(fields["path"]).endswith("/") else f"{fields['path']}/"
        resource = path.format_map(_Lenient(fields))
        state["arn"] = f"arn:{partition(region)}:{service}:{region if regional else ''}:{ACCOUNT_ID}:{resource}"
    if typ == "aws:kms/alias:Alias" and "targetKeyId" in state:
        state.setdefault("targetKeyArn", f"arn:{partition(region)}:kms:{region}:{ACCOUNT_ID}:key/"
                                         f"{state['targetKeyId']}")
    return id_, state


class _Lenient(dict[str, Any]):
    def __missing__(self, key: str) -> str:
        return key


def _get(value: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def _natural_id(typ: str, name: str, state: dict[str, Any], gen: str) -> str:
    """Ids the providers build from the resource's own fields rather than minting."""
    by_field = {
        "aws:iam/role:Role": "name", "aws:iam/policy:Policy": "arn", "aws:iam/instanceProfile:InstanceProfile": "name",
        "aws:sqs/queuePolicy:QueuePolicy": "queueUrl", "aws:cloudwatch/eventRule:EventRule": "name",
        "aws:cloudwatch/logGroup:LogGroup": "name", "aws:kms/alias:Alias": "name", "aws:eks/cluster:Cluster": "name",
    }
    field = by_field.get(typ)
    if field and state.get(field):
        return str(state[field])
    if typ == "aws:kms/key:Key":
        return str(uuid.UUID(hex=digest(gen, 32)))
    if typ == "aws:ec2/tag:Tag":
        return f"{state.get('resourceId')},{state.get('key')}"
    if typ == "aws:eks/addon:Addon":
        return f"{state.get('clusterName')}:{state.get('addonName')}"
    if typ == "aws:eks/accessEntry:AccessEntry":
        return f"{state.get('clusterName')}:{state.get('principalArn')}"
    if typ == "aws:iam/rolePolicyAttachment:RolePolicyAttachment":
        return f"{state.get('role')}-{digest(gen, 20)}"
    if typ == "aws:cloudwatch/eventTarget:EventTarget":
        return f"{state.get('rule')}-{state.get('targetId')}"
    if typ.startswith("kubernetes:") and isinstance(state.get("metadata"), dict):
        meta = state["metadata"]
        return f"{meta['namespace']}/{meta.get('name')}" if meta.get("namespace") else str(meta.get("name"))
    return f"{name}-{gen[:8]}"


def _kms_key(state: dict[str, Any], id_: str, gen: str, region: str) -> dict[str, Any]:
    return {"keyId": id_, "keyUsage": "ENCRYPT_DECRYPT", "customerMasterKeySpec": "SYMMETRIC_DEFAULT"}


def _role(state: dict[str, Any], id_: str, gen: str, region: str) -> dict[str, Any]:
    return {"uniqueId": f"AROA{gen.upper()}", "createDate": "2026-01-01T00:00:00Z"}


def _policy(state: dict[str, Any], id_: str, gen: str, region: str) -> dict[str, Any]:
    return {"policyId": f"ANPA{gen.upper()}", "attachmentCount": 1}


def _instance_profile(state: dict[str, Any], id_: str, gen: str, region: str) -> dict[str, Any]:
    return {"uniqueId": f"AIPA{gen.upper()}"}


def _service_linked_role(state: dict[str, Any], id_: str, gen: str, region: str) -> dict[str, Any]:
    service = str(state.get("awsServiceName", "service.amazonaws.com"))
    role = {"spot.amazonaws.com": "AWSServiceRoleForEC2Spot"}.get(service, f"AWSServiceRoleFor{service.split('.')[0]}")
    return {"name": role, "path": f"/aws-service-role/{service}/", "uniqueId": f"AROA{gen.upper()}"}


def _queue(state: dict[str, Any], id_: str, gen: str, region: str) -> dict[str, Any]:
    return {"url": f"https://sqs.{region}.amazonaws.com/{ACCOUNT_ID}/{state['name']}"}


def _owned(state: dict[str, Any], id_: str, gen: str, region: str) -> dict[str, Any]:
    return {"ownerId": ACCOUNT_ID}


def _vpc(state: dict[str, Any], id_: str, gen: str, region: str) -> dict[str, Any]:
    return {"ownerId": ACCOUNT_ID, "defaultSecurityGroupId": f"sg-{digest(gen + '/default-sg')}",
            "defaultRouteTableId": f"rtb-{digest(gen + '/main-rtb')}",
            "mainRouteTableId": f"rtb-{digest(gen + '/main-rtb')}",
            "defaultNetworkAclId": f"acl-{digest(gen + '/acl')}", "dhcpOptionsId": f"dopt-{digest(gen + '/dopt')}"}


def _eip(state: dict[str, Any], id_: str, gen: str, region: str) -> dict[str, Any]:
    n = int(gen[:4], 16)
    ip = f"198.51.{100 + n % 4}.{1 + n // 4 % 254}"  # documentation range (RFC 5737)
    return {"allocationId": id_, "publicIp": ip, "domain": state.get("domain", "vpc"),
            "publicDns": f"ec2-{ip.replace('.', '-')}.compute-1.amazonaws.com"}


def _nat(state: dict[str, Any], id_: str, gen: str, region: str) -> dict[str, Any]:
    n = int(gen[:4], 16)
    return {"networkInterfaceId": f"eni-{digest(gen + '/eni')}", "privateIp": f"10.255.{n % 256}.{1 + n // 256 % 254}",
            "connectivityType": state.get("connectivityType", "public")}


def _launch_template(state: dict[str, Any], id_: str, gen: str, region: str) -> dict[str, Any]:
    return {"latestVersion": 1, "defaultVersion": 1}


def _security_group(state: dict[str, Any], id_: str, gen: str, region: str) -> dict[str, Any]:
    return {"ownerId": ACCOUNT_ID}


def _pod_identity(state: dict[str, Any], id_: str, gen: str, region: str) -> dict[str, Any]:
    return {"associationId": f"a-{gen}", "associationArn": f"arn:{partition(region)}:eks:{region}:{ACCOUNT_ID}:"
                                                           f"podidentityassociation/{state.get('clusterName')}/a-{gen}"}


def _access_entry(state: dict[str, Any], id_: str, gen: str, region: str) -> dict[str, Any]:
    arn = (f"arn:{partition(region)}:eks:{region}:{ACCOUNT_ID}:access-entry/{state.get('clusterName')}/role/"
           f"{ACCOUNT_ID}/{gen}")
    return {"accessEntryArn": arn, "kubernetesGroups": state.get("kubernetesGroups", []),
            "userName": state.get("userName", f"arn:aws:sts::{ACCOUNT_ID}:assumed-role/{gen}/{{{{SessionName}}}}")}


def _log_group(state: dict[str, Any], id_: str, gen: str, region: str) -> dict[str, Any]:
    return {"retentionInDays": state.get("retentionInDays", 0)}


def _helm_release(state: dict[str, Any], id_: str, gen: str, region: str) -> dict[str, Any]:
    return {"status": {"name": state.get("name"), "namespace": state.get("namespace", "default"),
                       "chart": state.get("chart"), "version": state.get("version"), "status": "deployed",
                       "revision": 1}}


def eks_cluster_outputs(cluster: str, gen: str, region: str, vpc_id: Any, subnet_ids: Any) -> dict[str, Any]:
    """A pulumi-eks Cluster's outputs. A new cluster (a replacement) gets a new endpoint, issuer and security
    group, so these derive from the generation, not only from the name."""
    host = digest(f"{cluster}/{gen}", 32).upper()
    issuer = f"oidc.eks.{region}.amazonaws.com/id/{host}"
    endpoint = f"https://{host}.gr7.{region}.eks.amazonaws.com"
    security_group = f"sg-{digest(gen + '/cluster-sg')}"
    return {
        "kubeconfigJson": json.dumps({"apiVersion": "v1", "kind": "Config", "clusters": [
            {"name": cluster, "cluster": {"server": endpoint, "certificate-authority-data": CA_DATA}}]}),
        "oidcProviderArn": f"arn:{partition(region)}:iam::{ACCOUNT_ID}:oidc-provider/{issuer}",
        "oidcProviderUrl": f"https://{issuer}",
        "oidcIssuer": issuer,
        "clusterSecurityGroupId": security_group,
        "core": {
            "endpoint": endpoint,
            "certificateAuthority": {"data": CA_DATA},
            "clusterSecurityGroupId": security_group,
            "vpcId": vpc_id,
            "subnetIds": subnet_ids,
        },
    }


def _eks_cluster(state: dict[str, Any], id_: str, gen: str, region: str) -> dict[str, Any]:
    subnets = state.get("subnetIds") or [*state.get("publicSubnetIds", []), *state.get("privateSubnetIds", [])]
    return eks_cluster_outputs(str(state.get("name") or id_), gen, region, state.get("vpcId"), subnets)


_COMPUTED: dict[str, Callable[[dict[str, Any], str, str, str], dict[str, Any]]] = {
    "aws:kms/key:Key": _kms_key,
    "aws:iam/role:Role": _role,
    "aws:iam/policy:Policy": _policy,
    "aws:iam/instanceProfile:InstanceProfile": _instance_profile,
    "aws:iam/serviceLinkedRole:ServiceLinkedRole": _service_linked_role,
    "aws:sqs/queue:Queue": _queue,
    "aws:ec2/vpc:Vpc": _vpc,
    "aws:ec2/subnet:Subnet": _owned,
    "aws:ec2/internetGateway:InternetGateway": _owned,
    "aws:ec2/routeTable:RouteTable": _owned,
    "aws:ec2/securityGroup:SecurityGroup": _security_group,
    "aws:ec2/launchTemplate:LaunchTemplate": _launch_template,
    "aws:ec2/eip:Eip": _eip,
    "aws:ec2/natGateway:NatGateway": _nat,
    "aws:eks/podIdentityAssociation:PodIdentityAssociation": _pod_identity,
    "aws:eks/accessEntry:AccessEntry": _access_entry,
    "aws:cloudwatch/logGroup:LogGroup": _log_group,
    "kubernetes:helm.sh/v3:Release": _helm_release,
    "eks:index:Cluster": _eks_cluster,
}
