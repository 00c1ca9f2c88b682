"""The AWS API actions each resource type's create, read, update and delete make: one table, with its evidence.

`pulumi up`, `pulumi refresh` and `pulumi destroy` call, through the providers, the AWS APIs each registered type
needs; the deploy role must be allowed every one of them, or a run stops half-way (an `UnauthorizedOperation` in
the middle of a destroy leaves a half-deleted stack). Each row below was read from the provider's own source:
for `aws:` types the terraform-provider-aws resource pulumi-aws bridges (its Create, Read, Update and Delete
functions and the helpers they call: waiters, tag updaters, the reads after a create), for pulumi-eks'
components the children they register with the options this library passes (`platform/cluster/component.py`).
`evidence` names the file read and the commit of the copy read (`path@commit`); a row without a commit names the
file but was not re-read for this table, its actions carried over (the EC2 tag resource, most provider look-ups,
and types no shipped stack plans: Fargate, AMP, Auto Scaling). Rows list the calls the inputs this library sets
reach, not those of features it never uses (IPv6, KMS-encrypted log groups, NAT secondary addresses).
`tools/deploy_role.py` turns the rows of the types a plan contains into the deploy role's policy, and a test
holds every type of every shipped plan to this table.

Invokes (`aws:...:getX`) are read-only look-ups: their one `read` row is the API the data source calls.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from eks_karpenter.platform.adopted import NODE_GROUP_METADATA_TOKEN
from eks_karpenter.platform.taken_names import (
    LOG_GROUP_TOKEN,
    LOG_GROUPS_TOKEN,
    QUEUE_TOKEN,
    QUEUES_TOKEN,
    READ_ACTIONS,
)

TF_AWS = "hashicorp/terraform-provider-aws"
"""The Terraform provider pulumi-aws bridges (pulumi-aws 7.x): the `aws:` types' behaviour is its code."""
PULUMI_EKS = "pulumi/pulumi-eks"
PULUMI_EKS_COMMIT = "7bf0c1b179932ce51cb02dfc4f9bd0d7550cb0cd"
"""The pulumi-eks commit read: its main branch on 2026-08-12 (the copy has no release tags; the package pins
4.4.0)."""

RoleSet = Literal["stack", "service-linked", "caller"]


@dataclass(frozen=True)
class ChildRole:
    """An IAM role a component registers itself (invisible in an offline plan: a remote component's children are
    not mocked), auto-named from the component's resource name."""

    prefix: str
    """The role name's prefix, `{name}` standing for the component's resource name (Pulumi adds `-` and 7
    random characters)."""
    managed_policies: tuple[str, ...]
    """AWS managed policies (names) it attaches to the role."""
    passed_to: str
    """The service the role is passed to (`iam:PassedToService`)."""


@dataclass(frozen=True)
class TypeActions:
    """What one resource type (or invoke) calls, by lifecycle step, and where that was read."""

    create: tuple[str, ...] = ()
    read: tuple[str, ...] = ()
    update: tuple[str, ...] = ()
    delete: tuple[str, ...] = ()
    evidence: tuple[str, ...] = ()
    """`repo path@commit` of each source file read for this row (the commit of the stored copy read)."""
    children: tuple[str, ...] = ()
    """For a component: the types of the children it registers (their rows are part of this one's)."""
    child_roles: tuple[ChildRole, ...] = ()
    """For a component: the roles among its children (not in the plan, so named here)."""
    passes_role: tuple[str, str | None] | None = None
    """`(input property, service)`: the input holding the ARN of the role this type passes, and the service it is
    passed to (None: the API checks `iam:PassRole` without naming a service)."""
    service_linked_roles: tuple[str, ...] = ()
    """Services whose service-linked role the create may create (`iam:CreateServiceLinkedRole`)."""
    roles: RoleSet = "stack"
    """Which roles the type's `iam:` role actions act on: the stack's own, AWS service-linked roles, or the role
    the deployer runs as (which no plan names)."""
    notes: str = ""

    @property
    def actions(self) -> frozenset[str]:
        """Every action of the four steps."""
        return frozenset((*self.create, *self.read, *self.update, *self.delete))


def tf(path: str, commit: str) -> str:
    return f"{TF_AWS} {path}@{commit}"


def eks(path: str) -> str:
    return f"{PULUMI_EKS} {path}@{PULUMI_EKS_COMMIT}"


_EC2_TAGS = ("ec2:CreateTags", "ec2:DeleteTags")
"""The EC2 tag updater (`internal/service/ec2/tags_gen.go`): tags on create go in the create call's
TagSpecifications, which IAM authorises as `ec2:CreateTags`."""
_EKS_TAGS = ("eks:TagResource", "eks:UntagResource")

ACTIONS: dict[str, TypeActions] = {
    # --- network ------------------------------------------------------------------------------------------------
    "aws:ec2/vpc:Vpc": TypeActions(
        create=("ec2:CreateVpc", "ec2:ModifyVpcAttribute", "ec2:CreateTags"),
        # Read after create and on refresh: the VPC, its three attributes, and the default NACL, main route table
        # and default security group it reports (a failure there is only logged, but the calls are made).
        read=("ec2:DescribeVpcs", "ec2:DescribeVpcAttribute", "ec2:DescribeNetworkAcls", "ec2:DescribeRouteTables",
              "ec2:DescribeSecurityGroups"),
        update=("ec2:ModifyVpcAttribute", *_EC2_TAGS),
        delete=("ec2:DeleteVpc", "ec2:DescribeVpcs"),
        evidence=(tf("internal/service/ec2/vpc_.go", "00081ce41cc691433ac19bf42227cdabffd0454d"),)),
    "aws:ec2/subnet:Subnet": TypeActions(
        create=("ec2:CreateSubnet", "ec2:DescribeSubnets", "ec2:ModifySubnetAttribute", "ec2:CreateTags"),
        read=("ec2:DescribeSubnets",),
        update=("ec2:ModifySubnetAttribute", *_EC2_TAGS),
        # Delete first lists the subnet's network interfaces and deletes those a service left behind (Lambda,
        # Comprehend, DMS: detached first), then deletes the subnet.
        delete=("ec2:DescribeNetworkInterfaces", "ec2:DetachNetworkInterface", "ec2:DeleteNetworkInterface",
                "ec2:DeleteSubnet"),
        evidence=(tf("internal/service/ec2/vpc_subnet.go", "00cda125a19d31754cb0d073cf551264c57955cb"),
                  f"{TF_AWS} internal/service/ec2/vpc_network_interface.go (deleteLingeringENIs, aws-sdk-go-v2 "
                  "version)"),
        notes="On a DependencyViolation the provider also looks for GuardDuty-managed VPC endpoints; without "
              "the permission that is a warning, not a failure."),
    "aws:ec2/internetGateway:InternetGateway": TypeActions(
        create=("ec2:CreateInternetGateway", "ec2:AttachInternetGateway", "ec2:DescribeInternetGateways",
                "ec2:CreateTags"),
        read=("ec2:DescribeInternetGateways",),
        update=("ec2:AttachInternetGateway", "ec2:DetachInternetGateway", *_EC2_TAGS),
        delete=("ec2:DetachInternetGateway", "ec2:DescribeInternetGateways", "ec2:DeleteInternetGateway"),
        evidence=(tf("internal/service/ec2/vpc_internet_gateway.go", "08923b68b5ad6fcfdd38362fb5247e39a9b07add"),)),
    "aws:ec2/eip:Eip": TypeActions(
        create=("ec2:AllocateAddress", "ec2:CreateTags"),
        read=("ec2:DescribeAddresses", "ec2:DescribeAddressesAttribute"),
        update=("ec2:AssociateAddress", "ec2:DisassociateAddress", *_EC2_TAGS),
        # The association recorded in state (the NAT gateway's) is removed before the release.
        delete=("ec2:DisassociateAddress", "ec2:ReleaseAddress"),
        evidence=(tf("internal/service/ec2/ec2_eip.go", "01606926a0c0ab9174aec440f976a48b0baee722"),)),
    "aws:ec2/natGateway:NatGateway": TypeActions(
        create=("ec2:CreateNatGateway", "ec2:DescribeNatGateways", "ec2:CreateTags"),
        read=("ec2:DescribeNatGateways",),
        update=_EC2_TAGS,
        delete=("ec2:DeleteNatGateway", "ec2:DescribeNatGateways"),
        evidence=(tf("internal/service/ec2/vpc_nat_gateway.go", "04088eaa54948421bf1ef7494ae2b2c01d9243e3"),)),
    "aws:ec2/routeTable:RouteTable": TypeActions(
        create=("ec2:CreateRouteTable", "ec2:DescribeRouteTables", "ec2:CreateTags"),
        read=("ec2:DescribeRouteTables",),
        update=("ec2:CreateRoute", "ec2:ReplaceRoute", "ec2:DeleteRoute", *_EC2_TAGS),
        # Delete disassociates every subnet still associated, then deletes the table and waits for it to go.
        delete=("ec2:DescribeRouteTables", "ec2:DisassociateRouteTable", "ec2:DeleteRouteTable"),
        evidence=(tf("internal/service/ec2/vpc_route_table.go", "022092419b7cda11527df3c6b51cbfe1876c1722"),)),
    "aws:ec2/route:Route": TypeActions(
        create=("ec2:CreateRoute", "ec2:DescribeRouteTables"),
        read=("ec2:DescribeRouteTables",),
        update=("ec2:ReplaceRoute", "ec2:DescribeRouteTables"),
        delete=("ec2:DeleteRoute", "ec2:DescribeRouteTables"),
        evidence=(tf("internal/service/ec2/vpc_route.go", "0128541e0711766f28540143a9d73738aced60aa"),)),
    "aws:ec2/routeTableAssociation:RouteTableAssociation": TypeActions(
        create=("ec2:AssociateRouteTable", "ec2:DescribeRouteTables"),
        read=("ec2:DescribeRouteTables",),
        update=("ec2:ReplaceRouteTableAssociation",),
        delete=("ec2:DisassociateRouteTable", "ec2:DescribeRouteTables"),
        evidence=(tf("internal/service/ec2/vpc_route_table_association.go",
                     "0be71beb458ad8875e0acc5c91519c0ceeb214aa"),)),
    "aws:ec2/tag:Tag": TypeActions(
        create=("ec2:CreateTags", "ec2:DescribeTags"), read=("ec2:DescribeTags",), update=("ec2:CreateTags",),
        delete=("ec2:DeleteTags",),
        evidence=(f"{TF_AWS} aws_ec2_tag (its file is not in the copy searched)",)),
    "aws:ec2/flowLog:FlowLog": TypeActions(
        create=("ec2:CreateFlowLogs", "ec2:DescribeFlowLogs", "ec2:CreateTags"),
        read=("ec2:DescribeFlowLogs",),
        update=_EC2_TAGS,
        delete=("ec2:DeleteFlowLogs",),
        evidence=(tf("internal/service/ec2/vpc_flow_log.go", "00a35305dc1b297a6fcdecdfbba33f1e63c3da39"),),
        passes_role=("iamRoleArn", "vpc-flow-logs.amazonaws.com"),
        notes="Flow logs to S3 are delivered by CloudWatch Logs' log delivery, which the caller creates: "
              "logs:CreateLogDelivery and logs:DeleteLogDelivery."),
    "aws:ec2/launchTemplate:LaunchTemplate": TypeActions(
        create=("ec2:CreateLaunchTemplate", "ec2:CreateTags"),
        read=("ec2:DescribeLaunchTemplates", "ec2:DescribeLaunchTemplateVersions"),
        update=("ec2:CreateLaunchTemplateVersion", "ec2:ModifyLaunchTemplate", *_EC2_TAGS),
        delete=("ec2:DeleteLaunchTemplate",),
        evidence=(tf("internal/service/ec2/ec2_launch_template.go", "025e4f81cab8553cb052aebfcc5987e2aa8c702a"),)),
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": TypeActions(
        create=("ec2:AuthorizeSecurityGroupIngress", "ec2:CreateTags"),
        read=("ec2:DescribeSecurityGroupRules",),
        update=("ec2:ModifySecurityGroupRules", *_EC2_TAGS),
        delete=("ec2:RevokeSecurityGroupIngress",),
        evidence=(tf("internal/service/ec2/vpc_security_group_ingress_rule.go",
                     "00a322094b4b9ade8a81b244345dbcf4b52ee8d6"),)),
    # --- logs, events, alarms, queues, keys ----------------------------------------------------------------------
    "aws:cloudwatch/logGroup:LogGroup": TypeActions(
        create=("logs:CreateLogGroup", "logs:TagResource", "logs:PutRetentionPolicy"),
        read=("logs:DescribeLogGroups", "logs:ListTagsForResource"),
        update=("logs:PutRetentionPolicy", "logs:DeleteRetentionPolicy", "logs:TagResource", "logs:UntagResource"),
        delete=("logs:DeleteLogGroup",),
        evidence=(tf("internal/service/logs/group.go", "0073593e7d6993ba482409f4dc35438daaa79bb3"),)),
    "aws:cloudwatch/eventRule:EventRule": TypeActions(
        create=("events:PutRule", "events:TagResource", "events:DescribeRule"),
        read=("events:DescribeRule", "events:ListTagsForResource"),
        update=("events:PutRule", "events:TagResource", "events:UntagResource"),
        delete=("events:DeleteRule",),
        evidence=(tf("internal/service/events/rule.go", "0cdab4ae09a963535e03dde0bff4784afe8e3517"),)),
    "aws:cloudwatch/eventTarget:EventTarget": TypeActions(
        create=("events:PutTargets",), read=("events:ListTargetsByRule",), update=("events:PutTargets",),
        delete=("events:RemoveTargets",),
        evidence=(tf("internal/service/events/target.go", "0762c41e2027fcd3cb8340d3e6886c6975fc0a59"),)),
    "aws:cloudwatch/metricAlarm:MetricAlarm": TypeActions(
        # Create first looks the alarm up, refusing to overwrite one of the same name.
        create=("cloudwatch:DescribeAlarms", "cloudwatch:PutMetricAlarm", "cloudwatch:TagResource"),
        read=("cloudwatch:DescribeAlarms", "cloudwatch:ListTagsForResource"),
        update=("cloudwatch:PutMetricAlarm", "cloudwatch:TagResource", "cloudwatch:UntagResource"),
        delete=("cloudwatch:DeleteAlarms",),
        evidence=(tf("internal/service/cloudwatch/metric_alarm.go", "055611a654738da73e7b1e2b5d2b7672c6d4d531"),)),
    "aws:sqs/queue:Queue": TypeActions(
        create=("sqs:CreateQueue", "sqs:TagQueue", "sqs:GetQueueAttributes"),
        read=("sqs:GetQueueAttributes", "sqs:ListQueueTags"),
        update=("sqs:SetQueueAttributes", "sqs:TagQueue", "sqs:UntagQueue"),
        delete=("sqs:DeleteQueue", "sqs:GetQueueAttributes"),
        evidence=(tf("internal/service/sqs/queue.go", "00a35305dc1b297a6fcdecdfbba33f1e63c3da39"),)),
    "aws:sqs/queuePolicy:QueuePolicy": TypeActions(
        # Each write waits until the queue's attributes show the policy (or its removal).
        create=("sqs:SetQueueAttributes", "sqs:GetQueueAttributes"), read=("sqs:GetQueueAttributes",),
        update=("sqs:SetQueueAttributes", "sqs:GetQueueAttributes"),
        delete=("sqs:SetQueueAttributes", "sqs:GetQueueAttributes"),
        evidence=(tf("internal/service/sqs/queue_policy.go", "0148137dc6fb802b97b74036846777ab15c0f9ad"),)),
    "aws:kms/key:Key": TypeActions(
        create=("kms:CreateKey", "kms:TagResource", "kms:EnableKeyRotation", "kms:DescribeKey"),
        read=("kms:DescribeKey", "kms:GetKeyPolicy", "kms:GetKeyRotationStatus", "kms:ListResourceTags"),
        update=("kms:PutKeyPolicy", "kms:UpdateKeyDescription", "kms:EnableKeyRotation", "kms:DisableKeyRotation",
                "kms:EnableKey", "kms:DisableKey", "kms:TagResource", "kms:UntagResource"),
        delete=("kms:ScheduleKeyDeletion", "kms:DescribeKey"),
        evidence=(tf("internal/service/kms/key.go", "00a35305dc1b297a6fcdecdfbba33f1e63c3da39"),)),
    "aws:kms/alias:Alias": TypeActions(
        create=("kms:CreateAlias",), read=("kms:ListAliases",), update=("kms:UpdateAlias",),
        delete=("kms:DeleteAlias",),
        evidence=(tf("internal/service/kms/alias.go", "01c08000ddb14181b5bd19201d8fca311dc570e4"),)),
    # --- IAM ----------------------------------------------------------------------------------------------------
    "aws:iam/role:Role": TypeActions(
        create=("iam:CreateRole", "iam:GetRole", "iam:TagRole"),
        # Read: the role, its inline policies (names, then each document) and its attached managed policies.
        read=("iam:GetRole", "iam:ListRolePolicies", "iam:GetRolePolicy", "iam:ListAttachedRolePolicies"),
        update=("iam:UpdateAssumeRolePolicy", "iam:UpdateRoleDescription", "iam:UpdateRole",
                "iam:PutRolePermissionsBoundary", "iam:DeleteRolePermissionsBoundary", "iam:TagRole",
                "iam:UntagRole"),
        # Delete takes the role out of every instance profile that holds it (Karpenter's, for the node role),
        # detaches its managed policies and deletes its inline ones, then deletes it.
        delete=("iam:ListInstanceProfilesForRole", "iam:RemoveRoleFromInstanceProfile",
                "iam:ListAttachedRolePolicies", "iam:DetachRolePolicy", "iam:ListRolePolicies",
                "iam:DeleteRolePolicy", "iam:DeleteRole"),
        evidence=(tf("internal/service/iam/role.go", "3277329285f5730eeff9c56fbe69836c9448ab78"),
                  f"{TF_AWS} internal/service/iam/role.go (DeleteRole and deleteRoleInstanceProfiles, "
                  "aws-sdk-go-v2 version)")),
    "aws:iam/policy:Policy": TypeActions(
        create=("iam:CreatePolicy", "iam:TagPolicy"),
        read=("iam:GetPolicy", "iam:GetPolicyVersion", "iam:ListPolicyTags"),
        # A new document: prune the oldest version when there are five, create a version, make it the default.
        update=("iam:ListPolicyVersions", "iam:DeletePolicyVersion", "iam:CreatePolicyVersion",
                "iam:SetDefaultPolicyVersion", "iam:TagPolicy", "iam:UntagPolicy"),
        delete=("iam:ListPolicyVersions", "iam:DeletePolicyVersion", "iam:DeletePolicy"),
        evidence=(tf("internal/service/iam/policy.go", "01ccd9a2d118a3e81a9649759bf14303526dc9e6"),)),
    "aws:iam/rolePolicy:RolePolicy": TypeActions(
        create=("iam:PutRolePolicy", "iam:GetRolePolicy"), read=("iam:GetRolePolicy",), update=("iam:PutRolePolicy",),
        delete=("iam:DeleteRolePolicy",),
        evidence=(tf("internal/service/iam/role_policy.go", "02f97af85f89a04e8ed89f5e8b64a9a67f3cfe07"),)),
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment": TypeActions(
        create=("iam:AttachRolePolicy",), read=("iam:ListAttachedRolePolicies",),
        delete=("iam:DetachRolePolicy",),
        evidence=(tf("internal/service/iam/role_policy_attachment.go", "04c79849dbe7fbe76c3054b364357bcdaade9ac5"),)),
    "aws:iam/instanceProfile:InstanceProfile": TypeActions(
        create=("iam:CreateInstanceProfile", "iam:TagInstanceProfile", "iam:AddRoleToInstanceProfile"),
        # Read checks the profile's role still exists (and takes a deleted one out).
        read=("iam:GetInstanceProfile", "iam:GetRole", "iam:ListInstanceProfileTags"),
        update=("iam:AddRoleToInstanceProfile", "iam:RemoveRoleFromInstanceProfile", "iam:TagInstanceProfile",
                "iam:UntagInstanceProfile"),
        delete=("iam:RemoveRoleFromInstanceProfile", "iam:DeleteInstanceProfile"),
        evidence=(tf("internal/service/iam/instance_profile.go", "013f1736b90439e5a19567a87d3e5cd11858c420"),),
        passes_role=("role", None)),
    "aws:iam/serviceLinkedRole:ServiceLinkedRole": TypeActions(
        create=("iam:CreateServiceLinkedRole", "iam:GetRole", "iam:TagRole"),
        read=("iam:GetRole",),
        update=("iam:UpdateRole", "iam:TagRole", "iam:UntagRole"),
        delete=("iam:DeleteServiceLinkedRole", "iam:GetServiceLinkedRoleDeletionStatus"),
        evidence=(tf("internal/service/iam/service_linked_role.go", "01c08000ddb14181b5bd19201d8fca311dc570e4"),),
        roles="service-linked"),
    "aws:iam/openIdConnectProvider:OpenIdConnectProvider": TypeActions(
        create=("iam:CreateOpenIDConnectProvider", "iam:TagOpenIDConnectProvider"),
        read=("iam:GetOpenIDConnectProvider", "iam:ListOpenIDConnectProviderTags"),
        update=("iam:UpdateOpenIDConnectProviderThumbprint", "iam:AddClientIDToOpenIDConnectProvider",
                "iam:RemoveClientIDFromOpenIDConnectProvider", "iam:TagOpenIDConnectProvider",
                "iam:UntagOpenIDConnectProvider"),
        delete=("iam:DeleteOpenIDConnectProvider",),
        evidence=(tf("internal/service/iam/openid_connect_provider.go",
                     "01606926a0c0ab9174aec440f976a48b0baee722"),)),
    # --- EKS ----------------------------------------------------------------------------------------------------
    "aws:eks/cluster:Cluster": TypeActions(
        # EKS checks that the caller may use the secrets key (kms:DescribeKey, kms:CreateGrant) and creates its
        # service-linked role on an account's first cluster.
        create=("eks:CreateCluster", "eks:DescribeCluster", "eks:TagResource", "kms:DescribeKey",
                "kms:CreateGrant"),
        read=("eks:DescribeCluster",),
        update=("eks:UpdateClusterVersion", "eks:UpdateClusterConfig", "eks:AssociateEncryptionConfig",
                "eks:DescribeUpdate", *_EKS_TAGS),
        delete=("eks:DeleteCluster", "eks:DescribeCluster"),
        evidence=(tf("internal/service/eks/cluster.go", "00555dc5b38f92abbfa230badea0ed0754cea81e"),),
        passes_role=("roleArn", "eks.amazonaws.com"),
        service_linked_roles=("eks.amazonaws.com",)),
    "aws:eks/nodeGroup:NodeGroup": TypeActions(
        # EKS validates the group's subnets and launch template as the caller and creates its service-linked
        # role on an account's first managed node group.
        # With a launch template whose tagSpecifications tag instances and volumes (every group here), EKS checks
        # that the caller may launch and tag with it, on CreateNodegroup and UpdateNodegroupVersion.
        create=("eks:CreateNodegroup", "eks:DescribeNodegroup", "eks:TagResource", "ec2:DescribeSubnets",
                "ec2:DescribeLaunchTemplateVersions", "ec2:RunInstances", "ec2:CreateTags"),
        read=("eks:DescribeNodegroup",),
        update=("eks:UpdateNodegroupVersion", "eks:UpdateNodegroupConfig", "eks:DescribeUpdate",
                "ec2:DescribeLaunchTemplateVersions", "ec2:RunInstances", "ec2:CreateTags", *_EKS_TAGS),
        delete=("eks:DeleteNodegroup", "eks:DescribeNodegroup"),
        evidence=(tf("internal/service/eks/node_group.go", "012e0a32f0686212f447447fd3d81c3d0ce256ad"),
                  "EKS User Guide, launch-templates.adoc: the caller of CreateNodegroup or UpdateNodegroupVersion "
                  "with a launch template needs ec2:RunInstances and ec2:CreateTags"),
        passes_role=("nodeRoleArn", "eks.amazonaws.com"),
        service_linked_roles=("eks-nodegroup.amazonaws.com",)),
    "aws:eks/addon:Addon": TypeActions(
        create=("eks:CreateAddon", "eks:DescribeAddon", "eks:TagResource"),
        read=("eks:DescribeAddon",),
        update=("eks:UpdateAddon", "eks:DescribeUpdate", "eks:DescribeAddon", *_EKS_TAGS),
        delete=("eks:DeleteAddon", "eks:DescribeAddon"),
        evidence=(tf("internal/service/eks/addon.go", "00a35305dc1b297a6fcdecdfbba33f1e63c3da39"),)),
    "aws:eks/accessEntry:AccessEntry": TypeActions(
        create=("eks:CreateAccessEntry", "eks:TagResource"), read=("eks:DescribeAccessEntry",),
        update=("eks:UpdateAccessEntry", *_EKS_TAGS), delete=("eks:DeleteAccessEntry",),
        evidence=(tf("internal/service/eks/access_entry.go", "01f431114674c27cf790fafb67ac274bf8f765e1"),)),
    "aws:eks/accessPolicyAssociation:AccessPolicyAssociation": TypeActions(
        create=("eks:AssociateAccessPolicy",), read=("eks:ListAssociatedAccessPolicies",),
        delete=("eks:DisassociateAccessPolicy",),
        evidence=(tf("internal/service/eks/access_policy_association.go",
                     "01f431114674c27cf790fafb67ac274bf8f765e1"),)),
    "aws:eks/podIdentityAssociation:PodIdentityAssociation": TypeActions(
        create=("eks:CreatePodIdentityAssociation", "eks:TagResource"), read=("eks:DescribePodIdentityAssociation",),
        update=("eks:UpdatePodIdentityAssociation", *_EKS_TAGS), delete=("eks:DeletePodIdentityAssociation",),
        evidence=(tf("internal/service/eks/pod_identity_association.go", "00a35305dc1b297a6fcdecdfbba33f1e63c3da39"),),
        passes_role=("roleArn", "pods.eks.amazonaws.com")),
    "aws:eks/fargateProfile:FargateProfile": TypeActions(
        create=("eks:CreateFargateProfile", "eks:DescribeFargateProfile", "eks:TagResource"),
        read=("eks:DescribeFargateProfile",), update=_EKS_TAGS,
        delete=("eks:DeleteFargateProfile", "eks:DescribeFargateProfile"),
        evidence=(f"{TF_AWS} internal/service/eks/fargate_profile.go",),
        passes_role=("podExecutionRoleArn", None)),
    # --- pulumi-eks components: their children, with the options platform/cluster/component.py passes -----------
    "eks:index:Cluster": TypeActions(
        # skipDefaultNodeGroup, skipDefaultSecurityGroups, useDefaultVpcCni and the CoreDNS and kube-proxy add-ons
        # off: the service role (a ServiceRole: an auto-named role and its AmazonEKSClusterPolicy attachment),
        # the control plane and the OIDC provider. Its invokes (getPartition, getRegion) call no AWS API.
        children=("aws:iam/role:Role", "aws:iam/rolePolicyAttachment:RolePolicyAttachment", "aws:eks/cluster:Cluster",
                  "aws:iam/openIdConnectProvider:OpenIdConnectProvider"),
        child_roles=(ChildRole("{name}-eksRole-role-", ("AmazonEKSClusterPolicy",), "eks.amazonaws.com"),),
        evidence=(eks("nodejs/eks/cluster/cluster.ts"), eks("nodejs/eks/servicerole.ts"))),
    "eks:index:ManagedNodeGroup": TypeActions(
        # Given a launch template and a node role ARN, pulumi-eks registers the node group alone.
        children=("aws:eks/nodeGroup:NodeGroup",),
        evidence=(eks("nodejs/eks/nodes/nodegroup.ts"),),
        passes_role=("nodeRoleArn", "eks.amazonaws.com")),
    # --- observability --------------------------------------------------------------------------------------------
    "aws:amp/workspace:Workspace": TypeActions(
        create=("aps:CreateWorkspace", "aps:DescribeWorkspace", "aps:TagResource"),
        read=("aps:DescribeWorkspace", "aps:ListTagsForResource"),
        update=("aps:UpdateWorkspaceAlias", "aps:TagResource", "aps:UntagResource"),
        delete=("aps:DeleteWorkspace", "aps:DescribeWorkspace"),
        evidence=(f"{TF_AWS} internal/service/amp/workspace.go",)),
    "aws:amp/scraper:Scraper": TypeActions(
        create=("aps:CreateScraper", "aps:DescribeScraper", "aps:TagResource", "eks:DescribeCluster",
                "ec2:DescribeSubnets", "ec2:DescribeSecurityGroups"),
        read=("aps:DescribeScraper", "aps:ListTagsForResource"),
        update=("aps:UpdateScraper", "aps:TagResource", "aps:UntagResource"),
        delete=("aps:DeleteScraper", "aps:DescribeScraper"),
        evidence=(f"{TF_AWS} internal/service/amp/scraper.go",),
        service_linked_roles=("scraper.aps.amazonaws.com",)),
    "aws:amp/ruleGroupNamespace:RuleGroupNamespace": TypeActions(
        create=("aps:CreateRuleGroupsNamespace", "aps:DescribeRuleGroupsNamespace", "aps:TagResource"),
        read=("aps:DescribeRuleGroupsNamespace",), update=("aps:PutRuleGroupsNamespace", "aps:TagResource"),
        delete=("aps:DeleteRuleGroupsNamespace",),
        evidence=(f"{TF_AWS} internal/service/amp/rule_group_namespace.go",)),
    "aws:amp/alertManagerDefinition:AlertManagerDefinition": TypeActions(
        create=("aps:CreateAlertManagerDefinition", "aps:DescribeAlertManagerDefinition"),
        read=("aps:DescribeAlertManagerDefinition",), update=("aps:PutAlertManagerDefinition",),
        delete=("aps:DeleteAlertManagerDefinition",),
        evidence=(f"{TF_AWS} internal/service/amp/alert_manager_definition.go",)),
    # --- node termination handler (self-managed groups) -------------------------------------------------------------
    "aws:autoscaling/lifecycleHook:LifecycleHook": TypeActions(
        create=("autoscaling:PutLifecycleHook",), read=("autoscaling:DescribeLifecycleHooks",),
        update=("autoscaling:PutLifecycleHook",), delete=("autoscaling:DeleteLifecycleHook",),
        evidence=(f"{TF_AWS} internal/service/autoscaling/lifecycle_hook.go",)),
    "aws:autoscaling/tag:Tag": TypeActions(
        create=("autoscaling:CreateOrUpdateTags",), read=("autoscaling:DescribeTags",),
        update=("autoscaling:CreateOrUpdateTags",), delete=("autoscaling:DeleteTags",),
        evidence=(f"{TF_AWS} internal/service/autoscaling/tag.go",)),
    # --- provider look-ups (invokes) ------------------------------------------------------------------------------
    "aws:index/getCallerIdentity:getCallerIdentity": TypeActions(
        read=("sts:GetCallerIdentity",), evidence=(f"{TF_AWS} internal/service/sts/caller_identity_data_source.go",)),
    "aws:index/getAvailabilityZones:getAvailabilityZones": TypeActions(
        read=("ec2:DescribeAvailabilityZones",),
        evidence=(f"{TF_AWS} internal/service/ec2/ec2_availability_zones_data_source.go",)),
    "aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings": TypeActions(
        read=("ec2:DescribeInstanceTypeOfferings",),
        evidence=(tf("internal/service/ec2/ec2_instance_type_offerings_data_source.go",
                     "0593466d96e383de3f75587805537f6e590ebf4e"),)),
    "aws:ec2/getVpcs:getVpcs": TypeActions(
        read=("ec2:DescribeVpcs",), evidence=(f"{TF_AWS} internal/service/ec2/vpc_vpcs_data_source.go",)),
    "aws:ec2/getVpc:getVpc": TypeActions(
        # The VPC, three of its attributes, and its main route table (a failure there is only logged).
        read=("ec2:DescribeVpcs", "ec2:DescribeVpcAttribute", "ec2:DescribeRouteTables"),
        evidence=(tf("internal/service/ec2/vpc_data_source.go", "01606926a0c0ab9174aec440f976a48b0baee722"),)),
    "aws:ec2/getSubnets:getSubnets": TypeActions(
        read=("ec2:DescribeSubnets",), evidence=(f"{TF_AWS} internal/service/ec2/vpc_subnets_data_source.go",)),
    "aws:ec2/getSubnet:getSubnet": TypeActions(
        read=("ec2:DescribeSubnets",),
        evidence=(tf("internal/service/ec2/vpc_subnet_data_source.go", "0783fd09cdfa9201dae19db722eb7151c932ba7d"),)),
    "aws:eks/getAddonVersion:getAddonVersion": TypeActions(
        read=("eks:DescribeAddonVersions",), evidence=(f"{TF_AWS} internal/service/eks/addon_version_data_source.go",)),
    "aws:ssm/getParameter:getParameter": TypeActions(
        read=("ssm:GetParameter",), evidence=(f"{TF_AWS} internal/service/ssm/parameter_data_source.go",)),
    "aws:eks/getNodeGroup:getNodeGroup": TypeActions(
        read=("eks:DescribeNodegroup",), evidence=(f"{TF_AWS} internal/service/eks/node_group_data_source.go",)),
    "aws:iam/getSessionContext:getSessionContext": TypeActions(
        # An assumed-role session's ARN is resolved to its role with GetRole: the deployer's own role.
        read=("iam:GetRole",), roles="caller",
        evidence=(f"{TF_AWS} internal/service/iam/session_context_data_source.go (aws-sdk-go-v2 version)",)),
    "aws:iam/getRoles:getRoles": TypeActions(
        read=("iam:ListRoles",),
        evidence=(tf("internal/service/iam/roles_data_source.go", "07e0d0b940f57c782f8fcc9ccfd8b19f59383b51"),)),
    # The taken-name look-ups (platform/taken_names.py, which names their actions) read the one group or queue they
    # list, when there is one: a plan of a fresh account lists only, so the reads come in as children.
    LOG_GROUPS_TOKEN: TypeActions(
        read=READ_ACTIONS[LOG_GROUPS_TOKEN], children=(LOG_GROUP_TOKEN,),
        evidence=(tf("internal/service/logs/groups_data_source.go", "0a44c8632d7906fdf977d03d5497265a195bc583"),)),
    LOG_GROUP_TOKEN: TypeActions(
        read=READ_ACTIONS[LOG_GROUP_TOKEN],
        evidence=(tf("internal/service/logs/group_data_source.go", "0ac6a8e1d84d7dc48f49354deca23f694d2a6431"),)),
    QUEUES_TOKEN: TypeActions(
        read=READ_ACTIONS[QUEUES_TOKEN], children=(QUEUE_TOKEN,),
        evidence=(tf("internal/service/sqs/queues_data_source.go", "1bf14ce2417cb8628a750634bac3dc28975387c4"),)),
    QUEUE_TOKEN: TypeActions(
        read=READ_ACTIONS[QUEUE_TOKEN],
        evidence=(tf("internal/service/sqs/queue_data_source.go", "0148137dc6fb802b97b74036846777ab15c0f9ad"),)),
    # The library's own look-up of an adopted cluster's node groups (with teams): every group, the launch template
    # version each launches from.
    NODE_GROUP_METADATA_TOKEN: TypeActions(
        read=("eks:ListNodegroups", "eks:DescribeNodegroup", "ec2:DescribeLaunchTemplateVersions"),
        evidence=("eks-karpenter components/eks_karpenter/platform/preflight/hook.py (node_group_metadata: boto3 "
                  "list_nodegroups, describe_nodegroup, describe_launch_template_versions)",)),
    "aws:eks/getCluster:getCluster": TypeActions(
        read=("eks:DescribeCluster",), evidence=(f"{TF_AWS} internal/service/eks/cluster_data_source.go",)),
    "aws:iam/getOpenIdConnectProvider:getOpenIdConnectProvider": TypeActions(
        # Looked up by URL: list the account's providers, then read each until the URL matches.
        read=("iam:ListOpenIDConnectProviders", "iam:GetOpenIDConnectProvider"),
        evidence=(tf("internal/service/iam/openid_connect_provider_data_source.go",
                     "0413c661ec1b94f3033c98f3fbd1e8c1b2725589"),)),
}
"""Pulumi type token (resource, component or invoke) -> what its create, read, update and delete call."""

NO_AWS_API = ("eks-karpenter:", "kubernetes:", "pulumi:providers:")
"""Type prefixes that call no AWS API: this library's components, Kubernetes objects (the cluster's API, which the
deploy role reaches through its EKS access entry), and provider resources; but for the library's own look-ups
of AWS that have a row above."""


def expanded(type_: str) -> TypeActions:
    """The row of `type_` with its children's rows merged in (a component's own row has none of its own actions).
    Raises KeyError naming a type without a row."""
    row = ACTIONS[type_]
    if not row.children:
        return row
    parts = [row, *(expanded(child) for child in row.children)]
    return TypeActions(
        create=tuple(a for p in parts for a in p.create), read=tuple(a for p in parts for a in p.read),
        update=tuple(a for p in parts for a in p.update), delete=tuple(a for p in parts for a in p.delete),
        evidence=tuple(e for p in parts for e in p.evidence), child_roles=row.child_roles,
        passes_role=row.passes_role,
        service_linked_roles=tuple(s for p in parts for s in p.service_linked_roles), notes=row.notes)



