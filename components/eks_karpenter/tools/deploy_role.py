"""The deploy role's least-privilege IAM policy, generated from the resource types a plan contains.

`pulumi up` runs as a deploy role (CI's OIDC role, or a person's). It needs the actions that create, read,
update, tag and delete exactly the resource types the program registers, plus the provider look-ups it invokes,
and nothing else. Each type maps to its actions here; a type with no entry fails the generation (and the test
that plans every committed stack), so a new resource type cannot ship without saying what it needs.

Resources are `*`: names and ARNs are only known once created, and the stack-wide tags are not on every API
call's request. `iam:PassRole` is the one action that widens a role's reach, so it is limited to the services the
roles are passed to. Kubernetes objects need no IAM action: they go through the cluster's API with the deploy
role's EKS access entry (one listed under `access.deployers`: the cluster's creator gets no implicit entry).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

_EC2_TAGS = ("ec2:CreateTags", "ec2:DeleteTags")
_SG = ("ec2:CreateSecurityGroup", "ec2:DeleteSecurityGroup", "ec2:DescribeSecurityGroups",
       "ec2:DescribeSecurityGroupRules", "ec2:AuthorizeSecurityGroupIngress", "ec2:AuthorizeSecurityGroupEgress",
       "ec2:RevokeSecurityGroupIngress", "ec2:RevokeSecurityGroupEgress")

ACTIONS_BY_TYPE: dict[str, tuple[str, ...]] = {
    # network
    "aws:ec2/vpc:Vpc": ("ec2:CreateVpc", "ec2:DeleteVpc", "ec2:DescribeVpcs", "ec2:DescribeVpcAttribute",
                        "ec2:ModifyVpcAttribute", *_EC2_TAGS),
    "aws:ec2/subnet:Subnet": ("ec2:CreateSubnet", "ec2:DeleteSubnet", "ec2:DescribeSubnets",
                              "ec2:ModifySubnetAttribute", *_EC2_TAGS),
    "aws:ec2/internetGateway:InternetGateway": ("ec2:CreateInternetGateway", "ec2:DeleteInternetGateway",
                                                "ec2:AttachInternetGateway", "ec2:DetachInternetGateway",
                                                "ec2:DescribeInternetGateways", *_EC2_TAGS),
    "aws:ec2/eip:Eip": ("ec2:AllocateAddress", "ec2:ReleaseAddress", "ec2:DescribeAddresses",
                        "ec2:DescribeAddressesAttribute", "ec2:DisassociateAddress", *_EC2_TAGS),
    "aws:ec2/natGateway:NatGateway": ("ec2:CreateNatGateway", "ec2:DeleteNatGateway", "ec2:DescribeNatGateways",
                                      *_EC2_TAGS),
    "aws:ec2/routeTable:RouteTable": ("ec2:CreateRouteTable", "ec2:DeleteRouteTable", "ec2:DescribeRouteTables",
                                      *_EC2_TAGS),
    "aws:ec2/route:Route": ("ec2:CreateRoute", "ec2:DeleteRoute", "ec2:ReplaceRoute", "ec2:DescribeRouteTables"),
    "aws:ec2/routeTableAssociation:RouteTableAssociation": ("ec2:AssociateRouteTable", "ec2:DisassociateRouteTable",
                                                            "ec2:ReplaceRouteTableAssociation",
                                                            "ec2:DescribeRouteTables"),
    "aws:ec2/tag:Tag": ("ec2:CreateTags", "ec2:DeleteTags", "ec2:DescribeTags"),
    "aws:ec2/flowLog:FlowLog": ("ec2:CreateFlowLogs", "ec2:DeleteFlowLogs", "ec2:DescribeFlowLogs",
                                "logs:CreateLogDelivery", "logs:DeleteLogDelivery", *_EC2_TAGS),
    "aws:ec2/launchTemplate:LaunchTemplate": ("ec2:CreateLaunchTemplate", "ec2:CreateLaunchTemplateVersion",
                                              "ec2:DeleteLaunchTemplate", "ec2:DescribeLaunchTemplates",
                                              "ec2:DescribeLaunchTemplateVersions", "ec2:ModifyLaunchTemplate",
                                              *_EC2_TAGS),
    # logs, events, queues, keys
    "aws:cloudwatch/logGroup:LogGroup": ("logs:CreateLogGroup", "logs:DeleteLogGroup", "logs:DescribeLogGroups",
                                         "logs:PutRetentionPolicy", "logs:DeleteRetentionPolicy",
                                         "logs:TagResource", "logs:UntagResource", "logs:ListTagsForResource"),
    "aws:cloudwatch/eventRule:EventRule": ("events:PutRule", "events:DeleteRule", "events:DescribeRule",
                                           "events:TagResource", "events:UntagResource",
                                           "events:ListTagsForResource"),
    "aws:cloudwatch/eventTarget:EventTarget": ("events:PutTargets", "events:RemoveTargets",
                                               "events:ListTargetsByRule"),
    "aws:sqs/queue:Queue": ("sqs:CreateQueue", "sqs:DeleteQueue", "sqs:GetQueueAttributes", "sqs:SetQueueAttributes",
                            "sqs:GetQueueUrl", "sqs:TagQueue", "sqs:UntagQueue", "sqs:ListQueueTags"),
    "aws:sqs/queuePolicy:QueuePolicy": ("sqs:SetQueueAttributes", "sqs:GetQueueAttributes"),
    "aws:kms/key:Key": ("kms:CreateKey", "kms:DescribeKey", "kms:GetKeyPolicy", "kms:PutKeyPolicy",
                        "kms:GetKeyRotationStatus", "kms:EnableKeyRotation", "kms:UpdateKeyDescription",
                        "kms:ScheduleKeyDeletion", "kms:TagResource", "kms:UntagResource", "kms:ListResourceTags"),
    "aws:kms/alias:Alias": ("kms:CreateAlias", "kms:DeleteAlias", "kms:UpdateAlias", "kms:ListAliases"),
    # IAM
    "aws:iam/role:Role": ("iam:CreateRole", "iam:DeleteRole", "iam:GetRole", "iam:UpdateRole",
                          "iam:UpdateAssumeRolePolicy", "iam:TagRole", "iam:UntagRole", "iam:ListRolePolicies",
                          "iam:ListAttachedRolePolicies", "iam:ListInstanceProfilesForRole"),
    "aws:iam/policy:Policy": ("iam:CreatePolicy", "iam:DeletePolicy", "iam:GetPolicy", "iam:GetPolicyVersion",
                              "iam:CreatePolicyVersion", "iam:DeletePolicyVersion", "iam:ListPolicyVersions",
                              "iam:TagPolicy", "iam:UntagPolicy"),
    "aws:iam/rolePolicy:RolePolicy": ("iam:PutRolePolicy", "iam:GetRolePolicy", "iam:DeleteRolePolicy"),
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment": ("iam:AttachRolePolicy", "iam:DetachRolePolicy",
                                                          "iam:ListAttachedRolePolicies"),
    "aws:iam/serviceLinkedRole:ServiceLinkedRole": ("iam:CreateServiceLinkedRole", "iam:GetRole",
                                                    "iam:DeleteServiceLinkedRole",
                                                    "iam:GetServiceLinkedRoleDeletionStatus"),
    # EKS
    "eks:index:Cluster": ("eks:CreateCluster", "eks:DeleteCluster", "eks:DescribeCluster", "eks:UpdateClusterConfig",
                          "eks:UpdateClusterVersion", "eks:DescribeUpdate", "eks:TagResource", "eks:UntagResource",
                          "iam:CreateOpenIDConnectProvider", "iam:DeleteOpenIDConnectProvider",
                          "iam:GetOpenIDConnectProvider", "iam:TagOpenIDConnectProvider", "kms:DescribeKey",
                          "kms:CreateGrant", *_SG, *_EC2_TAGS),
    "eks:index:ManagedNodeGroup": ("eks:CreateNodegroup", "eks:DeleteNodegroup", "eks:DescribeNodegroup",
                                   "eks:UpdateNodegroupConfig", "eks:UpdateNodegroupVersion", "eks:DescribeUpdate",
                                   "eks:TagResource", "eks:UntagResource", "ec2:DescribeSubnets",
                                   "ec2:DescribeLaunchTemplateVersions", "iam:CreateServiceLinkedRole"),
    "aws:eks/addon:Addon": ("eks:CreateAddon", "eks:DeleteAddon", "eks:DescribeAddon", "eks:UpdateAddon",
                            "eks:DescribeAddonVersions", "eks:DescribeUpdate", "eks:TagResource"),
    "aws:eks/accessEntry:AccessEntry": ("eks:CreateAccessEntry", "eks:DeleteAccessEntry", "eks:DescribeAccessEntry",
                                        "eks:UpdateAccessEntry", "eks:TagResource", "eks:UntagResource"),
    "aws:eks/accessPolicyAssociation:AccessPolicyAssociation": ("eks:AssociateAccessPolicy",
                                                                "eks:DisassociateAccessPolicy",
                                                                "eks:ListAssociatedAccessPolicies"),
    "aws:eks/podIdentityAssociation:PodIdentityAssociation": ("eks:CreatePodIdentityAssociation",
                                                              "eks:DeletePodIdentityAssociation",
                                                              "eks:DescribePodIdentityAssociation",
                                                              "eks:UpdatePodIdentityAssociation", "eks:TagResource"),
    "aws:eks/nodeGroup:NodeGroup": ("eks:CreateNodegroup", "eks:DeleteNodegroup", "eks:DescribeNodegroup",
                                    "eks:UpdateNodegroupConfig", "eks:UpdateNodegroupVersion", "eks:DescribeUpdate",
                                    "eks:TagResource", "eks:UntagResource"),
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": ("ec2:AuthorizeSecurityGroupIngress",
                                                                  "ec2:RevokeSecurityGroupIngress",
                                                                  "ec2:DescribeSecurityGroupRules",
                                                                  "ec2:ModifySecurityGroupRules", *_EC2_TAGS),
    # observability
    "aws:cloudwatch/metricAlarm:MetricAlarm": ("cloudwatch:PutMetricAlarm", "cloudwatch:DeleteAlarms",
                                               "cloudwatch:DescribeAlarms", "cloudwatch:TagResource",
                                               "cloudwatch:UntagResource", "cloudwatch:ListTagsForResource"),
    "aws:amp/workspace:Workspace": ("aps:CreateWorkspace", "aps:DeleteWorkspace", "aps:DescribeWorkspace",
                                    "aps:UpdateWorkspaceAlias", "aps:TagResource", "aps:UntagResource",
                                    "aps:ListTagsForResource"),
    "aws:amp/scraper:Scraper": ("aps:CreateScraper", "aps:DeleteScraper", "aps:DescribeScraper",
                                "aps:UpdateScraper", "aps:TagResource", "aps:UntagResource",
                                "aps:ListTagsForResource", "eks:DescribeCluster", "ec2:DescribeSubnets",
                                "ec2:DescribeSecurityGroups", "iam:CreateServiceLinkedRole"),
    "aws:amp/ruleGroupNamespace:RuleGroupNamespace": ("aps:CreateRuleGroupsNamespace",
                                                      "aps:DeleteRuleGroupsNamespace",
                                                      "aps:DescribeRuleGroupsNamespace",
                                                      "aps:PutRuleGroupsNamespace", "aps:TagResource"),
    "aws:amp/alertManagerDefinition:AlertManagerDefinition": ("aps:CreateAlertManagerDefinition",
                                                              "aps:DeleteAlertManagerDefinition",
                                                              "aps:DescribeAlertManagerDefinition",
                                                              "aps:PutAlertManagerDefinition"),
    # provider look-ups (invokes)
    "aws:index/getCallerIdentity:getCallerIdentity": ("sts:GetCallerIdentity",),
    "aws:eks/getAddonVersion:getAddonVersion": ("eks:DescribeAddonVersions",),
    "aws:ssm/getParameter:getParameter": ("ssm:GetParameter",),
    "aws:eks/getNodeGroup:getNodeGroup": ("eks:DescribeNodegroup",),
    "aws:iam/getSessionContext:getSessionContext": (),
    "aws:iam/getRoles:getRoles": ("iam:ListRoles",),
    "aws:eks/getCluster:getCluster": ("eks:DescribeCluster",),
    "aws:iam/getOpenIdConnectProvider:getOpenIdConnectProvider": ("iam:GetOpenIDConnectProvider",),
}
"""Pulumi type token (resource or invoke) -> the IAM actions its create, read, update, tag and delete call."""

PASSES_ROLE_TO: dict[str, str] = {
    "eks:index:Cluster": "eks.amazonaws.com",
    "eks:index:ManagedNodeGroup": "eks.amazonaws.com",
    "aws:ec2/flowLog:FlowLog": "vpc-flow-logs.amazonaws.com",
    "aws:eks/podIdentityAssociation:PodIdentityAssociation": "pods.eks.amazonaws.com",
}
"""Types whose creation passes a role to a service (`iam:PassRole`, limited to that service)."""

NO_IAM = ("eks-karpenter:", "kubernetes:", "pulumi:providers:")
"""Type prefixes that call no AWS API: this library's components, and Kubernetes objects (the cluster's API)."""


def needs_iam(type_: str) -> bool:
    return not type_.startswith(NO_IAM)


def deploy_role_policy(types: Iterable[str]) -> dict[str, Any]:
    """The policy document for a deploy role that registers `types` (resource and invoke tokens). Raises
    KeyError naming any AWS type without an entry in ACTIONS_BY_TYPE."""
    wanted = sorted({t for t in types if needs_iam(t)})
    unknown = [t for t in wanted if t not in ACTIONS_BY_TYPE]
    if unknown:
        raise KeyError(f"no deploy-role actions for {', '.join(unknown)}: add them to ACTIONS_BY_TYPE")
    by_service: dict[str, set[str]] = {}
    for type_ in wanted:
        for action in ACTIONS_BY_TYPE[type_]:
            by_service.setdefault(action.split(":")[0], set()).add(action)
    statements: list[dict[str, Any]] = [
        {"Sid": f"{service.capitalize()}ForPlannedResources", "Effect": "Allow", "Action": sorted(actions),
         "Resource": "*"}
        for service, actions in sorted(by_service.items())]
    services = sorted({PASSES_ROLE_TO[t] for t in wanted if t in PASSES_ROLE_TO})
    if services:
        statements.append({"Sid": "PassRolesToTheirServicesOnly", "Effect": "Allow", "Action": "iam:PassRole",
                           "Resource": "*", "Condition": {"StringEquals": {"iam:PassedToService": services}}})
    return {"Version": "2012-10-17", "Statement": statements}


def plan_types(documents: Iterable[Mapping[str, Any]]) -> set[str]:
    """Every resource and invoke type of `plan --format json` documents."""
    types: set[str] = set()
    for document in documents:
        types |= {r["type"] for r in document["resources"]}
        types |= {i["token"] for i in document.get("invokes", ())}
    return types
