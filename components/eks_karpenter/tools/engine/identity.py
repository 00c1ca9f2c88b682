"""What really identifies a resource in its cloud (its natural key), and which changes of a plan diff collide on one.

Pulumi knows a resource by its URN; AWS and Kubernetes know it by a natural key: an access entry by its cluster
and principal, an IAM role by its name, a Helm release by its namespace and name, a Kubernetes object by its
group, kind, namespace and name. When a change deletes one URN and creates another with the same key (a
principal moved from `deployers` to `clusterAdmins`, a resource renamed without an alias), `pulumi up` creates
the new URN before it deletes the old one (deleteBeforeReplace only orders the replacement of *one* URN), so the
create fails (EKS: ResourceInUseException; IAM: EntityAlreadyExists; Kubernetes: AlreadyExists), or, for
attach-style resources the cloud accepts twice, succeeds and is then undone by the delete of the old URN.

`NATURAL_KEYS` is the table of keys, `natural_key` reads one resource's, and `collisions` finds the create and
delete pairs of a diff that share one. Pure: plan data in, data out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any

from eks_karpenter.tools.engine.document import PlannedResource, input_at
from eks_karpenter.tools.engine.fleets import Refusal

if TYPE_CHECKING:
    from eks_karpenter.tools.engine.changes import ResourceChange


@dataclass(frozen=True)
class NaturalKey:
    """How to read one resource type's natural key from its inputs (camelCase paths, dotted for nested ones)."""

    family: str
    """What the key identifies, across type tokens that name one kind of object (pulumi-eks' ManagedNodeGroup
    and pulumi-aws' NodeGroup are both an EKS node group); also how the refusal names it."""
    required: tuple[str, ...]
    """Paths that must all be set: without them the name is generated (Pulumi's random suffix, a name prefix,
    a provider-chosen id), so no two resources can share it and there is no key."""
    optional: tuple[str, ...] = ()
    """Paths that are part of the key when set (a security group rule's one source, an event bus)."""
    clash: str = "the create fails: the name is taken"
    """What happens at apply time when a create meets a resource still holding the key."""
    hint: str = ""
    """A fix particular to the type, added to the refusal."""


_ATTACHED = "the create succeeds ({what}), then deleting the old resource undoes it: {lost}"
_PRINCIPAL = ("An entry is named by its principal in every list: a principal moved between `deployers`, "
              "`clusterAdmins` and `teams` keeps it by alias. A stack still on a release that named entries by list "
              "runs one `pulumi up` on this release before moving a deployer (docs/UPGRADING.md)")

NATURAL_KEYS: dict[str, NaturalKey] = {
    # --- EKS ---------------------------------------------------------------------------------------------------
    "eks:index:Cluster": NaturalKey("EKS cluster", ("name",)),
    "aws:eks/cluster:Cluster": NaturalKey("EKS cluster", ("name",)),
    # pulumi-eks' ManagedNodeGroup takes the cluster as an object: one stack has one cluster, so the name is enough.
    "eks:index:ManagedNodeGroup": NaturalKey("EKS node group", ("nodeGroupName",)),
    "aws:eks/nodeGroup:NodeGroup": NaturalKey("EKS node group", ("nodeGroupName",)),
    "aws:eks/addon:Addon": NaturalKey("EKS add-on", ("clusterName", "addonName"),
                                      clash="the create fails: EKS installs an add-on once per cluster"),
    "aws:eks/accessEntry:AccessEntry": NaturalKey(
        "EKS access entry", ("clusterName", "principalArn"),
        clash="the create fails: EKS allows one access entry per principal (ResourceInUseException)",
        hint=_PRINCIPAL),
    "aws:eks/accessPolicyAssociation:AccessPolicyAssociation": NaturalKey(
        "EKS access policy association", ("clusterName", "principalArn", "policyArn"),
        clash=_ATTACHED.format(what="EKS associates a policy once", lost="the principal loses the policy"),
        hint=_PRINCIPAL),
    "aws:eks/podIdentityAssociation:PodIdentityAssociation": NaturalKey(
        "EKS Pod Identity association", ("clusterName", "namespace", "serviceAccount"),
        clash="the create fails: EKS allows one association per service account"),
    # --- IAM ---------------------------------------------------------------------------------------------------
    "aws:iam/role:Role": NaturalKey("IAM role", ("name",), clash="the create fails: EntityAlreadyExists"),
    "aws:iam/policy:Policy": NaturalKey("IAM policy", ("name",), ("path",),
                                        clash="the create fails: EntityAlreadyExists"),
    "aws:iam/instanceProfile:InstanceProfile": NaturalKey("IAM instance profile", ("name",),
                                                          clash="the create fails: EntityAlreadyExists"),
    "aws:iam/rolePolicy:RolePolicy": NaturalKey(
        "IAM inline policy", ("role", "name"),
        clash=_ATTACHED.format(what="IAM overwrites the inline policy", lost="the role loses the policy")),
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment": NaturalKey(
        "IAM policy attachment", ("role", "policyArn"),
        clash=_ATTACHED.format(what="IAM attaches a policy once", lost="the role loses the policy")),
    "aws:iam/serviceLinkedRole:ServiceLinkedRole": NaturalKey("IAM service-linked role", ("awsServiceName",),
                                                              ("customSuffix",)),
    "aws:iam/openIdConnectProvider:OpenIdConnectProvider": NaturalKey("IAM OIDC provider", ("url",)),
    # --- queue, events, logs, alarms, keys ---------------------------------------------------------------------
    "aws:sqs/queue:Queue": NaturalKey("SQS queue", ("name",)),
    "aws:sqs/queuePolicy:QueuePolicy": NaturalKey(
        "SQS queue policy", ("queueUrl",),
        clash=_ATTACHED.format(what="SQS overwrites the queue's policy", lost="the queue has no policy")),
    "aws:cloudwatch/eventRule:EventRule": NaturalKey("EventBridge rule", ("name",), ("eventBusName",)),
    "aws:cloudwatch/eventTarget:EventTarget": NaturalKey(
        "EventBridge target", ("rule", "targetId"), ("eventBusName",),
        clash=_ATTACHED.format(what="EventBridge overwrites the target", lost="the rule loses its target")),
    "aws:cloudwatch/logGroup:LogGroup": NaturalKey("CloudWatch log group", ("name",),
                                                   clash="the create fails: ResourceAlreadyExistsException"),
    "aws:cloudwatch/metricAlarm:MetricAlarm": NaturalKey(
        "CloudWatch alarm", ("name",),
        clash=_ATTACHED.format(what="CloudWatch overwrites the alarm", lost="the alarm is gone")),
    "aws:kms/alias:Alias": NaturalKey("KMS alias", ("name",)),
    # --- network -----------------------------------------------------------------------------------------------
    "aws:ec2/tag:Tag": NaturalKey(
        "EC2 tag", ("resourceId", "key"),
        clash=_ATTACHED.format(what="EC2 overwrites the tag", lost="the tag is removed")),
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": NaturalKey(
        "security group rule", ("securityGroupId", "ipProtocol"),
        ("fromPort", "toPort", "cidrIpv4", "cidrIpv6", "prefixListId", "referencedSecurityGroupId"),
        clash="the create fails: InvalidPermission.Duplicate"),
    "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": NaturalKey(
        "security group rule", ("securityGroupId", "ipProtocol"),
        ("fromPort", "toPort", "cidrIpv4", "cidrIpv6", "prefixListId", "referencedSecurityGroupId"),
        clash="the create fails: InvalidPermission.Duplicate"),
    "aws:ec2/securityGroupRule:SecurityGroupRule": NaturalKey(
        "security group rule", ("securityGroupId", "type", "protocol"),
        ("fromPort", "toPort", "cidrBlocks", "ipv6CidrBlocks", "prefixListIds", "sourceSecurityGroupId", "self"),
        clash="the create fails: InvalidPermission.Duplicate"),
    "aws:ec2/securityGroup:SecurityGroup": NaturalKey("security group", ("vpcId", "name"),
                                                      clash="the create fails: InvalidGroup.Duplicate"),
    "aws:ec2/launchTemplate:LaunchTemplate": NaturalKey("launch template", ("name",)),
    "aws:ec2/subnet:Subnet": NaturalKey("subnet", ("vpcId", "cidrBlock"),
                                        clash="the create fails: InvalidSubnet.Conflict"),
    "aws:ec2/route:Route": NaturalKey(
        "route", ("routeTableId",), ("destinationCidrBlock", "destinationIpv6CidrBlock", "destinationPrefixListId"),
        clash="the create fails: RouteAlreadyExists"),
    "aws:ec2/routeTableAssociation:RouteTableAssociation": NaturalKey(
        "route table association", ("subnetId",), clash="the create fails: a subnet has one route table"),
    "aws:ec2/internetGateway:InternetGateway": NaturalKey("internet gateway attachment", ("vpcId",),
                                                          clash="the create fails: a VPC has one internet gateway"),
    "aws:ec2/flowLog:FlowLog": NaturalKey("flow log", ("vpcId", "trafficType", "logDestination"),
                                          clash="the create fails: FlowLogAlreadyExists"),
    # --- Kubernetes --------------------------------------------------------------------------------------------
    # A release is a release name in a namespace (Helm keeps it in Secrets there).
    "kubernetes:helm.sh/v3:Release": NaturalKey("Helm release", ("namespace", "name"),
                                                clash="the create fails: the release name is in use"),
    # Patch resources share an object with whoever else manages it: two patches of one object collide with each
    # other (the old one's delete removes the fields it set), not with the object.
    "kubernetes:*Patch": NaturalKey("Kubernetes patch", ("apiVersion", "kind", "metadata.name"),
                                    ("metadata.namespace",),
                                    clash=_ATTACHED.format(what="server-side apply merges the patch",
                                                           lost="the fields it sets are removed")),
    # Every other object: group (the apiVersion without its version) + kind + namespace + name.
    "kubernetes:*": NaturalKey("Kubernetes object", ("apiVersion", "kind", "metadata.name"), ("metadata.namespace",),
                               clash="the create fails: AlreadyExists"),
}
"""Resource type (exact, else the first matching `*` pattern) -> its natural key: the one table the diff reads.
Sources: the AWS APIs' uniqueness rules (the error each `clash` names), and the Kubernetes API (an object is unique
by group, kind, namespace and name; its version is only a representation). A resource whose required paths are
unset is auto-named (Pulumi's random suffix, a name prefix) and has no key: it collides with nothing."""

GENERATED_IDENTITY = frozenset({
    "aws:ec2/vpc:Vpc", "aws:ec2/eip:Eip", "aws:ec2/natGateway:NatGateway", "aws:ec2/routeTable:RouteTable",
    "aws:kms/key:Key",
})
"""Types whose only identity is an id AWS picks at create time (providers and components have none): no two
resources can share it. Every custom type the shipped stacks plan is either here or in `NATURAL_KEYS` (tested), so
a new type is classified when it enters the program."""


def key_spec(resource_type: str) -> NaturalKey | None:
    """The table entry for a type: its own, else the first wildcard entry that matches."""
    if resource_type in NATURAL_KEYS:
        return NATURAL_KEYS[resource_type]
    return next((spec for pattern, spec in NATURAL_KEYS.items()
                 if "*" in pattern and fnmatchcase(resource_type, pattern)), None)


def natural_key(r: PlannedResource) -> tuple[str, ...] | None:
    """(family, value, ...) of a resource, or None when its identity is generated (or its type has no key)."""
    spec = key_spec(r.type) if r.custom else None
    if spec is None:
        return None
    values: list[str] = [spec.family]
    for path in spec.required:
        value = input_at(r.inputs, path)
        if value in (None, ""):
            return None
        values.append(_text(path, value))
    values += [_text(path, input_at(r.inputs, path)) for path in spec.optional]
    return tuple(values)


def _text(path: str, value: Any) -> str:
    if value is None:
        return ""
    if path == "apiVersion":  # the group: `apps/v1` -> `apps`, core `v1` -> ``
        return str(value).rpartition("/")[0]
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list):
        return ",".join(sorted(str(v) for v in value))
    return str(value)


def show_key(key: tuple[str, ...]) -> str:
    """`EKS access entry dev-karpenter/arn:...` (empty optional parts left out)."""
    return f"{key[0]} " + "/".join(v for v in key[1:] if v)


@dataclass(frozen=True)
class Collision:
    """A resource created while another one, deleted (or forgotten) later in the same `pulumi up`, still holds
    its natural key."""

    created: PlannedResource
    held_by: PlannedResource
    key: tuple[str, ...]
    retained: bool
    """The old resource is forgotten, not deleted (`retainOnDelete`): it stays in the account for good."""

    @property
    def clash(self) -> str:
        spec = key_spec(self.created.type)
        return spec.clash if spec else ""


def collisions(changes: Sequence[ResourceChange]) -> tuple[Collision, ...]:
    """Every create whose natural key a delete (or forget) of the same diff holds. Aliased resources are one
    change (an update), never a create and a delete, so they never collide; nor does a create that imports
    (`import`) what a forget leaves in the account. An import beside a delete still collides: the delete removes
    the object just adopted."""
    held: dict[tuple[str, ...], ResourceChange] = {}
    for change in changes:
        if change.op in ("delete", "forget"):
            key = natural_key(change.resource)
            if key is not None:
                held.setdefault(key, change)
    found = []
    for change in changes:
        if change.op != "create":
            continue
        key = natural_key(change.resource)
        old = held.get(key) if key is not None else None
        if key is None or old is None:
            continue
        if old.op == "forget" and change.resource.options.get("import"):
            continue  # the retained object is adopted under the new URN: the documented way to move one
        found.append(Collision(change.resource, old.resource, key, retained=old.op == "forget"))
    return tuple(found)


def collision_refusal(c: Collision) -> Refusal:
    """The refusal of one collision, with its fix: an alias, or (where nothing joins the two) two steps."""
    spec = key_spec(c.created.type)
    old, new = c.held_by, c.created
    kind_old, kind_new = old.type.rsplit(":", 1)[-1], new.type.rsplit(":", 1)[-1]
    gone = "forgotten (`retainOnDelete`)" if c.retained else "deleted"
    text = (f"`{new.name}` ({kind_new}) is created while `{old.name}` ({kind_old}), {gone} in the same update, "
            f"holds the same {c.key[0]}: Pulumi creates a new URN before it deletes an old one "
            "(`deleteBeforeReplace` orders only the replacement of one URN), so " + c.clash + ". ")
    if c.retained:
        text += ("The old one stays in the account after the update, so the create would fail then too. If they are "
                 "one resource, give the new one an alias to the old URN (`pulumi.Alias`); if not, delete the "
                 "retained one by hand, or `pulumi import` it under the new name, first")
    else:
        text += ("If they are one resource, give the new one an alias to the old URN (`pulumi.Alias`): it is then "
                 "kept and updated in place. If nothing can join them, make the change in two steps, each its own "
                 "`pulumi up`: first remove the old one, then add the new one (docs/changes.md, \"Changes that "
                 "collide\")")
    if spec is not None and spec.hint:
        text += ". " + spec.hint
    return Refusal(show_key(c.key), text)
