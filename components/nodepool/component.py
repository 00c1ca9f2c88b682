"""NodeClass and NodePool components: one Karpenter custom resource each, from a manifest rendered by manifests.py.

The Kubernetes provider and the dependency on the Karpenter install (its CRDs) come from the caller's `opts`.
"""

from __future__ import annotations

from typing import Any, TypedDict

import pulumi
import pulumi_kubernetes as k8s

from components._wiring import child_options


class NodeClassArgs(TypedDict):
    """Inputs of the NodeClass component."""

    manifest: dict[str, Any]
    """The EC2NodeClass manifest (`manifests.render_node_class`)."""


class NodePoolArgs(TypedDict):
    """Inputs of the NodePool component."""

    manifest: dict[str, Any]
    """The NodePool manifest (`manifests.render_node_pool`)."""


def _custom_resource(parent: pulumi.Resource, name: str, manifest: dict[str, Any],
                     opts: pulumi.ResourceOptions | None) -> pulumi.Output[str]:
    """Create the resource; return its object name as an output that depends on it (known at preview time)."""
    resource = k8s.apiextensions.CustomResource(
        name,
        api_version=manifest["apiVersion"],
        kind=manifest["kind"],
        metadata=manifest["metadata"],
        spec=manifest["spec"],
        opts=child_options(parent, opts),
    )
    object_name = str(manifest["metadata"]["name"])
    return resource.urn.apply(lambda _: object_name)


class NodeClass(pulumi.ComponentResource):
    """A Karpenter EC2NodeClass (`karpenter.k8s.aws/v1`): AMI, subnets, security groups, node IAM, disks."""

    name: pulumi.Output[str]
    """The EC2NodeClass name (what NodePools reference)."""

    def __init__(self, name: str, args: NodeClassArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("eks-karpenter:index:NodeClass", name, None, opts)
        self.name = _custom_resource(self, name, args["manifest"], opts)
        self.register_outputs({"name": self.name})


class NodePool(pulumi.ComponentResource):
    """A Karpenter NodePool (`karpenter.sh/v1`): which instances Karpenter may launch, and when it removes them."""

    name: pulumi.Output[str]
    """The NodePool name (the `karpenter.sh/nodepool` label of its nodes)."""
    node_class: pulumi.Output[str]
    """The EC2NodeClass the pool's nodes use."""

    def __init__(self, name: str, args: NodePoolArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("eks-karpenter:index:NodePool", name, None, opts)
        manifest = args["manifest"]
        self.name = _custom_resource(self, name, manifest, opts)
        self.node_class = pulumi.Output.from_input(str(manifest["spec"]["template"]["spec"]["nodeClassRef"]["name"]))
        self.register_outputs({"name": self.name, "nodeClass": self.node_class})
