"""The ownership label on this stack's Helm releases: an `after_create`/`after_update` hook that labels every
stored revision of a release (the Secrets Helm v3 keeps it in, `owner=helm,name=<release>`) with
`eks-karpenter.io/stack=<project>.<stack>` (`adopted.release_owner`).

Why a label and not the description: Helm's upgrade keeps the last revision's custom labels and a rollback (a
`helm rollback`, or the one a failed `atomic` upgrade does) copies the target revision's, while both replace the
description; a `pulumi import` changes neither. Labelling every revision, not only the newest, keeps the label
whichever revision a rollback returns to. Pulumi's Helm release cannot set storage labels itself, so the hook
does, with the stack's own verified client (`stack_cluster.py`). A label it cannot set is a warning with the
command that sets it, never a failed deploy: the preflight then asks for that command.
"""

from __future__ import annotations

import pulumi

from eks_karpenter.labels import HELM_OWNER_LABEL, RELEASE_OWNER_LABEL
from eks_karpenter.platform.adopted import label_release_command
from eks_karpenter.platform.stack_cluster import OtherCluster, StackCluster

HOOK = "eks-karpenter-release-owner"


class ReleaseOwner:
    """The labelling hook for one stack; `binding` for its releases, `hook` to add to another binding."""

    def __init__(self, cluster: StackCluster, owner: str) -> None:
        self.cluster = cluster
        self.owner = owner
        self.hook = pulumi.ResourceHook(HOOK, self._label)

    def _label(self, args: pulumi.ResourceHookArgs) -> None:
        from eks_karpenter.platform.kube import KubeError

        outputs = args.new_outputs or {}
        namespace, name = str(outputs.get("namespace") or ""), str(outputs.get("name") or "")
        if not (namespace and name):
            return
        try:
            self.cluster.api().label_secrets(namespace, f"{HELM_OWNER_LABEL}=helm,name={name}",
                                             {RELEASE_OWNER_LABEL: self.owner})
        except (OtherCluster, KubeError) as exc:
            pulumi.log.warn(f"Helm release {namespace}/{name} is not labelled as this stack's ({exc}); the next "
                            "preflight would take it for another tool's. Label it: "
                            f"{label_release_command(namespace, name, self.owner)}")

    @property
    def binding(self) -> pulumi.ResourceHookBinding:
        return pulumi.ResourceHookBinding(after_create=[self.hook], after_update=[self.hook])
