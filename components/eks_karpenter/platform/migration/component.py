"""The cut-over's Pulumi wiring: the Cluster Autoscaler Deployment patch and the imported node groups."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypedDict

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from eks_karpenter.platform.migration.config import MigrationConfig
from eks_karpenter.platform.migration.plan import (
    NODE_GROUP_FIELDS_LEFT_ALONE,
    autoscaler_patch,
    node_group_scaling,
    retained,
)


class LegacyGroupFacts(TypedDict):
    """What the preflight look-up found about one node group."""

    nodeRoleArn: str
    subnetIds: list[str]
    desiredSize: int


class MigrationArgs(TypedDict):
    """Inputs of the Migration component."""

    config: MigrationConfig
    """Validated migration config."""
    clusterName: str
    """The adopted cluster."""
    nodeGroups: Mapping[str, LegacyGroupFacts]
    """Each configured node group as the preflight found it."""
    after: Sequence[pulumi.Resource]
    """What must exist before Cluster Autoscaler steps back (the controller, the NodePools)."""


class Migration(pulumi.ComponentResource):
    """Phases 1-4 of the hand-off from Cluster Autoscaler to Karpenter, one `pulumi up` each.

    The Deployment patch owns only `spec.replicas` (server-side apply): today's count in phase 1, 0 after. The
    node groups are imported (nothing but their scaling is ever changed) in phases 1-3 and left in phase 4.
    """

    phase: pulumi.Output[int]
    """The phase this stack is in once applied."""
    cluster_autoscaler_replicas: pulumi.Output[int]
    """The replicas Cluster Autoscaler's Deployment is set to (today's count in phase 1, 0 after)."""
    node_group_names: pulumi.Output[list[str]]
    """The node groups the stack holds (phases 1-3; none in phase 4)."""

    def __init__(self, name: str, args: MigrationArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("eks-karpenter:index:Migration", name, None, opts)
        cfg, cluster = args["config"], args["clusterName"]
        after = pulumi.ResourceOptions(parent=self, depends_on=list(args["after"]))
        patch = autoscaler_patch(cfg)
        k8s.apps.v1.DeploymentPatch(f"{name}-cluster-autoscaler", metadata=patch["metadata"], spec=patch["spec"],
                                    opts=after)
        if cfg.manages_node_groups:
            for group in cfg.node_groups:
                found = args["nodeGroups"][group.name]
                scaling = node_group_scaling(group, cfg.phase, found["desiredSize"])
                ignored = [*NODE_GROUP_FIELDS_LEFT_ALONE, *(["scalingConfig.desiredSize"] if cfg.phase == 1 else [])]
                aws.eks.NodeGroup(
                    f"{name}-nodegroup-{group.name}", cluster_name=cluster, node_group_name=group.name,
                    node_role_arn=found["nodeRoleArn"], subnet_ids=found["subnetIds"],
                    scaling_config=aws.eks.NodeGroupScalingConfigArgs(
                        min_size=scaling.min_size, max_size=scaling.max_size, desired_size=scaling.desired_size),
                    opts=pulumi.ResourceOptions.merge(after, pulumi.ResourceOptions(
                        import_=f"{cluster}:{group.name}", ignore_changes=ignored,
                        retain_on_delete=retained(group, cfg.phase))))
        self.phase = pulumi.Output.from_input(cfg.phase)
        self.cluster_autoscaler_replicas = pulumi.Output.from_input(cfg.autoscaler_replicas)
        self.node_group_names = pulumi.Output.from_input(
            [g.name for g in cfg.node_groups] if cfg.manages_node_groups else [])
        self.register_outputs({"phase": self.phase, "clusterAutoscalerReplicas": self.cluster_autoscaler_replicas,
                               "nodeGroupNames": self.node_group_names})
