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
    # The API endpoint's ingress rules (cluster.apiAccess): everything but the group is updated in place.
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": ("securityGroupId",),
    # --- cluster ---------------------------------------------------------------------------------------------
    # pulumi-eks' Cluster and ManagedNodeGroup are remote components: the plan records their inputs, not the
    # aws.eks.Cluster / aws.eks.NodeGroup they create. Each entry below is a component input that reaches a
    # ForceNew field of that resource. Sources (read, not copied):
    # - pulumi-eks nodejs/eks/cluster/cluster.ts and nodes/nodegroup.ts at v4.3.0-9-g7bf0c1b1 (commit
    #   7bf0c1b179932ce51cb02dfc4f9bd0d7550cb0cd; we pin 4.4.0, whose mapping is the same): `name` -> name,
    #   `serviceRole` -> roleArn, `kubernetesServiceIpAddressRange` / `ipFamily` -> kubernetesNetworkConfig;
    #   `bootstrapSelfManagedAddons` is in the cluster's ignoreChanges, so changing it does nothing. The node
    #   group passes its own inputs through unchanged (`clusterName` defaults to the cluster's name,
    #   `operatingSystem` / `gpu` choose `amiType`, the custom-launch-template inputs create a launch template
    #   whose id the group then takes).
    # - terraform-provider-aws internal/service/eks/cluster.go and node_group.go as bridged by pulumi-aws 7.x
    #   (v6 of the Terraform provider): aws_eks_cluster ForceNew: name, role_arn, bootstrap_self_managed_addons,
    #   access_config.bootstrap_cluster_creator_admin_permissions, kubernetes_network_config.{ip_family,
    #   service_ipv4_cidr}, outpost_config.*; encryption_config is ForceNew only when removed; vpc_config's
    #   subnet_ids and security_group_ids are updated in place. aws_eks_node_group ForceNew: ami_type,
    #   capacity_type, cluster_name, disk_size, instance_types, launch_template.{id,name}, node_group_name(_prefix),
    #   node_role_arn, remote_access, subnet_ids.
    # `vpcId` is listed although no schema marks it: the provider plans an in-place update of the cluster's
    # subnets, which EKS refuses for subnets of another VPC (a cluster cannot move to another VPC), so a VPC
    # change (a new `vpcCidr` replaces the VPC) means a new cluster in practice, and the plan says so.
    "eks:index:Cluster": ("name", "vpcId", "serviceRole", "kubernetesServiceIpAddressRange", "ipFamily"),
    "aws:eks/cluster:Cluster": ("name", "roleArn", "bootstrapSelfManagedAddons", "kubernetesNetworkConfig.ipFamily",
                                "kubernetesNetworkConfig.serviceIpv4Cidr",
                                "accessConfig.bootstrapClusterCreatorAdminPermissions", "outpostConfig"),
    # `launchTemplate.id` reaches the NodeGroup's ForceNew field; a new template *version* rolls the nodes in place.
    "eks:index:ManagedNodeGroup": ("nodeGroupName", "nodeGroupNamePrefix", "capacityType", "amiType", "subnetIds",
                                   "diskSize", "instanceTypes", "nodeRoleArn", "nodeRole", "clusterName",
                                   "remoteAccess", "launchTemplate.id", "launchTemplate.name", "operatingSystem",
                                   "gpu", "amiId", "userData", "kubeletExtraArgs", "bootstrapExtraArgs",
                                   "bottlerocketSettings", "nodeadmExtraOptions", "enableIMDSv2",
                                   "enableEfaSupport", "placementGroupAvailabilityZone"),
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


REPLACED_WITH: dict[str, tuple[str, ...]] = {
    # A node group takes its cluster_name (ForceNew) from the cluster component's `core` output. When the
    # cluster is replaced, that output is unknown in a preview, so every node group of it is replaced too.
    "eks:index:ManagedNodeGroup": ("eks:index:Cluster",),
    "aws:eks/nodeGroup:NodeGroup": ("aws:eks/cluster:Cluster",),
}
"""Type -> types of its dependencies whose replacement replaces it as well."""

STATEFUL: dict[str, str] = {
    "eks:index:Cluster": "a new EKS control plane: every Kubernetes object, add-on, access entry and node on it "
                         "is lost, and its endpoint, CA and OIDC issuer change",
    "aws:eks/cluster:Cluster": "a new EKS control plane: every Kubernetes object on it is lost",
    "eks:index:ManagedNodeGroup": "every node of the group is drained and terminated",
    "aws:eks/nodeGroup:NodeGroup": "every node of the group is drained and terminated",
    "aws:ec2/vpc:Vpc": "a new VPC: everything in it (subnets, gateways, the cluster's network interfaces) goes too",
    "aws:ec2/subnet:Subnet": "instances and network interfaces in the subnet must go first",
    "aws:kms/key:Key": "data encrypted with the old key can no longer be decrypted once it is deleted",
    "aws:sqs/queue:Queue": "messages in the queue are lost",
}
"""Types whose replacement loses state, with what is lost: the diff warns about these even when unprotected."""


def replacing_paths(resource_type: str, table: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    """The listed paths for a type: its own entry plus every matching wildcard entry, in table order."""
    paths: list[str] = []
    for pattern, props in table.items():
        if pattern == resource_type or ("*" in pattern and fnmatchcase(resource_type, pattern)):
            paths += [p for p in props if p not in paths]
    return tuple(paths)
