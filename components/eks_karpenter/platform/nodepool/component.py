"""NodeClass and NodePool resources: one Karpenter custom resource each, from a manifest rendered by manifests.py.

They are typed `CustomResource`s rather than components wrapping one: a platform may hold hundreds of pools, and
a wrapper would double the registrations (and the preview time) per pool for no extra resource. The Kubernetes
provider and the dependency on the Karpenter install (its CRDs and controller) come from the caller's `opts`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, TypedDict

import pulumi
import pulumi_kubernetes as k8s

from eks_karpenter.platform.nodepool.config import NodeClassConfig
from eks_karpenter.platform.nodepool.manifests import render_node_class


class NodeClassArgs(TypedDict):
    """Inputs of NodeClass."""

    manifest: dict[str, Any]
    """The EC2NodeClass manifest (`manifests.render_node_class`)."""


class NodePoolArgs(TypedDict):
    """Inputs of NodePool."""

    manifest: dict[str, Any]
    """The NodePool manifest (`manifests.render_node_pool`)."""


class _KarpenterObject(k8s.apiextensions.CustomResource):
    """One Karpenter object from its rendered manifest, refusing a manifest of another kind."""

    API_VERSION: ClassVar[str]
    KIND: ClassVar[str]

    def __init__(self, name: str, manifest: dict[str, Any], opts: pulumi.ResourceOptions | None) -> None:
        if (manifest.get("apiVersion"), manifest.get("kind")) != (self.API_VERSION, self.KIND):
            raise ValueError(f"expected a {self.API_VERSION} {self.KIND} manifest, got {manifest.get('apiVersion')} "
                             f"{manifest.get('kind')}")
        super().__init__(name, api_version=self.API_VERSION, kind=self.KIND, metadata=manifest["metadata"],
                         spec=manifest["spec"], opts=opts)
        self.object_name: str = str(manifest["metadata"]["name"])
        """The object's name in the cluster."""


class NodeClass(_KarpenterObject):
    """A Karpenter EC2NodeClass (`karpenter.k8s.aws/v1`): AMI, subnets, security groups, node IAM, disks."""

    API_VERSION = "karpenter.k8s.aws/v1"
    KIND = "EC2NodeClass"

    def __init__(self, name: str, args: NodeClassArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(name, args["manifest"], opts)

    @classmethod
    def from_config(cls, name: str, config: NodeClassConfig, *, cluster_name: pulumi.Input[str],
                    node_role_name: pulumi.Input[str], tags: Mapping[str, str],
                    opts: pulumi.ResourceOptions | None = None) -> NodeClass:
        """A NodeClass for a cluster known only as outputs (another stack's, through a StackReference).

        Only the spec depends on the cluster and the node role; the object's identity does not, so it is
        rendered with placeholders and the spec is rendered again once the outputs are known.
        """
        static = render_node_class(config, "placeholder", "placeholder", tags)
        spec = cls.manifest_for(config, cluster_name=cluster_name, node_role_name=node_role_name, tags=tags).apply(
            lambda manifest: manifest["spec"])
        return cls(name, {"manifest": {**static, "spec": spec}}, opts)

    @staticmethod
    def manifest_for(config: NodeClassConfig, *, cluster_name: pulumi.Input[str], node_role_name: pulumi.Input[str],
                     tags: Mapping[str, str]) -> pulumi.Output[dict[str, Any]]:
        """The manifest `from_config` sends, once the cluster and role are known: what a consumer stack checks
        against the platform's admission policies (`consumer_admission`) before anything is sent."""
        return pulumi.Output.all(cluster_name, node_role_name).apply(
            lambda a: render_node_class(config, str(a[0]), str(a[1]), tags))


class NodePool(_KarpenterObject):
    """A Karpenter NodePool (`karpenter.sh/v1`): which instances Karpenter may launch, and when it removes them."""

    API_VERSION = "karpenter.sh/v1"
    KIND = "NodePool"

    def __init__(self, name: str, args: NodePoolArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(name, args["manifest"], opts)
        self.node_class: str = str(args["manifest"]["spec"]["template"]["spec"]["nodeClassRef"]["name"])
        """The EC2NodeClass the pool's nodes use."""
