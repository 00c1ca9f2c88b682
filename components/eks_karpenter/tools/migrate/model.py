"""What the converter takes and gives: parsed documents in, a `Conversion` out (as stack config or v1
manifests), or a `LegacyImportError` listing every problem."""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from eks_karpenter.labels import AWS_GROUP
from eks_karpenter.tools.migrate.fields import NODECLASS_API, NODEPOOL_API

Doc = tuple[str, int, dict[str, Any]]
"""One parsed YAML document: (file name, position of the document in its file counting from 1, object)."""


class LegacyImportError(Exception):
    """The input cannot be converted; `problems` lists every reason, each naming file, document and field."""

    def __init__(self, problems: Iterable[str]) -> None:
        self.problems = list(problems)
        noun = "problem" if len(self.problems) == 1 else "problems"
        super().__init__(f"cannot import the legacy Karpenter objects, {len(self.problems)} {noun}:\n"
                         + "\n".join(self.problems))


@dataclass
class Conversion:
    """The converted objects, config-shaped (`name` plus upstream-spelled fields), and notes for the reader."""

    node_pools: list[dict[str, Any]]
    node_classes: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)
    origins: dict[str, str] = field(default_factory=dict)
    """Node class name -> the legacy document it came from (`file (document n): Kind 'name'`), for messages."""

    def config(self, node_role: str | None = None, project: str = "eks-karpenter") -> dict[str, Any]:
        """The stack-config keys in `project`'s namespace, ready to sit under `config:` in a stack file.

        Classes without `instanceProfile` leave `role` unset (the platform's node role) unless `node_role` is given.
        """
        classes = copy.deepcopy(self.node_classes)
        _check_role(node_role)
        if node_role:
            classes = [c if "instanceProfile" in c else _with_role(c, node_role) for c in classes]
        return {f"{project}:nodePools": copy.deepcopy(self.node_pools), f"{project}:nodeClasses": classes}

    def manifests(self, node_role: str | None = None, cluster_name: str | None = None) -> list[dict[str, Any]]:
        """v1 `EC2NodeClass` then `NodePool` objects.

        A class without `instanceProfile` needs the IAM role its nodes assume (`node_role`): v1alpha1 fell back
        to the controller's global default instance profile, which v1 no longer has. `cluster_name` is only used
        in the message of that error (stack config leaves `role` to the platform, which knows its node role).
        """
        _check_role(node_role)
        missing = [c["name"] for c in self.node_classes if "instanceProfile" not in c and "role" not in c]
        if missing and not node_role:
            hint = f" (e.g. KarpenterNodeRole-{cluster_name})" if cluster_name else ""
            raise LegacyImportError([
                f"{self.origins.get(name, f'EC2NodeClass {name!r}')}: no instanceProfile, so v1alpha1 used the "
                f"controller's default instance profile, which v1 dropped: EC2NodeClass {name!r} needs a role; pass "
                f"--node-role NAME, the IAM role name of your Karpenter nodes{hint}" for name in missing])
        objects: list[dict[str, Any]] = []
        for cls in self.node_classes:
            if "instanceProfile" not in cls and "role" not in cls and node_role:
                cls = _with_role(cls, node_role)
            spec = {k: copy.deepcopy(v) for k, v in cls.items() if k != "name"}
            objects.append({"apiVersion": NODECLASS_API, "kind": "EC2NodeClass",
                            "metadata": {"name": cls["name"]}, "spec": spec})
        for pool in self.node_pools:
            objects.append(_node_pool_manifest(pool))
        return objects


def _check_role(node_role: str | None) -> None:
    if node_role is not None and not re.fullmatch(r"[A-Za-z0-9_+=,.@-]{1,64}", node_role):
        raise LegacyImportError([f"--node-role {node_role!r}: give the IAM role's name (letters, digits and "
                                 "+=,.@_-, at most 64), not its ARN"])


def _with_role(cls: Mapping[str, Any], role: str) -> dict[str, Any]:
    """`role` placed where a reader expects it: after the selector terms."""
    out: dict[str, Any] = {}
    for key, value in cls.items():
        out[key] = value
        if key == "securityGroupSelectorTerms":
            out["role"] = role
    out.setdefault("role", role)
    return out


def _node_pool_manifest(pool: Mapping[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    for key in ("labels", "annotations"):
        if pool.get(key):
            meta[key] = copy.deepcopy(pool[key])
    tspec: dict[str, Any] = {"nodeClassRef": {"group": AWS_GROUP, "kind": "EC2NodeClass",
                                              "name": pool["nodeClass"]},
                             "requirements": copy.deepcopy(pool["requirements"])}
    for key in ("taints", "startupTaints", "expireAfter", "terminationGracePeriod"):
        if pool.get(key) not in (None, [], {}):
            tspec[key] = copy.deepcopy(pool[key])
    template: dict[str, Any] = {"metadata": meta, "spec": tspec} if meta else {"spec": tspec}
    spec: dict[str, Any] = {"template": template, "disruption": copy.deepcopy(pool["disruption"])}
    for key in ("limits", "weight"):
        if pool.get(key) not in (None, {}):
            spec[key] = copy.deepcopy(pool[key])
    return {"apiVersion": NODEPOOL_API, "kind": "NodePool", "metadata": {"name": pool["name"]}, "spec": spec}
