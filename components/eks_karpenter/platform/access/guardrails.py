"""Tenancy guardrails: a ValidatingAdmissionPolicy and its binding per team with `nodePools: true`, as plain data.

RBAC can only grant a team all NodePools and EC2NodeClasses or none (they are cluster-scoped), and an
EC2NodeClass with its own user data, AMI or role under the platform's node role is root on the nodes. The policy
(admissionregistration.k8s.io/v1, Kubernetes 1.30+) applies to requests of the team's Kubernetes group only and
holds it to:

- its own objects: named `<team>-...` or labelled `eks-karpenter/team: <team>`, on create, update (old and new)
  and delete;
- EC2NodeClasses without `userData`, with AMI selector terms that are an alias only (no custom AMI), the
  platform's node role (or its instance profile), the platform's security groups (the discovery tag or the
  cluster's node security group ids) and subnets (the discovery tag), no public IP, and instance metadata kept
  IMDSv2-only with hop limit 1 (so pods cannot take the node role's credentials);
- EC2NodeClasses without the fields that change a node's networking or reach what is not the team's: the
  kubelet's `clusterDNS`, capacity reservations (the platform's prepaid capacity), EBS snapshots as volumes;
- NodePools on its own classes or the platform's, with `limits.cpu` and `limits.memory` set and within the
  team's ceiling (per pool: admission sees one object, so the total over a team's pools is not bounded here);
- NodePools that only the team's pods land on: the template carries the team's label and `NoSchedule` taint
  (`eks-karpenter/team=<team>`), sets no label in the domains Kubernetes, EKS, Karpenter and the platform
  schedule by (the system node label would pull CoreDNS), and a `weight` no higher than any platform pool's
  (absent counts as 0, so with an unweighted platform pool a team pool sets none): a team pool cannot attract
  other teams' or the platform's pods, and so cannot disrupt them on its own budgets.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from eks_karpenter import tags
from eks_karpenter.config.errors import Issue, KeyPath
from eks_karpenter.labels import AWS_GROUP, KARPENTER_GROUP, SYSTEM_NODE_LABEL
from eks_karpenter.platform.access.config import Team
from eks_karpenter.platform.access.plan import team_group

TEAM_LABEL = "eks-karpenter/team"
"""Label that marks a NodePool or EC2NodeClass as a team's when its name lacks the team's prefix; on a team pool's
template, its nodes' label and the key of their `NoSchedule` taint (value: the team)."""

RESERVED_LABEL_DOMAINS = ("kubernetes.io", "k8s.io", "karpenter.sh", "karpenter.k8s.aws", "eks.amazonaws.com",
                          "eks-karpenter", SYSTEM_NODE_LABEL.partition("/")[0])
"""Label domains (and their subdomains) a team pool's template may not set, but for TEAM_LABEL: Kubernetes',
EKS', Karpenter's and the platform's own, which workloads and add-ons select nodes by."""


@dataclass(frozen=True)
class PlatformNodeAccess:
    """What the platform's EC2NodeClasses use, which a team's classes may use too."""

    cluster_name: str
    node_role_name: str
    instance_profile: str | None
    """The node role's instance profile name when classes use one (`karpenter.nodeRole.instanceProfile`)."""
    security_group_ids: tuple[str, ...]
    """Node security groups by id (`cluster.nodeSecurityGroupIds`), besides the discovery tag."""
    node_classes: tuple[str, ...]
    """The platform's own EC2NodeClass names, which a team's pools may use."""
    subnet_ids: tuple[str, ...] = ()
    """Subnets by id, besides the discovery tag: an adopted VPC's, which the stack leaves untagged."""
    pool_weights: tuple[int | None, ...] = ()
    """The platform's NodePools' `weight`s (None: unset, which Karpenter counts as 0)."""

    @property
    def team_weight_ceiling(self) -> int:
        """The highest `weight` a team pool may set: no higher than any platform pool's (0: it sets none)."""
        return min((w or 0 for w in self.pool_weights), default=0)


VAP_MINOR = (1, 30)
"""ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1), which the guardrails are, is GA from 1.30."""


def pool_rights_issues(teams: Sequence[Team], version: str, at: KeyPath, cluster: str = "the cluster") -> list[Issue]:
    """Pool rights on a cluster too old for the admission policy that confines a team to its own pools: one issue
    per team that has them, at `<at>.teams[i].nodePools`. `version` is the created cluster's (its config) or an
    adopted one's (its look-up), which `cluster` names."""
    minor = tuple(int(p) for p in version.split(".")[:2])
    if minor >= VAP_MINOR:
        return []
    return [Issue(at + ("teams", t, "nodePools"), "pool rights need Kubernetes 1.30 or newer (the admission policy "
                  f"that confines the team to its own pools); {cluster} runs {version}", True)
            for t, team in enumerate(teams) if team.node_pools]


def _lit(value: Any) -> str:
    """A CEL literal (JSON strings, lists and maps are valid CEL)."""
    return json.dumps(value)


def policy_name(team: str) -> str:
    return f"eks-karpenter-team-{team}-node-pools"


def _owns(var: str, team: str) -> str:
    return (f"({var}.metadata.name.startsWith({_lit(team + '-')}) || (has({var}.metadata.labels) && "
            f"{_lit(TEAM_LABEL)} in {var}.metadata.labels && {var}.metadata.labels[{_lit(TEAM_LABEL)}] == "
            f"{_lit(team)}))")


def team_policy(team: Team, platform: PlatformNodeAccess) -> dict[str, Any]:
    """The team's ValidatingAdmissionPolicy."""
    name = team.name
    operations = ["CREATE", "UPDATE", "DELETE"]
    ownership = {"expression": "variables.ownsOld && variables.ownsNew",
                 "message": f"team {name} may only create, change or delete NodePools and EC2NodeClasses named "
                            f"'{name}-...' or labelled {TEAM_LABEL}={name}",
                 "reason": "Forbidden"}
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": policy_name(name)},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": [
                {"apiGroups": [KARPENTER_GROUP], "apiVersions": ["*"], "operations": operations,
                 "resources": ["nodepools"]},
                {"apiGroups": [AWS_GROUP], "apiVersions": ["*"], "operations": operations,
                 "resources": ["ec2nodeclasses"]},
            ]},
            "matchConditions": [{"name": "team-member",
                                 "expression": f"{_lit(team_group(name))} in request.userInfo.groups"}],
            "variables": [
                {"name": "ownsNew", "expression": f"object == null || {_owns('object', name)}"},
                {"name": "ownsOld", "expression": f"oldObject == null || {_owns('oldObject', name)}"},
                {"name": "isClass", "expression": "object != null && request.resource.resource == 'ec2nodeclasses'"},
                {"name": "isPool", "expression": "object != null && request.resource.resource == 'nodepools'"},
            ],
            "validations": [ownership, *_class_validations(name, platform), *_pool_validations(team, platform)],
        },
    }


def _class_validations(name: str, platform: PlatformNodeAccess) -> list[dict[str, str]]:
    """What a team's EC2NodeClass may not do: its own user data or AMIs, another identity, security groups or
    subnets than the platform's, a public IP, or metadata the pods could reach the node role's credentials by."""
    discovery = tags.discovery_tags(platform.cluster_name)
    identity = [f"(has(object.spec.role) && object.spec.role == {_lit(platform.node_role_name)})"]
    if platform.instance_profile:
        identity.append(f"(has(object.spec.instanceProfile) && object.spec.instanceProfile == "
                        f"{_lit(platform.instance_profile)})")
    sg_terms = [f"(has(t.tags) && !has(t.id) && !has(t.name) && t.tags == {_lit(discovery)})"]
    if platform.security_group_ids:
        sg_terms.append(f"(has(t.id) && !has(t.tags) && !has(t.name) && t.id in "
                        f"{_lit(list(platform.security_group_ids))})")
    subnet_terms = [f"(has(t.tags) && !has(t.id) && t.tags == {_lit(discovery)})"]
    if platform.subnet_ids:
        subnet_terms.append(f"(has(t.id) && !has(t.tags) && t.id in {_lit(list(platform.subnet_ids))})")
    return [
        {"expression": "!variables.isClass || !has(object.spec.userData)",
         "message": f"team {name}: userData is reserved to the platform's node classes", "reason": "Forbidden"},
        {"expression": "!variables.isClass || object.spec.amiSelectorTerms.all(t, has(t.alias) && !has(t.id) && "
                       "!has(t.name) && !has(t.owner) && !has(t.ssmParameter) && !has(t.tags))",
         "message": f"team {name}: AMIs are chosen by alias only (e.g. al2023@v20260815), not by id, name, "
                    "owner, tags or SSM parameter", "reason": "Forbidden"},
        {"expression": f"!variables.isClass || {' || '.join(identity)}",
         "message": f"team {name}: a node class must use the platform's node role "
                    f"{platform.node_role_name}" + (f" or instance profile {platform.instance_profile}"
                                                    if platform.instance_profile else ""),
         "reason": "Forbidden"},
        {"expression": "!variables.isClass || object.spec.securityGroupSelectorTerms.all(t, "
                       f"{' || '.join(sg_terms)})",
         "message": f"team {name}: security groups must be the platform's (the {tags.DISCOVERY_KEY} tag"
                    + (" or the cluster's node security group ids)" if platform.security_group_ids else ")"),
         "reason": "Forbidden"},
        {"expression": f"!variables.isClass || object.spec.subnetSelectorTerms.all(t, {' || '.join(subnet_terms)})",
         "message": f"team {name}: subnets are the platform's (the {tags.DISCOVERY_KEY} tag"
                    + (" or the adopted subnets' ids)" if platform.subnet_ids else ")"), "reason": "Forbidden"},
        {"expression": "!variables.isClass || !has(object.spec.associatePublicIPAddress) || "
                       "!object.spec.associatePublicIPAddress",
         "message": f"team {name}: nodes get no public IP address", "reason": "Forbidden"},
        {"expression": "!variables.isClass || !has(object.spec.kubelet) || !has(object.spec.kubelet.clusterDNS)",
         "message": f"team {name}: the kubelet's clusterDNS is the platform's (nodes resolve through the cluster's "
                    "DNS)", "reason": "Forbidden"},
        {"expression": "!variables.isClass || !has(object.spec.capacityReservationSelectorTerms)",
         "message": f"team {name}: capacity reservations are the platform's", "reason": "Forbidden"},
        {"expression": "!variables.isClass || !has(object.spec.blockDeviceMappings) || "
                       "object.spec.blockDeviceMappings.all(m, !has(m.ebs) || !has(m.ebs.snapshotID))",
         "message": f"team {name}: volumes start empty, not from an EBS snapshot", "reason": "Forbidden"},
        {"expression": "!variables.isClass || !has(object.spec.metadataOptions) || "
                       "((!has(object.spec.metadataOptions.httpTokens) || "
                       "object.spec.metadataOptions.httpTokens == 'required') && "
                       "(!has(object.spec.metadataOptions.httpPutResponseHopLimit) || "
                       "object.spec.metadataOptions.httpPutResponseHopLimit <= 1))",
         "message": f"team {name}: instance metadata stays IMDSv2-only with hop limit 1 (pods must not get the node "
                    "role's credentials)", "reason": "Forbidden"},
    ]


def _reserved_label(var: str) -> str:
    """CEL: label key `var` is in a reserved domain (RESERVED_LABEL_DOMAINS) or one of its subdomains."""
    domain = f"({var}.indexOf('/') > 0 ? {var}.substring(0, {var}.indexOf('/')) : '')"
    return (f"{_lit(list(RESERVED_LABEL_DOMAINS))}.exists(d, {domain} == d || {domain}.endsWith('.' + d))")


def _pool_validations(team: Team, platform: PlatformNodeAccess) -> list[dict[str, str]]:
    """A team's NodePool uses the team's or the platform's node classes, caps cpu and memory under the team's
    ceiling, and only takes the team's pods: the team's label and taint, no reserved label, no higher weight."""
    name, ceiling, classes = team.name, team.node_pool_limits, list(platform.node_classes)
    template = "object.spec.template"
    labels = f"{template}.metadata.labels"
    has_labels = f"has({template}.metadata) && has({labels})"
    top = platform.team_weight_ceiling
    return [
        {"expression": f"!variables.isPool || ({has_labels} && {_lit(TEAM_LABEL)} in {labels} && "
                       f"{labels}[{_lit(TEAM_LABEL)}] == {_lit(name)})",
         "message": f"team {name}: a NodePool's template carries the label {TEAM_LABEL}={name}", "reason": "Forbidden"},
        {"expression": f"!variables.isPool || (has({template}.spec.taints) && {template}.spec.taints.exists(t, "
                       f"t.key == {_lit(TEAM_LABEL)} && has(t.value) && t.value == {_lit(name)} && "
                       "t.effect == 'NoSchedule'))",
         "message": f"team {name}: a NodePool's template carries the taint {TEAM_LABEL}={name}:NoSchedule, so only "
                    "the team's pods (which tolerate it) land on its nodes", "reason": "Forbidden"},
        {"expression": f"!variables.isPool || !({has_labels}) || {labels}.all(k, k == {_lit(TEAM_LABEL)} || "
                       f"!{_reserved_label('k')})",
         "message": f"team {name}: a NodePool's template sets no label in the domains the cluster schedules by "
                    f"({', '.join(RESERVED_LABEL_DOMAINS)})", "reason": "Forbidden"},
        {"expression": "!variables.isPool || !has(object.spec.weight)" if top == 0 else
                       f"!variables.isPool || !has(object.spec.weight) || object.spec.weight <= {top}",
         "message": f"team {name}: a NodePool's weight may not exceed the platform pools' "
                    + ("(none is weighted, so it sets none)" if top == 0 else f"(at most {top})"),
         "reason": "Forbidden"},
        {"expression": "!variables.isPool || object.spec.template.spec.nodeClassRef.name.startsWith("
                       f"{_lit(name + '-')}) || object.spec.template.spec.nodeClassRef.name in {_lit(classes)}",
         "message": f"team {name}: a NodePool may use the team's own node classes ('{name}-...') or the "
                    f"platform's ({', '.join(classes) or 'none'})", "reason": "Forbidden"},
        {"expression": "!variables.isPool || (has(object.spec.limits) && 'cpu' in object.spec.limits && "
                       "'memory' in object.spec.limits && "
                       f"!quantity(string(object.spec.limits['cpu'])).isGreaterThan(quantity({_lit(ceiling.cpu)}))"
                       " && !quantity(string(object.spec.limits['memory'])).isGreaterThan("
                       f"quantity({_lit(ceiling.memory)})))",
         "message": f"team {name}: a NodePool must set limits.cpu and limits.memory, at most {ceiling.cpu} cpu "
                    f"and {ceiling.memory} memory", "reason": "Forbidden"},
    ]


def team_policy_binding(team: Team) -> dict[str, Any]:
    """Binds the team's policy to every request it matches, denying what it refuses."""
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": policy_name(team.name)},
        "spec": {"policyName": policy_name(team.name), "validationActions": ["Deny"]},
    }


def team_guardrails(teams: Sequence[Team], platform: PlatformNodeAccess) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(policy, binding) for each team with `nodePools: true`."""
    return [(team_policy(t, platform), team_policy_binding(t)) for t in teams if t.node_pools]
