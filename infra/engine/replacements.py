"""Which input changes make the provider replace a resource instead of updating it: data, not logic.

An offline plan cannot ask the providers, so the plan diff looks the answer up here. Keys are resource type
tokens (a `*` matches anything, as in `fnmatch`); values are input property paths in the camelCase the plan
records, dotted for nested objects. A change at, or anywhere under, a listed path is a replacement.

Sources: the upstream Terraform schemas that pulumi-aws 7.x bridges (`ForceNew` fields), the pulumi-aws and
pulumi-eks 4.4 SDK docstrings ("changing this value will force a new cluster"), and the Kubernetes API (object
names and namespaces are immutable). Add an entry when a new resource type with such inputs enters the program.
"""

from __future__ import annotations

from fnmatch import fnmatchcase

REPLACE_ON_CHANGE: dict[str, tuple[str, ...]] = {
    # --- network -----------------------------------------------------------------------------------------
    "aws:ec2/vpc:Vpc": ("cidrBlock", "ipv4IpamPoolId", "ipv4NetmaskLength"),
    "aws:ec2/subnet:Subnet": ("cidrBlock", "availabilityZone", "availabilityZoneId", "vpcId", "ipv6Native"),
    "aws:ec2/natGateway:NatGateway": ("subnetId", "allocationId", "connectivityType", "privateIp"),
    "aws:ec2/eip:Eip": ("domain", "publicIpv4Pool", "networkBorderGroup"),
    "aws:ec2/routeTable:RouteTable": ("vpcId",),
    "aws:ec2/route:Route": ("routeTableId", "destinationCidrBlock", "destinationIpv6CidrBlock",
                            "destinationPrefixListId"),
    "aws:ec2/routeTableAssociation:RouteTableAssociation": ("subnetId", "gatewayId"),
    "aws:ec2/tag:Tag": ("resourceId", "key"),
    "aws:ec2/securityGroup:SecurityGroup": ("name", "namePrefix", "vpcId", "description"),
    # --- cluster -----------------------------------------------------------------------------------------
    # pulumi-eks component inputs that reach a ForceNew field of the aws.eks.Cluster it creates. `vpcId` is
    # listed although the provider would try an update: it replaces the cluster security group, and EKS cannot
    # move a cluster to another VPC. Subnet ids are NOT listed: EKS and the provider (since the Terraform AWS
    # provider 5.25) change a cluster's subnets in place.
    "eks:index:Cluster": ("name", "vpcId", "serviceRole", "kubernetesServiceIpAddressRange", "ipFamily",
                          "bootstrapSelfManagedAddons"),
    "aws:eks/cluster:Cluster": ("name", "roleArn", "bootstrapSelfManagedAddons", "kubernetesNetworkConfig.ipFamily",
                                "kubernetesNetworkConfig.serviceIpv4Cidr",
                                "accessConfig.bootstrapClusterCreatorAdminPermissions", "outpostConfig"),
    # `launchTemplate.id` reaches the NodeGroup's ForceNew field; a new template *version* rolls the nodes in place.
    "eks:index:ManagedNodeGroup": ("nodeGroupName", "nodeGroupNamePrefix", "capacityType", "amiType", "subnetIds",
                                   "diskSize", "instanceTypes", "nodeRoleArn", "nodeRole", "clusterName",
                                   "remoteAccess", "launchTemplate.id"),
    "aws:eks/nodeGroup:NodeGroup": ("nodeGroupName", "nodeGroupNamePrefix", "clusterName", "capacityType", "amiType",
                                    "subnetIds", "diskSize", "instanceTypes", "nodeRoleArn", "remoteAccess",
                                    "launchTemplate.id", "launchTemplate.name"),
    "aws:eks/addon:Addon": ("clusterName", "addonName"),
    "aws:eks/accessEntry:AccessEntry": ("clusterName", "principalArn", "type"),
    "aws:eks/accessPolicyAssociation:AccessPolicyAssociation": ("clusterName", "principalArn", "policyArn"),
    "aws:eks/podIdentityAssociation:PodIdentityAssociation": ("clusterName", "namespace", "serviceAccount"),
    "aws:kms/key:Key": ("customerMasterKeySpec", "keyUsage", "multiRegion", "customKeyStoreId", "xksKeyId"),
    "aws:kms/alias:Alias": ("name", "namePrefix"),
    # --- IAM -----------------------------------------------------------------------------------------------
    "aws:iam/role:Role": ("name", "namePrefix", "path"),
    "aws:iam/policy:Policy": ("name", "namePrefix", "path"),
    "aws:iam/rolePolicy:RolePolicy": ("name", "namePrefix", "role"),
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment": ("role", "policyArn"),
    "aws:iam/instanceProfile:InstanceProfile": ("name", "namePrefix", "path"),
    "aws:iam/openIdConnectProvider:OpenIdConnectProvider": ("url",),
    # --- interruption queue --------------------------------------------------------------------------------
    "aws:sqs/queue:Queue": ("name", "namePrefix", "fifoQueue"),
    "aws:sqs/queuePolicy:QueuePolicy": ("queueUrl",),
    "aws:cloudwatch/eventRule:EventRule": ("name", "namePrefix", "eventBusName"),
    "aws:cloudwatch/eventTarget:EventTarget": ("rule", "targetId", "eventBusName"),
    # --- Kubernetes ------------------------------------------------------------------------------------------
    # A Helm release is identified by its name in its namespace: changing either installs a new release.
    "kubernetes:helm.sh/v3:Release": ("name", "namespace"),
    # Every Kubernetes object, Karpenter's NodePools and EC2NodeClasses included: name and namespace are
    # immutable, so the provider deletes and recreates the object.
    "kubernetes:*": ("metadata.name", "metadata.namespace"),
}

REPLACE_ON_REMOVE: dict[str, tuple[str, ...]] = {
    # EKS cannot turn secrets encryption off again: removing the key asks for a new cluster; adding one is an
    # in-place update.
    "eks:index:Cluster": ("encryptionConfigKeyArn",),
    "aws:eks/cluster:Cluster": ("encryptionConfig",),
}


DELETE_FIRST_WHEN_SET: dict[str, tuple[str, ...]] = {
    # Pulumi replaces create-before-delete unless told otherwise. A fixed physical name (set in the program, not
    # generated) cannot be held by two resources, so the providers delete the old resource first (pulumi-aws for
    # a user-given name, pulumi-kubernetes for a user-given `metadata.name`): what it serves is down until the
    # replacement is ready. Name prefixes (`nodeGroupNamePrefix`, `namePrefix`) generate a new name instead.
    "eks:index:ManagedNodeGroup": ("nodeGroupName",),
    "aws:eks/nodeGroup:NodeGroup": ("nodeGroupName",),
    "eks:index:Cluster": ("name",),
    "aws:eks/cluster:Cluster": ("name",),
    "aws:iam/role:Role": ("name",),
    "aws:iam/policy:Policy": ("name",),
    "aws:iam/instanceProfile:InstanceProfile": ("name",),
    "aws:sqs/queue:Queue": ("name",),
    "aws:cloudwatch/eventRule:EventRule": ("name",),
    "aws:cloudwatch/logGroup:LogGroup": ("name",),
    "aws:kms/alias:Alias": ("name",),
    "kubernetes:helm.sh/v3:Release": ("name",),
    "kubernetes:*": ("metadata.name",),
}


def replacing_paths(resource_type: str, table: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    """The listed paths for a type: its own entry plus every matching wildcard entry, in table order."""
    paths: list[str] = []
    for pattern, props in table.items():
        if pattern == resource_type or ("*" in pattern and fnmatchcase(resource_type, pattern)):
            paths += [p for p in props if p not in paths]
    return tuple(paths)
