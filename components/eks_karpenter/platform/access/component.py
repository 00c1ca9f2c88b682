"""Access component: EKS access entries and their access-policy associations for admins and teams."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NotRequired, TypedDict

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from eks_karpenter.arns import partition_of
from eks_karpenter.config.errors import KeyPath
from eks_karpenter.platform.access.config import AccessConfig
from eks_karpenter.platform.access.guardrails import policy_name
from eks_karpenter.platform.access.plan import (
    former_entry_keys,
    policy_arn,
    team_entries,
    team_node_pool_binding,
    team_node_pool_cluster_role,
)
from eks_karpenter.platform.wiring import child_options


class AccessArgs(TypedDict):
    """Inputs of the Access component."""

    clusterName: str
    """The cluster the entries belong to."""
    region: str
    """AWS region (for the partition of the access-policy ARNs)."""
    config: AccessConfig
    """Validated access config."""
    configPath: KeyPath
    """Key path of the access config in the stack file, for errors found only at plan time."""
    source: str
    """The stack file, for errors found only at plan time."""
    tags: dict[str, str]
    """Tags for the access entries."""
    guardrails: NotRequired[list[tuple[dict[str, Any], dict[str, Any]]]]
    """(ValidatingAdmissionPolicy, binding) per team with `nodePools: true` (`guardrails.team_guardrails`)."""
    previewRbac: NotRequired[list[dict[str, Any]]]
    """The `preview` deployers' read-only roles and bindings (`plan.preview_rbac`); empty without one."""
    previewDependsOn: NotRequired[list[pulumi.Resource]]
    """What the preview's namespaced roles wait for (the namespaces this stack creates that they live in)."""
    deployersComponent: NotRequired[str]
    """Name of the Cluster component that holds the deployers' entries: a principal moved from `deployers` to
    `clusterAdmins` or a team keeps its entry (an alias), instead of a second entry that EKS refuses."""


ACCESS_TYPE = "eks-karpenter:index:Access"
CLUSTER_TYPE = "eks-karpenter:index:Cluster"
ENTRY_TYPE = "aws:eks/accessEntry:AccessEntry"
ASSOCIATION_TYPE = "aws:eks/accessPolicyAssociation:AccessPolicyAssociation"
_HOME_TYPES = {"cluster": CLUSTER_TYPE, "access": ACCESS_TYPE}


def entry_aliases(key: str, home: str, components: Mapping[str, str | None],
                  former: Sequence[tuple[str, str]]) -> tuple[list[pulumi.Input[str]], list[pulumi.Input[str]]]:
    """(entry aliases, association aliases) for the entry named `key` in `home`: the URNs of the `former` keys
    (`plan.former_entry_keys`) in the top-level components `components` names per home, its own URN left out."""
    entries: list[pulumi.Input[str]] = []
    associations: list[pulumi.Input[str]] = []
    for where, old in former:
        component = components.get(where)
        if component is None or (where, old) == (home, key):
            continue
        entry = pulumi.create_urn(f"{component}-{old}", ENTRY_TYPE,
                                  parent=pulumi.create_urn(component, _HOME_TYPES[where]))
        entries.append(entry)
        associations.append(pulumi.create_urn(f"{component}-{old}", ASSOCIATION_TYPE, parent=entry))
    return entries, associations


class Access(pulumi.ComponentResource):
    """One STANDARD access entry per team principal and one policy association each: the team's policy on its
    namespaces.

    The entries of whoever may run `pulumi up` (deployers and `clusterAdmins`) belong to the Cluster component:
    its Kubernetes provider depends on them. No entry here relies on who runs `pulumi up`. Teams with
    `nodePools: true` also get a ClusterRole and binding (the Kubernetes provider comes from `opts`, `providers=`).
    """

    entries: list[pulumi.Resource]
    """Every entry, association and RBAC object: what a release relying on these identities must wait for."""

    def __init__(self, name: str, args: AccessArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("eks-karpenter:index:Access", name, None, opts)
        cfg, cluster = args["config"], args["clusterName"]
        partition = partition_of(args["region"])
        planned = team_entries(cfg)
        cluster_name: pulumi.Input[str] = cluster
        self.entries = []
        homes = {"access": name, "cluster": args.get("deployersComponent")}
        teams = [t.name for t in cfg.teams]
        for entry in planned:
            # One entry per principal, whichever list holds it: the former names are aliases (plan.py).
            moved, moved_assoc = entry_aliases(entry.key, "access", homes,
                                               former_entry_keys(entry.principal_arn, teams=teams))
            resource = aws.eks.AccessEntry(
                f"{name}-{entry.key}", cluster_name=cluster_name, principal_arn=entry.principal_arn,
                type="STANDARD", kubernetes_groups=list(entry.groups) or None, tags=args["tags"],
                opts=pulumi.ResourceOptions.merge(child_options(self, opts), pulumi.ResourceOptions(aliases=moved)))
            self.entries.append(resource)
            if entry.policy is None:  # its Kubernetes groups' roles only
                continue
            scope = aws.eks.AccessPolicyAssociationAccessScopeArgs(
                type="namespace" if entry.namespaces else "cluster",
                namespaces=list(entry.namespaces) or None)
            # principal_arn from the entry: the association needs the entry to exist first.
            self.entries.append(aws.eks.AccessPolicyAssociation(
                f"{name}-{entry.key}", cluster_name=resource.cluster_name, principal_arn=resource.principal_arn,
                policy_arn=policy_arn(partition, entry.policy), access_scope=scope,
                opts=pulumi.ResourceOptions(parent=resource, aliases=moved_assoc)))
        # The guardrails before the rights: the team's ClusterRoleBinding waits for its admission policy and
        # binding, so there is no moment when the team may edit pools unguarded.
        guards: dict[str, list[pulumi.Resource]] = {}
        for policy, policy_binding in args.get("guardrails", []):
            vap = k8s.admissionregistration.v1.ValidatingAdmissionPolicy(
                f"{name}-{policy['metadata']['name']}", metadata=policy["metadata"], spec=policy["spec"],
                opts=child_options(self, opts))
            vap_binding = k8s.admissionregistration.v1.ValidatingAdmissionPolicyBinding(
                f"{name}-{policy_binding['metadata']['name']}", metadata=policy_binding["metadata"],
                spec=policy_binding["spec"], opts=child_options(self, opts, vap))
            guards[policy_binding["metadata"]["name"]] = [vap, vap_binding]
            self.entries += [vap, vap_binding]
        for team in cfg.teams:
            if not team.node_pools:
                continue
            role = team_node_pool_cluster_role(team.name)
            cluster_role = k8s.rbac.v1.ClusterRole(f"{name}-team-{team.name}-node-pools", metadata=role["metadata"],
                                                   rules=role["rules"], opts=child_options(self, opts))
            binding = team_node_pool_binding(team.name)
            self.entries.append(k8s.rbac.v1.ClusterRoleBinding(
                f"{name}-team-{team.name}-node-pools", metadata=binding["metadata"], role_ref=binding["roleRef"],
                subjects=binding["subjects"],
                opts=child_options(self, opts, cluster_role, *guards.get(policy_name(team.name), []))))
            self.entries.append(cluster_role)
        self._preview_rbac(name, args, opts)
        self.register_outputs({"principals": [e.principal_arn for e in planned]})

    def _preview_rbac(self, name: str, args: AccessArgs, opts: pulumi.ResourceOptions | None) -> None:
        kinds = {"ClusterRole": k8s.rbac.v1.ClusterRole, "ClusterRoleBinding": k8s.rbac.v1.ClusterRoleBinding,
                 "Role": k8s.rbac.v1.Role, "RoleBinding": k8s.rbac.v1.RoleBinding}
        after = list(args.get("previewDependsOn") or [])
        for obj in args.get("previewRbac") or []:
            meta = obj["metadata"]
            where = f"-{meta['namespace']}" if "namespace" in meta else ""
            logical = f"{name}-preview{where}-{obj['kind'].lower()}"
            body = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}
            if "roleRef" in body:
                body["role_ref"] = body.pop("roleRef")
            self.entries.append(kinds[obj["kind"]](logical, **body,
                                                   opts=child_options(self, opts, *(after if "namespace" in meta
                                                                                    else []))))
