"""What a consumer stack (a team's project on the platform) would be refused at `pulumi up` by the platform's
admission policies, known at plan time from the policies themselves (the platform's `teamPolicies` output,
evaluated by `admission.py`): one definition of each rule, no second copy to keep in step."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from eks_karpenter.config.errors import ConfigError, Issue
from eks_karpenter.labels import AWS_GROUP, KARPENTER_GROUP
from eks_karpenter.platform.access.admission import (
    INSTALL_COMMAND,
    Request,
    UnsupportedPolicy,
    admit,
    evaluator_installed,
)
from eks_karpenter.platform.access.plan import team_group

CLUSTER_SCOPED = {(KARPENTER_GROUP, "NodePool"), (AWS_GROUP, "EC2NodeClass")}
"""Kinds a consumer sends that live outside any namespace."""

OPERATIONS = ("CREATE", "UPDATE")
"""A consumer's objects are created by its first `up` and updated, unchanged or not, by every later one."""


@dataclass(frozen=True)
class ConsumerAdmission:
    """The denials (one message per refused object and rule) and the warnings of `consumer_admission`."""

    denials: tuple[str, ...]
    warnings: tuple[str, ...]

    def raise_if_denied(self, source: str) -> None:
        """Raise `ConfigError` listing the denials, naming the consumer's stack file `source`."""
        if self.denials:
            raise ConfigError(source, [Issue((), d, None, False) for d in self.denials])


WORKLOAD_KINDS = {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "ReplicationController", "Job", "CronJob"}
"""Kinds whose pod template a controller turns into Pods in the workload's namespace."""


def _pod_template(manifest: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The pod template of a workload (`WORKLOAD_KINDS`; a CronJob's is its job template's)."""
    if manifest.get("kind") not in WORKLOAD_KINDS:
        return None
    spec = manifest.get("spec") or {}
    if manifest.get("kind") == "CronJob":
        spec = (spec.get("jobTemplate") or {}).get("spec") or {}
    template = spec.get("template")
    return template if isinstance(template, Mapping) and "spec" in template else None


def _requests(manifest: Mapping[str, Any], namespace: str) -> list[tuple[str, Mapping[str, Any], str | None]]:
    """(what it is, object, namespace) for the object itself and, for a workload, a Pod of its template."""
    kind, name = str(manifest.get("kind")), (manifest.get("metadata") or {}).get("name", "")
    group = str(manifest.get("apiVersion", "")).rpartition("/")[0]
    ns = None if (group, kind) in CLUSTER_SCOPED else (manifest.get("metadata") or {}).get("namespace", namespace)
    out: list[tuple[str, Mapping[str, Any], str | None]] = [(f"{kind} {name!r}", manifest, ns)]
    if (template := _pod_template(manifest)) is not None:
        pod_ns = ns or namespace
        pod = {"apiVersion": "v1", "kind": "Pod", "spec": template["spec"],
               "metadata": {**(template.get("metadata") or {}), "generateName": f"{name}-", "namespace": pod_ns}}
        out.append((f"a Pod of {kind} {name!r}", pod, pod_ns))
    return out


def consumer_admission(team: str, namespace: str, team_policies: Mapping[str, Sequence[Mapping[str, Any]]] | None,
                       objects: Sequence[tuple[str, Mapping[str, Any]]], *, platform: str) -> ConsumerAdmission:
    """What the platform's admission policies would refuse of a consumer stack's objects, at plan time.

    `team_policies` is the platform stack's `teamPolicies` output (None: a platform that exports none, which
    gives one warning that nothing was checked, as does a missing `consumer` extra, cel-expr-python, with the
    command that installs it); every team's policies are evaluated, as the API server does.
    `objects` are (the consumer's config key, manifest as plain data, its Outputs resolved): NodePools and
    EC2NodeClasses exactly as the components send them (`render_node_pool`, `NodeClass.manifest_for`),
    workloads (whose pod template is also evaluated as a Pod in `namespace`) and Services. Each is a request of
    the team's Kubernetes group (`team_group`), a CREATE and an UPDATE with the object unchanged (a later `up`).
    One denial per object and refused rule, naming the key, the object, the policy and the policy's own message;
    `platform` names the platform stack in the messages."""
    if team_policies is None:
        return ConsumerAdmission((), (f"the platform ({platform}) exports no teamPolicies (a release before the "
                                      "output): its admission policies were not checked at plan time; `pulumi up` "
                                      "meets them",))
    if not evaluator_installed():
        return ConsumerAdmission((), (f"the platform's ({platform}) admission policies were not checked at plan time: "
                                      "their evaluator, cel-expr-python (the library's `consumer` extra), is not "
                                      f"installed; `pulumi up` meets them. Install it: {INSTALL_COMMAND} (in a "
                                      "requirements.txt: `eks-karpenter[consumer]` in place of `eks-karpenter`)",))
    policies = [p for team_ps in team_policies.values() for p in team_ps]
    groups = (team_group(team), "system:authenticated")
    refused: dict[tuple[str, str], list[str]] = {}  # (what, message) -> operations, in order
    warnings: list[str] = []
    for key, manifest in objects:
        for what, obj, ns in _requests(manifest, namespace):
            head = f"{key}: {what}" + (f" in namespace {ns!r}" if ns else "")
            for policy in policies:
                try:
                    for operation in OPERATIONS:
                        decision = admit(policy, Request(operation, groups, obj, obj if operation == "UPDATE" else None,
                                                         ns))
                        for message in decision.denied:
                            about = f"{head} is refused by the platform's ({platform}) admission policy " \
                                    f"{policy['metadata']['name']} on"
                            refused.setdefault((about, message), []).append(operation.lower())
                except UnsupportedPolicy as err:
                    warnings.append(f"{head} was not checked against the platform's ({platform}) {err}")
    denials = tuple(f"{about} {' and '.join(ops)}: {message}" for (about, message), ops in refused.items())
    return ConsumerAdmission(denials, tuple(dict.fromkeys(warnings)))
