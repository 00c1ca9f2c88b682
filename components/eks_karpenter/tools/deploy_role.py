"""The deploy role's least-privilege IAM policy, generated from what a plan contains.

`pulumi up` and `pulumi destroy` run as a deploy role (CI's OIDC role, or a person's). It needs the actions that
create, read, update and delete exactly the resource types the program registers, plus the provider look-ups it
invokes, and nothing else: the actions come from one table (`tools/deploy_actions.py`, each row read from the
provider's source), and a type with no row fails the generation, so a new resource type cannot ship without
saying what it needs.

IAM is where a deploy role becomes account admin, so its IAM actions are scoped to what the stack creates: roles
by name (the auto-named ones, the flow-log role and pulumi-eks' cluster role, by the prefix Pulumi names them
with), managed policies by name, `iam:AttachRolePolicy` only for the policies the stack attaches, `iam:PassRole`
only for the roles the stack passes and only to the service it passes each to, service-linked roles only for the
services that need them. A stack that names a permissions boundary (`eks-karpenter:permissionsBoundary`) puts it
on every role it creates, and the policy then requires it (`iam:PermissionsBoundary`) on every call that creates a
role or widens one. Other services' actions stay on `*`: their resources' names and ARNs are only known once
created, and their create calls do not all carry the stack's tags. Kubernetes objects need no IAM action: they go
through the cluster's API with the deploy role's EKS access entry (`access.deployers`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from eks_karpenter.labels import NODECLASS_LABEL
from eks_karpenter.platform.iam.policy import POLICY_VERSION
from eks_karpenter.tools.deploy_actions import ACTIONS, NO_AWS_API, TypeActions, expanded

MANAGED_POLICY_SIZE_LIMIT = 6144
"""Characters (whitespace excluded) IAM accepts in one customer managed policy document."""
ACCOUNT = "*"
"""The account in the ARNs: any, which is the deploy role's own: IAM's API writes only the caller's account."""

IAM_RESOURCE: dict[str, str] = {
    **dict.fromkeys((
        "AttachRolePolicy", "CreateRole", "CreateServiceLinkedRole", "DeleteRole", "DeleteRolePermissionsBoundary",
        "DeleteRolePolicy", "DeleteServiceLinkedRole", "DetachRolePolicy", "GetRole", "GetRolePolicy",
        "GetServiceLinkedRoleDeletionStatus", "ListAttachedRolePolicies", "ListInstanceProfilesForRole",
        "ListRolePolicies", "PassRole", "PutRolePermissionsBoundary", "PutRolePolicy", "TagRole", "UntagRole",
        "UpdateAssumeRolePolicy", "UpdateRole", "UpdateRoleDescription"), "role"),
    **dict.fromkeys((
        "CreatePolicy", "CreatePolicyVersion", "DeletePolicy", "DeletePolicyVersion", "GetPolicy",
        "GetPolicyVersion", "ListPolicyTags", "ListPolicyVersions", "SetDefaultPolicyVersion", "TagPolicy",
        "UntagPolicy"), "policy"),
    **dict.fromkeys((
        "AddRoleToInstanceProfile", "CreateInstanceProfile", "DeleteInstanceProfile", "GetInstanceProfile",
        "ListInstanceProfileTags", "RemoveRoleFromInstanceProfile", "TagInstanceProfile", "UntagInstanceProfile"),
        "instance-profile"),
    **dict.fromkeys((
        "AddClientIDToOpenIDConnectProvider", "CreateOpenIDConnectProvider", "DeleteOpenIDConnectProvider",
        "GetOpenIDConnectProvider", "ListOpenIDConnectProviderTags", "RemoveClientIDFromOpenIDConnectProvider",
        "TagOpenIDConnectProvider", "UntagOpenIDConnectProvider", "UpdateOpenIDConnectProviderThumbprint"),
        "oidc-provider"),
    **dict.fromkeys(("ListOpenIDConnectProviders", "ListRoles"), "*"),
}
"""The IAM resource type each IAM action of the table acts on (IAM's service authorization reference; the test
checks it against cfn-lint's copy)."""

BOUNDED = ("iam:CreateRole", "iam:PutRolePermissionsBoundary", "iam:PutRolePolicy", "iam:AttachRolePolicy")
"""The role writes that create a role or widen what it may do: with a boundary configured, allowed only with that
boundary on the role (`iam:PermissionsBoundary`, which IAM sets for these calls; not for a trust policy's update,
which a boundary caps anyway: whoever assumes the role gets no more than the boundary allows)."""
UNBOUNDING = ("iam:DeleteRolePermissionsBoundary",)
"""Removing a role's boundary: never allowed while the stack requires one."""

_ARN = re.compile(r"^arn:(?P<partition>aws[a-z-]*):iam::(?P<account>[0-9]{12}|aws):(?P<kind>role|policy)/"
                  r"(?P<path>(?:[^/]+/)*)(?P<name>[^/]+)$")


@dataclass
class StackIam:
    """The IAM names a plan's resources create and use: what the deploy role's IAM actions are scoped to."""

    partition: str = "aws"
    roles: set[str] = field(default_factory=set)
    """Role names, `*` ending the auto-named ones' prefixes."""
    policies: set[str] = field(default_factory=set)
    """Managed policy names the stack creates."""
    attached: set[str] = field(default_factory=set)
    """Policy ARNs the stack attaches to its roles (AWS managed, its own, and those the stack file names)."""
    instance_profiles: set[str] = field(default_factory=set)
    passed: dict[str | None, set[str]] = field(default_factory=dict)
    """Service (None: none named) -> the role names passed to it."""
    service_linked: set[str] = field(default_factory=set)
    """Services whose service-linked role a create may create."""
    boundaries: set[str] = field(default_factory=set)
    """The permissions boundaries on the roles the stack creates."""
    karpenter: bool = False
    """Whether Karpenter is installed: it adds the node role to instance profiles of its own (tagged with their
    EC2NodeClass), which the role's delete must take it out of."""


def needs_iam(type_: str) -> bool:
    return type_ in ACTIONS or not type_.startswith(NO_AWS_API)


def row(type_: str) -> TypeActions:
    """The table's row for `type_`, a component's with its children's. Raises KeyError naming the type."""
    try:
        return expanded(type_)
    except KeyError:
        raise KeyError(f"no deploy-role actions for {type_}: add its row to tools/deploy_actions.py") from None


def plan_types(documents: Iterable[Mapping[str, Any]]) -> set[str]:
    """Every resource and invoke type of `plan --format json` documents."""
    types: set[str] = set()
    for document in documents:
        types |= {r["type"] for r in document["resources"]}
        types |= {i["token"] for i in document.get("invokes", ())}
    return types


def _role_name(arn: str) -> str | None:
    """The role name of a role ARN, with its path (`path/name`), as a role ARN's resource names it."""
    match = _ARN.match(arn)
    return f"{match['path']}{match['name']}" if match and match["kind"] == "role" else None


def _policy_arn(arn: str, own: set[str], partition: str) -> str:
    """A policy ARN as the policy grants it: the stack's own policies in the deploy role's account."""
    match = _ARN.match(arn)
    if match and match["account"] != "aws" and match["name"] in own:
        return f"arn:{partition}:iam::{ACCOUNT}:policy/{match['path']}{match['name']}"
    return arn


def stack_iam(documents: Iterable[Mapping[str, Any]]) -> StackIam:
    """The IAM names of the plans' resources: roles (by name, or by the auto-named prefix `<name>-`), policies,
    what is attached and passed, and the boundaries the roles carry."""
    iam = StackIam()
    attachments: list[str] = []
    role_arns: list[tuple[str, str | None]] = []
    for document in documents:
        for resource in document["resources"]:
            _record_iam_resource(iam, resource, attachments)
            _record_table_row(iam, resource, attachments, role_arns)
    iam.boundaries.discard("")
    for value, service in role_arns:
        name = _role_name(value) or value  # an instance profile's `role` is the role's name
        created = next((r for r in iam.roles if r == name or (r.endswith("*") and name.startswith(r[:-1]))), None)
        iam.passed.setdefault(service, set()).add(created or name)
    iam.attached = {_policy_arn(a.format(partition=iam.partition), iam.policies, iam.partition)
                    for a in attachments if a}
    return iam


def _record_iam_resource(iam: StackIam, resource: Mapping[str, Any], attachments: list[str]) -> None:
    """What one planned resource says of itself: the partition of its ARNs, and the IAM names it creates."""
    type_, inputs = resource["type"], resource.get("inputs") or {}
    for value in inputs.values():
        if isinstance(value, str) and (match := _ARN.match(value)):
            iam.partition = match["partition"]
    if type_ == "aws:iam/role:Role":
        iam.roles.add(inputs.get("name") or f"{inputs.get('namePrefix') or resource['name'] + '-'}*")
        iam.boundaries.add(inputs.get("permissionsBoundary") or "")
    elif type_ == "aws:iam/policy:Policy":
        iam.policies.add(inputs.get("name") or f"{resource['name']}-*")
    elif type_ == "aws:iam/rolePolicyAttachment:RolePolicyAttachment":
        attachments.append(inputs.get("policyArn", ""))
    elif type_ == "aws:iam/instanceProfile:InstanceProfile":
        iam.instance_profiles.add(inputs.get("name") or f"{resource['name']}-*")
    elif type_ == "eks-karpenter:index:Karpenter":
        iam.karpenter = True
    elif type_ == "aws:iam/serviceLinkedRole:ServiceLinkedRole":
        iam.service_linked.add(inputs["awsServiceName"])


def _record_table_row(iam: StackIam, resource: Mapping[str, Any], attachments: list[str],
                      role_arns: list[tuple[str, str | None]]) -> None:
    """What the table's row for the resource's type adds: service-linked roles, roles the provider creates for
    it, and the role it passes to a service."""
    type_, inputs = resource["type"], resource.get("inputs") or {}
    if not needs_iam(type_) or type_ not in ACTIONS:
        return
    spec = expanded(type_)
    iam.service_linked |= set(spec.service_linked_roles)
    for child in spec.child_roles:
        role = child.prefix.format(name=resource["name"]) + "*"
        iam.roles.add(role)
        iam.passed.setdefault(child.passed_to, set()).add(role)
        attachments += [f"arn:{{partition}}:iam::aws:policy/{p}" for p in child.managed_policies]
    if spec.passes_role is not None:
        key, service = spec.passes_role
        if isinstance(inputs.get(key), str):
            role_arns.append((inputs[key], service))


def _arns(partition: str, kind: str, names: Iterable[str]) -> list[str]:
    return sorted(f"arn:{partition}:iam::{ACCOUNT}:{kind}/{n}" for n in names)


def _statement(sid: str, actions: Iterable[str], resources: list[str] | str,
               condition: Mapping[str, Any] | None = None) -> dict[str, Any]:
    statement: dict[str, Any] = {"Sid": sid, "Effect": "Allow", "Action": sorted(set(actions)),
                                 "Resource": resources}
    if condition:
        statement["Condition"] = dict(condition)
    return statement


def deploy_role_policy(documents: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The policy document for a deploy role that plans `documents` (`plan --format json`, one or several
    stacks). Raises KeyError naming any AWS type without a row in the table, and ValueError when the stacks'
    roles carry different boundaries (one policy can require only one)."""
    documents = list(documents)
    types = sorted(t for t in plan_types(documents) if needs_iam(t))
    rows = {t: row(t) for t in types}
    iam = stack_iam(documents)
    if len(iam.boundaries) > 1:
        raise ValueError(f"the stacks' roles carry different permissions boundaries: {sorted(iam.boundaries)}")
    boundary = next(iter(iam.boundaries), None)
    actions = _Actions.of(rows.values())
    statements = [_statement(f"{service.capitalize()}ForPlannedResources", granted, "*")
                  for service, granted in sorted(actions.by_service.items())]
    statements += _role_statements(iam, actions.role, boundary)
    statements += _iam_object_statements(iam, actions)
    statements += _service_linked_statements(iam, actions.service_linked)
    statements += _pass_role_statements(iam)
    return {"Version": POLICY_VERSION, "Statement": statements}


@dataclass
class _Actions:
    """The table's actions for the planned types, sorted by what they act on."""

    by_service: dict[str, set[str]] = field(default_factory=dict)
    """Non-IAM actions, by service."""
    role: set[str] = field(default_factory=set)
    """IAM actions on the stack's own roles."""
    service_linked: set[str] = field(default_factory=set)
    caller: set[str] = field(default_factory=set)
    """IAM reads of the role the deployer runs as."""
    by_kind: dict[str, set[str]] = field(default_factory=dict)
    """Other IAM actions, by the kind of resource they act on (`policy`, `instance-profile`, ..., `*`)."""

    @staticmethod
    def of(specs: Iterable[Any]) -> _Actions:
        out = _Actions()
        for spec in specs:
            for action in spec.actions:
                service, name = action.split(":")
                if service != "iam":
                    out.by_service.setdefault(service, set()).add(action)
                elif IAM_RESOURCE[name] == "role":
                    {"stack": out.role, "service-linked": out.service_linked, "caller": out.caller}[
                        spec.roles].add(action)
                else:
                    out.by_kind.setdefault(IAM_RESOURCE[name], set()).add(action)
        return out


def _role_statements(iam: StackIam, role_actions: set[str], boundary: str | None) -> list[dict[str, Any]]:
    """IAM on the stack's own roles; grants and attachments only with the boundary, attachments only of the
    stack's policies."""
    if not role_actions:
        return []
    roles = _arns(iam.partition, "role", iam.roles)
    attach = role_actions & {"iam:AttachRolePolicy"}
    grants = role_actions & set(BOUNDED) - attach if boundary else set()
    plain = role_actions - attach - grants - (set(UNBOUNDING) if boundary else set())
    statements = [_statement("IamOnTheStacksRolesOnly", plain, roles)]
    if grants:
        statements.append(_statement("IamRoleGrantsOnlyWithTheBoundary", grants, roles,
                                     {"StringEquals": {"iam:PermissionsBoundary": boundary}}))
    if attach:
        condition: dict[str, Any] = {"ArnLike": {"iam:PolicyARN": sorted(iam.attached)}}
        if boundary:
            condition["StringEquals"] = {"iam:PermissionsBoundary": boundary}
        statements.append(_statement("IamAttachOnlyTheStacksPolicies", attach, roles, condition))
    return statements


def _iam_object_statements(iam: StackIam, actions: _Actions) -> list[dict[str, Any]]:
    """IAM on the stack's policies, instance profiles (and Karpenter's), EKS OIDC providers, listings, and the
    deployer's own role."""
    partition, by_kind = iam.partition, actions.by_kind
    statements = []
    if "policy" in by_kind:
        statements.append(_statement("IamOnTheStacksPoliciesOnly", by_kind["policy"],
                                     _arns(partition, "policy", iam.policies)))
    profile_actions = by_kind.get("instance-profile", set())
    if iam.instance_profiles and profile_actions:
        statements.append(_statement("IamOnTheStacksInstanceProfilesOnly", profile_actions,
                                     _arns(partition, "instance-profile", iam.instance_profiles)))
    if iam.karpenter and "iam:RemoveRoleFromInstanceProfile" in profile_actions:
        # The node role's delete takes it out of the instance profiles Karpenter made for it (tagged with their
        # EC2NodeClass): only those.
        statements.append(_statement(
            "IamTakeRolesOutOfKarpentersProfiles", ["iam:RemoveRoleFromInstanceProfile"],
            [f"arn:{partition}:iam::{ACCOUNT}:instance-profile/*"],
            {"StringLike": {f"aws:ResourceTag/{NODECLASS_LABEL}": "*"}}))
    if "oidc-provider" in by_kind:
        statements.append(_statement("IamOnEksOidcProvidersOnly", by_kind["oidc-provider"],
                                     [f"arn:{partition}:iam::{ACCOUNT}:oidc-provider/oidc.eks.*"]))
    if "*" in by_kind:
        statements.append(_statement("IamListings", by_kind["*"], "*"))
    if actions.caller:
        # Reads of the role the deployer runs as, which no plan names (narrow it to that role's ARN if you like).
        statements.append(_statement("IamReadTheDeployersOwnRole", actions.caller,
                                     [f"arn:{partition}:iam::{ACCOUNT}:role/*"]))
    return statements


def _service_linked_statements(iam: StackIam, slr_actions: set[str]) -> list[dict[str, Any]]:
    """Create only the service-linked roles the plans need, and act on those only."""
    services = sorted(iam.service_linked)
    if not services:
        return []
    arns = [f"arn:{iam.partition}:iam::{ACCOUNT}:role/aws-service-role/{s}/*" for s in services]
    statements = [_statement("IamCreateOnlyTheServiceLinkedRolesNeeded", ["iam:CreateServiceLinkedRole"], arns,
                             {"StringEquals": {"iam:AWSServiceName": services}})]
    if slr_actions - {"iam:CreateServiceLinkedRole"}:
        statements.append(_statement("IamOnThoseServiceLinkedRolesOnly", slr_actions - {"iam:CreateServiceLinkedRole"},
                                     arns))
    return statements


def _pass_role_statements(iam: StackIam) -> list[dict[str, Any]]:
    """iam:PassRole of each role to the service it is passed to."""
    statements = []
    for passed_to, names in sorted(iam.passed.items(), key=lambda kv: kv[0] or ""):
        # A role passed where IAM names no service (an instance profile's, a Fargate profile's): by name only.
        sid = "PassRolesTo" + "".join(p.capitalize() for p in re.split(r"[.-]", passed_to.removesuffix(
            ".amazonaws.com"))) if passed_to else "PassRolesByNameOnly"
        statements.append(_statement(sid, ["iam:PassRole"], _arns(iam.partition, "role", names),
                                     {"StringEquals": {"iam:PassedToService": passed_to}} if passed_to else None))
    return statements


def policy_size(document: Mapping[str, Any]) -> int:
    """Size of a policy document as IAM counts it against its quotas: compact JSON, whitespace excluded."""
    return len(json.dumps(document, separators=(",", ":"), ensure_ascii=False))


def managed_policies(policy: Mapping[str, Any], limit: int = MANAGED_POLICY_SIZE_LIMIT) -> list[dict[str, Any]]:
    """`policy` split, statement by statement in order, into documents IAM accepts as managed policies (each at
    most `limit` characters): the deploy role gets them all (IAM's default quota is 10 managed policies a role)."""
    parts: list[dict[str, Any]] = []
    for statement in policy["Statement"]:
        candidate = {"Version": policy["Version"], "Statement": [*parts[-1]["Statement"], statement]} if parts \
            else None
        if candidate is not None and policy_size(candidate) <= limit:
            parts[-1] = candidate
            continue
        alone = {"Version": policy["Version"], "Statement": [statement]}
        if policy_size(alone) > limit:
            raise ValueError(f"statement {statement.get('Sid')} alone is over IAM's {limit} characters")
        parts.append(alone)
    return parts
