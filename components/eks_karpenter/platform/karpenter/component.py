"""Karpenter install: the CRD chart, then the controller chart, as Helm releases."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NotRequired, TypedDict

import pulumi
import pulumi_kubernetes as k8s

from eks_karpenter import versions
from eks_karpenter.platform.adopted import release_marker
from eks_karpenter.platform.karpenter.config import KarpenterConfig
from eks_karpenter.platform.karpenter.values import controller_values, crd_values
from eks_karpenter.platform.wiring import child_options

CONTROLLER_RELEASE = "karpenter"
"""Helm release name of the controller: part of its pods' labels (`app.kubernetes.io/instance`)."""
CRD_RELEASE = "karpenter-crd"


class KarpenterArgs(TypedDict):
    """Inputs of the Karpenter component."""

    config: KarpenterConfig
    """Validated Karpenter config."""
    clusterName: str
    """EKS cluster name (`settings.clusterName`)."""
    clusterEndpoint: pulumi.Input[str]
    """API server endpoint (`settings.clusterEndpoint`)."""
    region: NotRequired[str]
    """AWS region, given to the controller as `AWS_REGION` so it never needs the instance metadata service."""
    interruptionQueueName: pulumi.Input[str] | None
    """Interruption queue NAME (`settings.interruptionQueue`); None disables interruption handling."""
    controllerRoleArn: pulumi.Input[str]
    """Controller role ARN: annotated on the service account for IRSA; unused with Pod Identity."""
    dependsOn: Sequence[pulumi.Resource]
    """What the controller needs first, and must outlive on destroy: node groups and add-ons, every piece of
    the controller's IAM (policy attachments, Pod Identity association or IRSA role, the node access entry),
    the interruption queue and its policy, and its namespace."""
    deleteTimeout: str
    """How long destroy waits for each release to uninstall before failing (`customTimeouts.delete`)."""
    controllerHooks: NotRequired[pulumi.ResourceHookBinding]
    """Resource hooks of the controller release (the destroy guard's drain: `teardown_hooks`; the ownership
    label: `release_owner`)."""
    crdHooks: NotRequired[pulumi.ResourceHookBinding]
    """Resource hooks of the CRD release (the ownership label: `release_owner`)."""
    extraValues: NotRequired[dict[str, Any]]
    """Controller chart values merged over the config's (top-level keys replaced), e.g. the ServiceMonitor."""
    systemNodeGroup: NotRequired[bool]
    """Whether the cluster has this library's system node group (default True); False on an existing cluster,
    whose nodes lack its label."""


class Karpenter(pulumi.ComponentResource):
    """Karpenter from its two OCI charts, both pinned to one version.

    Helm installs a chart's `crds/` once and never upgrades them, so the CRDs come from the `karpenter-crd` chart
    (templates, upgraded with every version change) and the controller chart skips its own `crds/`.
    """

    controller: k8s.helm.v3.Release
    """The controller release: NodePools and EC2NodeClasses depend on it."""
    version: pulumi.Output[str]
    """Installed Karpenter version."""

    def __init__(self, name: str, args: KarpenterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("eks-karpenter:index:Karpenter", name, None, opts)
        cfg = args["config"]
        system_node_group = args.get("systemNodeGroup", True)
        extra = dict(args.get("extraValues", {}))
        timeouts = pulumi.ResourceOptions(custom_timeouts=pulumi.CustomTimeouts(delete=args["deleteTimeout"]))
        crds = k8s.helm.v3.Release(
            f"{name}-crd",
            name=CRD_RELEASE,
            chart=versions.KARPENTER_CRD_CHART,
            version=cfg.version,
            namespace=cfg.namespace,
            values=crd_values(),
            description=release_marker(pulumi.get_project(), pulumi.get_stack()),
            take_ownership=cfg.adopt_existing_crds or None,
            # CRDs are cluster-scoped and hold every NodePool: a failed upgrade must roll back, not half-apply.
            atomic=True,
            opts=pulumi.ResourceOptions.merge(child_options(self, opts, *args["dependsOn"]), pulumi.ResourceOptions(
                custom_timeouts=timeouts.custom_timeouts, hooks=args.get("crdHooks"))),
        )
        values = pulumi.Output.all(args["clusterEndpoint"], args["interruptionQueueName"],
                                   args["controllerRoleArn"]).apply(
            lambda a: controller_values(cfg, cluster_name=args["clusterName"], cluster_endpoint=a[0],
                                        interruption_queue_name=a[1],
                                        irsa_role_arn=a[2] if cfg.identity == "irsa" else None,
                                        system_node_group=system_node_group, region=args.get("region")) | extra)
        self.controller = k8s.helm.v3.Release(
            f"{name}-controller",
            name=CONTROLLER_RELEASE,
            chart=versions.KARPENTER_CHART,
            version=cfg.version,
            namespace=cfg.namespace,
            skip_crds=True,
            values=values,
            description=release_marker(pulumi.get_project(), pulumi.get_stack()),
            atomic=True,
            opts=pulumi.ResourceOptions.merge(child_options(self, opts, crds, *args["dependsOn"]),
                                              pulumi.ResourceOptions(custom_timeouts=timeouts.custom_timeouts,
                                                                     hooks=args.get("controllerHooks"))),
        )
        self.version = pulumi.Output.from_input(cfg.version)
        self.register_outputs({"version": self.version})
