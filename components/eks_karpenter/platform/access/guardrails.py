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
  kubelet's `clusterDNS`, capacity reservations (the platform's prepaid capacity), placement groups, extra IPv4
  prefixes or network interfaces (the subnets' addresses are shared), EBS snapshots as volumes, a KMS key the
  platform's classes do not use; and no tag the platform sets (reserved prefixes, `Name`, the stack's tags with
  another value);
- NodePools on its own classes or the platform's (but for those holding capacity reservations or a placement
  group), with `limits.cpu` and `limits.memory` set and within the
  team's ceiling (per pool: admission sees one object, so the total over a team's pools is not bounded here);
- NodePools that only the team's pods land on: the template carries the team's label and `NoSchedule` taint
  (`eks-karpenter/team=<team>`), sets no label in the domains Kubernetes, EKS, Karpenter and the platform
  schedule by (the system node label would pull CoreDNS), and a `weight` no higher than any platform pool's
  (absent counts as 0, so with an unweighted platform pool a team pool sets none): a team pool cannot attract
  other teams' or the platform's pods, and so cannot disrupt them on its own budgets.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from eks_karpenter import tags
from eks_karpenter.config.errors import Issue, KeyPath
from eks_karpenter.labels import AWS_GROUP, KARPENTER_GROUP, NODEGROUP_LABEL, SYSTEM_NODE_LABEL, WELL_KNOWN_KEYS
from eks_karpenter.platform.access.config import Team
from eks_karpenter.platform.access.plan import team_group
from eks_karpenter.platform.adopted import AdoptedGroup
from eks_karpenter.platform.nodepool.class_config import NodeClassConfig
from eks_karpenter.platform.nodepool.config import NodePoolConfig

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
    """The platform's own EC2NodeClass names, which a team's pools may use (but for `private_node_classes`)."""
    subnet_ids: tuple[str, ...] = ()
    """Subnets by id, besides the discovery tag: an adopted VPC's, which the stack leaves untagged."""
    pool_weights: tuple[int | None, ...] = ()
    """The platform's NodePools' `weight`s (None: unset, which Karpenter counts as 0)."""
    node_pools: tuple[str, ...] = ()
    """The platform's own NodePool names: no team may claim them by label."""
    pool_teams: tuple[str, ...] = ()
    """Every team with pool rights: a team may not claim by label a name inside another's `<team>-` prefix."""
    ami_aliases: tuple[str, ...] = ()
    """The AMI aliases a team's class may use: the platform's (its classes' and the library's pin), so a team
    cannot go back to an older release or another family."""
    private_node_classes: tuple[str, ...] = ()
    """Those of `node_classes` no team pool may use (`private_classes`): they hold the platform's capacity
    reservations or placement groups."""
    taint_keys: tuple[str, ...] = ()
    """Taint keys that keep team pods off the platform's nodes (`platform_taint_keys`): no team pod tolerates
    them."""
    kms_key_ids: tuple[str, ...] = ()
    """The KMS keys the platform's classes encrypt volumes with: the only ones a team's class may name."""
    stack_tags: Mapping[str, str] = field(default_factory=dict)
    """The stack-wide tags: a team's class may repeat them, not give them another value."""

    @property
    def team_weight_ceiling(self) -> int:
        """The highest `weight` a team pool may set: no higher than any platform pool's (0: it sets none)."""
        return min((w or 0 for w in self.pool_weights), default=0)


def private_classes(classes: Sequence[NodeClassConfig]) -> tuple[str, ...]:
    """The platform's classes that hold capacity reservations or a placement group: the platform's prepaid or
    placed capacity. A team pool on such a class would launch into it (Karpenter prefers reserved capacity where
    a pool allows it), so these are left out of the classes teams may use rather than policing each pool's
    capacity types."""
    return tuple(c.name for c in classes
                 if c.capacity_reservation_selector_terms or c.placement_group_selector is not None)


def platform_taint_keys(system_group: Sequence[str], pools: Sequence[NodePoolConfig],
                        adopted: Sequence[AdoptedGroup] = ()) -> tuple[str, ...]:
    """The taint keys no team pod may tolerate: the system node group's (`system_group`), the platform pools'
    that say whom the nodes are for, and those that close an adopted cluster's node groups whose nodes hand pods
    the node role's credentials (`closing_taint_keys`). A taint keyed by a well-known node label
    (`kubernetes.io/arch` on an arm64 pool) says what the nodes are, not whom they are for, so tolerating it is
    left to every pod. The spot node groups' taints are left out too: those groups are for teams' workloads."""
    keys = [*system_group, *(t.key for p in pools for t in p.taints if t.key not in WELL_KNOWN_KEYS),
            *(k for g in adopted if g.exposed for k in closing_taint_keys(g))]
    return tuple(dict.fromkeys(keys))


def closing_taint_keys(group: AdoptedGroup) -> tuple[str, ...]:
    """The keys of an adopted group's taints that can keep team pods off its nodes once no team pod may tolerate
    them: NoSchedule or NoExecute, and neither the team taint (a team's pods tolerate their own) nor a well-known
    node label (every pod may tolerate those)."""
    return tuple(k for k in group.fencing_taint_keys if k != TEAM_LABEL and k not in WELL_KNOWN_KEYS)


def platform_kms_keys(classes: Sequence[NodeClassConfig]) -> tuple[str, ...]:
    """The KMS keys the platform's classes encrypt their volumes with."""
    keys = (m.ebs.kms_key_id for c in classes for m in c.block_device_mappings or () if m.ebs is not None)
    return tuple(sorted({k for k in keys if k}))


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
                  f"that confines the team to its own pools); {cluster} runs {version}", True) if team.node_pools
            else Issue(at + ("teams", t, "name"), "teams need Kubernetes 1.30 or newer (the admission policy that "
                       f"holds the team's pods and Services to its own capacity); {cluster} runs {version}", team.name)
            for t, team in enumerate(teams)]


def _lit(value: Any) -> str:
    """A CEL literal (JSON strings, lists and maps are valid CEL)."""
    return json.dumps(value)


def policy_name(team: str) -> str:
    return f"eks-karpenter-team-{team}-node-pools"


def _owns(var: str, team: str, platform: PlatformNodeAccess) -> str:
    """CEL: the object in `var` is the team's: named `<team>-...`, or labelled for the team under a name that is
    neither inside another pool team's prefix nor one of the platform's own pools or classes."""
    others = [f"{t}-" for t in platform.pool_teams if t != team]
    taken = [*platform.node_pools, *platform.node_classes]
    name = f"{var}.metadata.name"
    return (f"({name}.startsWith({_lit(team + '-')}) || (has({var}.metadata.labels) && "
            f"{_lit(TEAM_LABEL)} in {var}.metadata.labels && {var}.metadata.labels[{_lit(TEAM_LABEL)}] == "
            f"{_lit(team)} && !({name} in {_lit(taken)}) && !{_lit(others)}.exists(p, {name}.startsWith(p))))")


def team_policy(team: Team, platform: PlatformNodeAccess) -> dict[str, Any]:
    """The team's ValidatingAdmissionPolicy."""
    name = team.name
    operations = ["CREATE", "UPDATE", "DELETE"]
    ownership = {"expression": "variables.ownsOld && variables.ownsNew",
                 "message": f"team {name} may only create, change or delete NodePools and EC2NodeClasses named "
                            f"'{name}-...', or labelled {TEAM_LABEL}={name} under a name that is neither another "
                            "pool team's nor the platform's",
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
                {"name": "ownsNew", "expression": f"object == null || {_owns('object', name, platform)}"},
                {"name": "ownsOld", "expression": f"oldObject == null || {_owns('oldObject', name, platform)}"},
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
                       "!has(t.name) && !has(t.owner) && !has(t.ssmParameter) && !has(t.tags)"
                       + (f" && t.alias in {_lit(list(platform.ami_aliases))}" if platform.ami_aliases else "") + ")",
         "message": f"team {name}: AMIs are chosen by alias only, one the platform runs ("
                    + (", ".join(platform.ami_aliases) or "e.g. al2023@v20260815")
                    + "), not by id, name, owner, tags or SSM parameter", "reason": "Forbidden"},
        {"expression": "!variables.isClass || !has(object.spec.blockDeviceMappings) || "
                       "object.spec.blockDeviceMappings.all(m, !has(m.ebs) || (has(m.ebs.encrypted) && "
                       "m.ebs.encrypted))",
         "message": f"team {name}: EBS volumes are encrypted (ebs.encrypted: true)", "reason": "Forbidden"},
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
        *_class_field_validations(name, platform),
    ]


def _class_field_validations(name: str, platform: PlatformNodeAccess) -> list[dict[str, str]]:
    """The fields of a team's EC2NodeClass that reach past its own nodes: the kubelet's DNS, the platform's
    reservations and placement, the subnets' shared addresses, keys, tags the platform sets, snapshots, and
    instance metadata."""
    return [
        {"expression": "!variables.isClass || !has(object.spec.kubelet) || !has(object.spec.kubelet.clusterDNS)",
         "message": f"team {name}: the kubelet's clusterDNS is the platform's (nodes resolve through the cluster's "
                    "DNS)", "reason": "Forbidden"},
        {"expression": "!variables.isClass || !has(object.spec.capacityReservationSelectorTerms)",
         "message": f"team {name}: capacity reservations are the platform's", "reason": "Forbidden"},
        {"expression": "!variables.isClass || !has(object.spec.placementGroupSelector)",
         "message": f"team {name}: placement groups are the platform's (another team's group, or capacity it "
                    "placed)", "reason": "Forbidden"},
        {"expression": "!variables.isClass || (!has(object.spec.ipPrefixCount) && "
                       "!has(object.spec.networkInterfaces))",
         "message": f"team {name}: nodes keep the platform's networking (no ipPrefixCount or networkInterfaces: "
                    "extra prefixes and interfaces take the subnets' addresses every pool shares)",
         "reason": "Forbidden"},
        {"expression": "!variables.isClass || !has(object.spec.blockDeviceMappings) || "
                       "object.spec.blockDeviceMappings.all(m, !has(m.ebs) || !has(m.ebs.kmsKeyID) || "
                       f"m.ebs.kmsKeyID in {_lit(list(platform.kms_key_ids))})",
         "message": f"team {name}: volumes are encrypted with the account's EBS key or one the platform's classes "
                    f"use ({', '.join(platform.kms_key_ids) or 'none'})", "reason": "Forbidden"},
        {"expression": "!variables.isClass || !has(object.spec.tags) || object.spec.tags.all(k, "
                       f"k != {_lit(tags.NAME_KEY)} && !{_lit(list(tags.RESERVED_PREFIXES))}.exists(p, "
                       f"k.startsWith(p)) && (!(k in {_lit(dict(platform.stack_tags))}) || "
                       f"object.spec.tags[k] == {_lit(dict(platform.stack_tags))}[k]))",
         "message": f"team {name}: a node class sets no tag the platform sets ({tags.NAME_KEY}, keys starting "
                    f"{', '.join(tags.RESERVED_PREFIXES)}) and the stack's tags only with their values ("
                    + (", ".join(f"{k}={v}" for k, v in sorted(platform.stack_tags.items())) or "none")
                    + "): they drive ownership, discovery, cost and the termination handler", "reason": "Forbidden"},
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
    name, ceiling = team.name, team.node_pool_limits
    classes = [c for c in platform.node_classes if c not in platform.private_node_classes]
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
        {"expression": f"!variables.isPool || !has({template}.spec.requirements) || "
                       f"{template}.spec.requirements.all(r, r.key == {_lit(TEAM_LABEL)} || "
                       f"r.key in {_lit(sorted(WELL_KNOWN_KEYS))} || !{_reserved_label('r.key')})",
         "message": f"team {name}: a NodePool's requirements name no label in the domains the cluster schedules by "
                    f"({', '.join(RESERVED_LABEL_DOMAINS)}) but Karpenter's well-known ones (instance type, zone, "
                    "capacity type, arch, os, karpenter.k8s.aws/*): Karpenter puts a required label on the nodes it "
                    "launches, as a template label would", "reason": "Forbidden"},
        {"expression": "!variables.isPool || !has(object.spec.weight)" if top == 0 else
                       f"!variables.isPool || !has(object.spec.weight) || object.spec.weight <= {top}",
         "message": f"team {name}: a NodePool's weight may not exceed the platform pools' "
                    + ("(none is weighted, so it sets none)" if top == 0 else f"(at most {top})"),
         "reason": "Forbidden"},
        {"expression": "!variables.isPool || object.spec.template.spec.nodeClassRef.name.startsWith("
                       f"{_lit(name + '-')}) || object.spec.template.spec.nodeClassRef.name in {_lit(classes)}",
         "message": f"team {name}: a NodePool may use the team's own node classes ('{name}-...') or the "
                    f"platform's ({', '.join(classes) or 'none'})"
                    + (f"; not {', '.join(platform.private_node_classes)}: they hold the platform's capacity "
                       "reservations or placement group" if platform.private_node_classes else ""),
         "reason": "Forbidden"},
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


CRITICAL_PRIORITY_CLASSES = ("system-node-critical", "system-cluster-critical")
"""Priority classes that preempt CoreDNS, the Karpenter controller and every other team's pods."""


def workload_policy_name(team: str) -> str:
    return f"eks-karpenter-team-{team}-workloads"


KARPENTER_TAINT_PREFIX = f"{KARPENTER_GROUP}/"
"""Karpenter's own taints (`karpenter.sh/disrupted` on nodes it drains, `karpenter.sh/unregistered` on new ones):
a pod tolerating them lands on nodes being taken away, or before they are ready."""

NODE_SELECTING_LABELS = (SYSTEM_NODE_LABEL, NODEGROUP_LABEL)
"""Node labels team pods may not select by (node selector or node affinity): the system nodes' label, and the
managed node groups' name, the system group among them (select a spot group by its own labels)."""


def team_workload_policy(team: Team, platform: PlatformNodeAccess) -> dict[str, Any]:
    """The ValidatingAdmissionPolicy on the Pods and Services of a team's namespaces, whoever creates them (the
    team, or a controller acting for its Deployment): no Service `externalIPs` (kube-proxy would send other
    teams' traffic for those addresses to the team's pods), no critical priority class (preemption of the
    platform's and other teams' pods), no toleration without a key (it tolerates every taint: the system nodes,
    other teams' pools), of another team's taint, of the platform's node taints (`platform.taint_keys`) or of
    Karpenter's; no node selector or node affinity on the system nodes' label or a managed group's name; no
    `nodeName` at creation (it skips the scheduler, so every `NoSchedule` taint); no required pod anti-affinity
    on other namespaces' pods (it keeps every matching pod off the topology domain: the whole cluster for an
    empty selector on `kubernetes.io/os`); no in-tree EBS volume (CSI migration attaches any volume by id)."""
    name = team.name
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": workload_policy_name(name)},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {
                "namespaceSelector": {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In",
                                                            "values": sorted(team.namespaces)}]},
                "resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
                                   "resources": ["pods", "services"]}],
            },
            "variables": [{"name": "isPod", "expression": "request.resource.resource == 'pods'"},
                          {"name": "isService", "expression": "request.resource.resource == 'services'"}],
            "validations": [
                {"expression": "!variables.isService || !has(object.spec.externalIPs) || "
                               "size(object.spec.externalIPs) == 0",
                 "message": f"team {name}: Services take no externalIPs (they would capture traffic for those "
                            "addresses from every pod in the cluster)", "reason": "Forbidden"},
                *_pod_validations(team, platform),
            ],
        },
    }


def _pod_sets(field: str) -> str:
    """CEL: the request is a pod's and sets `spec.<field>`: a create, or an update that changes it. An update
    that keeps a field as it was is not held to a rule on it, so a pod admitted before the rule (or before the
    team existed) can still be updated, e.g. by the job controller removing its finalizer; a pod's spec is
    immutable but for tolerations (appended) and, while it is gated, node selection (narrowed)."""
    new, old = f"object.spec.{field}", f"oldObject.spec.{field}"
    return (f"(variables.isPod && (request.operation == 'CREATE' || has({new}) != has({old}) || "
            f"(has({new}) && {new} != {old})))")


def _pod_validations(team: Team, platform: PlatformNodeAccess) -> list[dict[str, str]]:
    """What a team's pod may not do (see `team_workload_policy`)."""
    name = team.name
    pod = "variables.isPod"
    tolerations = "object.spec.tolerations"
    selecting = _lit(list(NODE_SELECTING_LABELS))
    affinity = "object.spec.affinity"
    anti = f"{affinity}.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution"
    required = f"{affinity}.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
    preferred = f"{affinity}.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution"
    has_node_affinity = f"has({affinity}) && has({affinity}.nodeAffinity)"

    def term_ok(term: str) -> str:
        return (f"(!has({term}.matchExpressions) || {term}.matchExpressions.all(e, !(e.key in {selecting}))) && "
                f"(!has({term}.matchFields) || {term}.matchFields.all(e, !(e.key in {selecting})))")

    return [
        {"expression": f"!{_pod_sets('priorityClassName')} || !has(object.spec.priorityClassName) || "
                       f"!(object.spec.priorityClassName in {_lit(list(CRITICAL_PRIORITY_CLASSES))})",
         "message": f"team {name}: pods may not use {' or '.join(CRITICAL_PRIORITY_CLASSES)} (they would "
                    "preempt the platform's and other teams' pods)", "reason": "Forbidden"},
        {"expression": f"!{_pod_sets('tolerations')} || !has({tolerations}) || {tolerations}.all(t, has(t.key) "
                       f"&& t.key != '' && !(t.key == {_lit(TEAM_LABEL)} && "
                       f"(!has(t.value) || t.value != {_lit(name)})))",
         "message": f"team {name}: every toleration names a taint key, and the team taint only with its own "
                    f"value ({TEAM_LABEL}={name}): a keyless toleration lands on every node, another "
                    "team's on its pool", "reason": "Forbidden"},
        # The node condition taints (node.kubernetes.io/*) stay tolerable: the DaemonSet controller adds
        # not-ready, unreachable, disk-, memory- and pid-pressure, unschedulable (and network-unavailable
        # on the host network) to every DaemonSet pod, and DefaultTolerationSeconds adds not-ready and
        # unreachable to every pod. A cordoned node still carries its pool's taints, so tolerating
        # `unschedulable` reaches only nodes the pod could use anyway, and team DaemonSets keep working.
        {"expression": f"!{_pod_sets('tolerations')} || !has({tolerations}) || {tolerations}.all(t, !has(t.key) || "
                       f"!(t.key in {_lit(list(platform.taint_keys))} || "
                       f"t.key.startsWith({_lit(KARPENTER_TAINT_PREFIX)})))",
         "message": f"team {name}: pods may not tolerate the platform's node taints ("
                    + ", ".join([*platform.taint_keys, KARPENTER_TAINT_PREFIX + '*'])
                    + "): they keep workloads off the system nodes, the platform's own pools and nodes "
                    "Karpenter is taking away", "reason": "Forbidden"},
        {"expression": f"!{_pod_sets('nodeSelector')} || !has(object.spec.nodeSelector) || "
                       f"!{selecting}.exists(k, k in object.spec.nodeSelector)",
         "message": f"team {name}: pods may not select nodes by {' or '.join(NODE_SELECTING_LABELS)} (the "
                    "system nodes, the platform's node groups)", "reason": "Forbidden"},
        *({"expression": f"!{_pod_sets('affinity')} || !({has_node_affinity} && has({field})) || {terms}.all({each})",
           "message": f"team {name}: a pod's node affinity may not name {' or '.join(NODE_SELECTING_LABELS)}"
                      " (the system nodes, the platform's node groups)", "reason": "Forbidden"}
          for field, terms, each in ((required, f"{required}.nodeSelectorTerms", f"t, {term_ok('t')}"),
                                     (preferred, preferred, f"p, {term_ok('p.preference')}"))),
        {"expression": f"!{pod} || request.operation != 'CREATE' || !has(object.spec.nodeName) || "
                       "object.spec.nodeName == ''",
         "message": f"team {name}: pods may not set spec.nodeName: it skips the scheduler, so every "
                    "NoSchedule taint (the system nodes', other teams' pools)", "reason": "Forbidden"},
        # Required pod affinity is left alone: the scheduler holds existing pods' required anti-affinity
        # against new pods, never their affinity, so affinity constrains only the pod that sets it.
        {"expression": f"!{_pod_sets('affinity')} || !has({affinity}) || !has({affinity}.podAntiAffinity) || "
                       f"!has({anti}) || {anti}.all(t, !has(t.namespaceSelector) && (!has(t.namespaces) || "
                       f"t.namespaces.all(n, n in {_lit(sorted(team.namespaces))})))",
         "message": f"team {name}: required pod anti-affinity names only the team's namespaces ("
                    f"{', '.join(sorted(team.namespaces))}; no namespaceSelector): the scheduler keeps "
                    "every pod it matches off the topology domain, other teams' and the platform's too",
         "reason": "Forbidden"},
        {"expression": f"!{_pod_sets('volumes')} || !has(object.spec.volumes) || "
                       "object.spec.volumes.all(v, !has(v.awsElasticBlockStore))",
         "message": f"team {name}: pods mount no in-tree awsElasticBlockStore volume (the EBS CSI driver "
                    "would attach any volume by its id, another team's too): use a PersistentVolumeClaim",
         "reason": "Forbidden"},
    ]


def team_workload_binding(team: Team) -> dict[str, Any]:
    """Binds `team_workload_policy`, denying what it refuses."""
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": workload_policy_name(team.name)},
        "spec": {"policyName": workload_policy_name(team.name), "validationActions": ["Deny"]},
    }


def team_policies(teams: Sequence[Team], platform: PlatformNodeAccess) -> dict[str, list[dict[str, Any]]]:
    """Each team's ValidatingAdmissionPolicies: its pool policy when it has `nodePools: true`, then its workload
    policy. The platform applies them (`team_guardrails`) and exports them (`teamPolicies`), so a consumer stack
    evaluates at plan time the very policies the cluster holds (`consumer.consumer_admission`)."""
    return {t.name: [*([team_policy(t, platform)] if t.node_pools else []),
                     team_workload_policy(t, platform)] for t in teams}


def team_guardrails(teams: Sequence[Team], platform: PlatformNodeAccess) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(policy, binding) for each team with `nodePools: true`, and each team's workload policy."""
    return with_bindings(teams, team_policies(teams, platform))


def with_bindings(teams: Sequence[Team], policies: Mapping[str, Sequence[dict[str, Any]]],
                  ) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """`team_policies`' policies (the same objects), each with its binding: the pool policies, then the workload
    policies."""
    return [*((policies[t.name][0], team_policy_binding(t)) for t in teams if t.node_pools),
            *((policies[t.name][-1], team_workload_binding(t)) for t in teams)]
