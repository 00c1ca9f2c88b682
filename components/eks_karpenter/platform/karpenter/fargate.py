"""A Fargate profile for the Karpenter controller (`controllerOnFargate: true`).

Running the controller on Fargate keeps it off every node it manages without a system node group. Pod Identity
does not work on Fargate, so this mode goes with IRSA (a config rule enforces it).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import NotRequired, TypedDict

import pulumi
import pulumi_aws as aws

from eks_karpenter.arns import partition_of
from eks_karpenter.platform.iam.names import IamNames
from eks_karpenter.platform.iam.policy import aws_managed_policy_arn, fargate_pod_execution_trust_policy
from eks_karpenter.platform.karpenter.component import CONTROLLER_RELEASE
from eks_karpenter.platform.wiring import caller_identity, child_options

# The chart's pod selector labels (chart name, release name): the profile selects exactly the controller's pods.
CONTROLLER_POD_LABELS = {"app.kubernetes.io/name": "karpenter", "app.kubernetes.io/instance": CONTROLLER_RELEASE}


class KarpenterFargateProfileArgs(TypedDict):
    """Inputs of the KarpenterFargateProfile component."""

    clusterName: str
    """Cluster the profile belongs to."""
    region: str
    """AWS region."""
    namespace: str
    """The controller's namespace."""
    subnetIds: pulumi.Input[Sequence[str]]
    """Private subnets for the Fargate pods (Fargate refuses public subnets)."""
    tags: dict[str, str]
    """Tags for the role and the profile."""
    iamNames: NotRequired[IamNames]
    """How the pod execution role is named (default: per region)."""
    permissionsBoundary: NotRequired[str | None]
    """Permissions boundary (a managed policy ARN) on the pod execution role; None: no boundary."""


class KarpenterFargateProfile(pulumi.ComponentResource):
    """The pod execution role and the Fargate profile that select the Karpenter controller's pods."""

    profile_name: pulumi.Output[str]
    """Fargate profile name."""

    def __init__(self, name: str, args: KarpenterFargateProfileArgs,
                 opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("eks-karpenter:index:KarpenterFargateProfile", name, None, opts)
        cluster, region = args["clusterName"], args["region"]
        partition = partition_of(region)
        child = child_options(self, opts)
        account = caller_identity(self).account_id
        role = aws.iam.Role(
            f"{name}-pod-execution", name=(args.get("iamNames") or IamNames(cluster, region)).role("karpenter-fargate"),
            assume_role_policy=account.apply(
                lambda a: json.dumps(fargate_pod_execution_trust_policy(partition, region, a, cluster))),
            permissions_boundary=args.get("permissionsBoundary"), tags=args["tags"], opts=child)
        attachment = aws.iam.RolePolicyAttachment(
            f"{name}-pod-execution", role=role.name,
            policy_arn=aws_managed_policy_arn(partition, "AmazonEKSFargatePodExecutionRolePolicy"),
            opts=pulumi.ResourceOptions(parent=role))
        profile = aws.eks.FargateProfile(
            name, cluster_name=cluster, fargate_profile_name="karpenter", pod_execution_role_arn=role.arn,
            subnet_ids=args["subnetIds"],
            selectors=[aws.eks.FargateProfileSelectorArgs(namespace=args["namespace"], labels=CONTROLLER_POD_LABELS)],
            tags=args["tags"], opts=child_options(self, opts, attachment))
        self.profile_name = profile.fargate_profile_name
        self.register_outputs({"profileName": self.profile_name})
