"""Namespaces component: one Kubernetes Namespace per spec from plan.py."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict

import pulumi
import pulumi_kubernetes as k8s

from eks_karpenter.platform.namespaces.plan import NamespaceSpec


class NamespacesArgs(TypedDict):
    """Inputs of the Namespaces component."""

    namespaces: Sequence[NamespaceSpec]
    """What to create (`plan.platform_namespaces`)."""
    deleteTimeout: str
    """How long destroy waits for a namespace to finish terminating (its finalizers) before failing."""


class Namespaces(pulumi.ComponentResource):
    """The platform's non-built-in namespaces. Releases depend on `for_namespace(...)`, so each namespace is
    created before the releases in it and deleted after them. Team namespaces are `retainOnDelete`.

    The Kubernetes provider comes from `opts` (`providers=`). Since pulumi-kubernetes 4.29 a create of an object
    that already exists fails with AlreadyExists (no silent upsert): on an adopted cluster where a namespace
    already exists, `pulumi import` it into this resource first.
    """

    def __init__(self, name: str, args: NamespacesArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("eks-karpenter:index:Namespaces", name, None, opts)
        self._by_name: dict[str, k8s.core.v1.Namespace] = {}
        for spec in args["namespaces"]:
            self._by_name[spec.name] = k8s.core.v1.Namespace(
                f"{name}-{spec.name}",
                metadata=k8s.meta.v1.ObjectMetaArgs(name=spec.name, labels=spec.labels()),
                opts=pulumi.ResourceOptions(
                    parent=self, retain_on_delete=spec.retain_on_delete,
                    custom_timeouts=pulumi.CustomTimeouts(delete=args["deleteTimeout"])))
        self.names: list[str] = sorted(self._by_name)
        """Namespaces this component created."""
        self.register_outputs({"names": self.names})

    def for_namespace(self, namespace: str) -> list[pulumi.Resource]:
        """What a release into `namespace` must depend on: its Namespace, or nothing for a built-in one."""
        found = self._by_name.get(namespace)
        return [found] if found is not None else []
