"""NodeClass and NodePool resources: one Karpenter custom resource each, from a manifest rendered by manifests.py.

They are typed `CustomResource`s rather than components wrapping one: a platform may hold hundreds of pools, and
a wrapper would double the registrations (and the preview time) per pool for no extra resource. The Kubernetes
provider and the dependency on the Karpenter install (its CRDs and controller) come from the caller's `opts`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict

import pulumi
import pulumi_kubernetes as k8s

from components.nodepool.config import NodeClassConfig
from components.nodepool.manifests import render_node_class


class NodeClassArgs(TypedDict):
    """Inputs of NodeClass."""

    manifest: dict[str, Any]
    """The EC2NodeClass manifest (`manifests.render_node_class`)."""


class NodePoolArgs(TypedDict):
    """Inputs of NodePool."""

    manifest: dict[str, Any]
    """The NodePool manifest (`manifests.render_node_pool`)."""


def _check(manifest: dict[str, Any], api_version: str, kind: str) -> None:
    if (manifest.get("apiVersion"), manifest.get("kind")) != (api_version, kind):
        raise ValueError(f"expected a {api_version} {kind} manifest, got {manifest.get('apiVersion')} "
                         f"{manifest.get('kind')}")


class NodeClass(k8s.apiextensions.CustomResource):
    """A Karpenter EC2NodeClass (`karpenter.k8s.aws/v1`): AMI, subnets, security groups, node IAM, disks."""

    def __init__(self, name: str, args: NodeClassArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        manifest = args["manifest"]
        _check(manifest, "karpenter.k8s.aws/v1", "EC2NodeClass")
        super().__init__(name, api_version=manifest["apiVersion"], kind=manifest["kind"],
                         metadata=manifest["metadata"], spec=manifest["spec"], opts=opts)
        self.object_name: str = str(manifest["metadata"]["name"])
        """The EC2NodeClass name (what NodePools reference)."""

    @classmethod
    def from_config(cls, name: str, config: NodeClassConfig, *, cluster_name: pulumi.Input[str],
                    node_role_name: pulumi.Input[str], tags: Mapping[str, str],
                    opts: pulumi.ResourceOptions | None = None) -> NodeClass:
        """A NodeClass for a cluster known only as outputs (another stack's, through a StackReference).

        Only the spec depends on the cluster and the node role; the object's identity does not, so it is
        rendered with placeholders and the spec is rendered again once the outputs are known.
        """
        static = render_node_class(config, "placeholder", "placeholder", tags)
        spec = pulumi.Output.all(cluster_name, node_role_name).apply(
            lambda a: render_node_class(config, str(a[0]), str(a[1]), tags)["spec"])
        return cls(name, {"manifest": {**static, "spec": spec}}, opts)


class NodePool(k8s.apiextensions.CustomResource):
    """A Karpenter NodePool (`karpenter.sh/v1`): which instances Karpenter may launch, and when it removes them."""

    def __init__(self, name: str, args: NodePoolArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        manifest = args["manifest"]
        _check(manifest, "karpenter.sh/v1", "NodePool")
        super().__init__(name, api_version=manifest["apiVersion"], kind=manifest["kind"],
                         metadata=manifest["metadata"], spec=manifest["spec"], opts=opts)
        self.object_name: str = str(manifest["metadata"]["name"])
        """The NodePool name (the `karpenter.sh/nodepool` label of its nodes)."""
        self.node_class: str = str(manifest["spec"]["template"]["spec"]["nodeClassRef"]["name"])
        """The EC2NodeClass the pool's nodes use."""
