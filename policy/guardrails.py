"""Guardrails for an EKS + Karpenter stack: pure checks, and the CrossGuard policies that run them.

Each `check_*` function takes a resource type and its properties (plain dicts, or the read-only mappings
pulumi-policy passes) and returns violation messages; an empty list means compliant. The `Policy` objects at the
bottom only adapt those functions to pulumi-policy. `PolicyPack(...)` is constructed in `__main__.py` alone,
because constructing it starts the analyzer server.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from fnmatch import fnmatchcase
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)

NODEPOOL = "kubernetes:karpenter.sh/v1:NodePool"
EC2NODECLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
QUEUE = "aws:sqs/queue:Queue"
HELM_TYPES = ("kubernetes:helm.sh/v3:Release", "kubernetes:helm.sh/v4:Chart")
IAM_POLICY_TYPES = ("aws:iam/policy:Policy", "aws:iam/rolePolicy:RolePolicy", "aws:iam/userPolicy:UserPolicy",
                    "aws:iam/groupPolicy:GroupPolicy")
CLUSTER_TYPES = ("eks:index:Cluster", "aws:eks/cluster:Cluster")
CAPACITY_TYPE = "karpenter.sh/capacity-type"

Check = Callable[[str, Mapping[str, Any]], list[str]]


def _dig(value: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def _items(value: Any) -> list[Any]:
    """A JSON list as a list (pulumi-policy hands out read-only sequences, not lists); anything else is empty."""
    return list(value) if isinstance(value, Sequence) and not isinstance(value, str) else []


def _strings(value: Any) -> list[str]:
    """IAM's "one string or a list of strings"."""
    return [value] if isinstance(value, str) else [v for v in _items(value) if isinstance(v, str)]


# --- Karpenter ----------------------------------------------------------------------------------------------


def check_nodepool(resource_type: str, props: Mapping[str, Any]) -> list[str]:
    """A NodePool caps what it may launch and replaces its nodes regularly."""
    if resource_type != NODEPOOL:
        return []
    found = []
    limits = _dig(props, "spec", "limits")
    if not isinstance(limits, Mapping) or not limits:
        found.append("spec.limits is not set: without a cpu/memory cap a bad rollout or a scheduling loop can launch "
                     "instances without bound")
    expire = _dig(props, "spec", "template", "spec", "expireAfter")
    if not expire:
        found.append("spec.template.spec.expireAfter is not set: set it (for example 720h) in the stack file so "
                     "the node lifetime is a reviewed decision")
    elif expire == "Never":
        found.append("spec.template.spec.expireAfter is Never: nodes would never be replaced and never pick up "
                     "new AMIs or configuration")
    return found


def check_ec2nodeclass(resource_type: str, props: Mapping[str, Any]) -> list[str]:
    """IMDSv2 only, stated explicitly, and encrypted EBS volumes."""
    if resource_type != EC2NODECLASS:
        return []
    found = []
    spec = props.get("spec")
    # Karpenter defaults to `required`, but a default can change between versions; the stack states it.
    tokens = _dig(spec, "metadataOptions", "httpTokens")
    if tokens != "required":
        state = "is not set" if tokens is None else f"is {tokens!r}"
        found.append(f"spec.metadataOptions.httpTokens {state}: set it to \"required\" (IMDSv2 only) so pods "
                     "cannot replay node credentials through IMDSv1")
    mappings = _dig(spec, "blockDeviceMappings")
    if mappings is None:
        # Karpenter's default volumes for alias AMIs (al2023@..., bottlerocket@...) are encrypted gp3; a custom
        # AMI keeps the AMI's own mappings, which may not be.
        terms = _items(_dig(spec, "amiSelectorTerms"))
        if not terms or not all(isinstance(t, Mapping) and t.get("alias") for t in terms):
            found.append("spec.blockDeviceMappings is not set and the AMI is not selected by alias: declare the "
                         "root volume with ebs.encrypted: true")
    for i, mapping in enumerate(_items(mappings)):
        if _dig(mapping, "ebs", "encrypted") is not True:
            device = _dig(mapping, "deviceName") or "?"
            found.append(f"spec.blockDeviceMappings[{i}] ({device}) is not encrypted: set ebs.encrypted: true")
    return found


def spot_allowed(props: Mapping[str, Any]) -> bool:
    """Whether a NodePool may launch spot capacity. Karpenter v1 adds no default requirements, so a pool without
    a capacity-type requirement may use spot (and prefers it over on-demand)."""
    for req in _items(_dig(props, "spec", "template", "spec", "requirements")):
        if not isinstance(req, Mapping) or req.get("key") != CAPACITY_TYPE:
            continue
        operator, values = req.get("operator"), _strings(req.get("values"))
        if (operator == "In" and "spot" not in values) or (operator == "NotIn" and "spot" in values):
            return False
        if operator == "DoesNotExist":
            return False
    return True


def _karpenter_release(resource_type: str, props: Mapping[str, Any]) -> bool:
    chart = props.get("chart")
    return resource_type in HELM_TYPES and isinstance(chart, str) and chart.rstrip("/").split("/")[-1] == "karpenter"


def check_spot_interruption(resources: Iterable[tuple[str, Mapping[str, Any]]]) -> list[str]:
    """Spot pools need interruption handling: an SQS queue, named in the Karpenter release's values."""
    resources = list(resources)
    spot_pools = [_dig(p, "metadata", "name") or "?" for t, p in resources if t == NODEPOOL and spot_allowed(p)]
    if not spot_pools:
        return []
    pools = ", ".join(sorted(spot_pools))
    queues = [p.get("name") for t, p in resources if t == QUEUE]
    releases = [p for t, p in resources if _karpenter_release(t, p)]
    found = []
    if not queues:
        found.append(f"NodePools that may use spot ({pools}) but no SQS interruption queue ({QUEUE}) in the stack: "
                     "spot nodes would get no drain before the two-minute reclaim")
    if not releases:
        found.append(f"NodePools that may use spot ({pools}) but no Karpenter Helm release in the stack to read an "
                     "interruption queue")
    for values in (_dig(p, "values") for p in releases):
        queue = _dig(values, "settings", "interruptionQueue")
        if not queue:
            found.append(f"NodePools that may use spot ({pools}) but the Karpenter release does not set "
                         "values.settings.interruptionQueue: interruption handling is off")
        elif not isinstance(queue, str) or queue.startswith(("arn:", "https://")):
            found.append(f"values.settings.interruptionQueue is {queue!r}: it takes the queue name, not an ARN or URL")
        elif queues and queue not in queues:
            found.append(f"values.settings.interruptionQueue names {queue!r}, which is not a queue in this stack "
                         f"({', '.join(sorted(str(q) for q in queues))})")
    return found


DEFAULT_MAX_MONTHLY_AT_CPU_LIMIT = 100_000.0
"""USD a month one NodePool may reach at its cpu limit on its dearest admitted vCPUs (on-demand list prices)."""


def max_monthly_at_cpu_limit(config: Mapping[str, Any]) -> float:
    """The policy config `maxMonthlyAtCpuLimit` (USD), or the default."""
    configured = config.get("maxMonthlyAtCpuLimit")
    if isinstance(configured, int | float) and not isinstance(configured, bool):
        return float(configured)
    return DEFAULT_MAX_MONTHLY_AT_CPU_LIMIT


def check_pool_cost(resources: Iterable[tuple[str, Mapping[str, Any]]], cap: float) -> list[str]:
    """No NodePool can cost more than `cap` a month at its cpu limit (`monthlyAtCpuLimit.max` of `infra cost` for a
    us-east-1 stack: cpu limit x the dearest on-demand price per vCPU it admits x 730 h), and every pool has a cpu
    limit. The pack does not see the stack's region, so it holds every stack to Karpenter's us-east-1 prices."""
    # The catalogue ships with the library this pack runs beside (its virtualenv is the project's).
    from eks_karpenter.catalogue import ami_family_of
    from eks_karpenter.tools.cost.estimate import PoolSpec, pool_figures

    resources = list(resources)
    families = {_dig(p, "metadata", "name"): ami_family_of(p) for t, p in resources if t == EC2NODECLASS}
    found = []
    for t, p in resources:
        if t != NODEPOOL or not isinstance(_dig(p, "spec", "template", "spec", "requirements"), Sequence):
            continue
        name = _dig(p, "metadata", "name") or "?"
        figures = pool_figures(PoolSpec(name, p, families.get(_dig(p, "spec", "template", "spec", "nodeClassRef",
                                                                   "name"))))
        ceiling = figures["monthlyAtCpuLimit"]
        if figures["cpuLimit"] is None:
            found.append(f"NodePool {name} has no spec.limits.cpu: what it can cost is unbounded (cap: "
                         f"${cap:,.0f}/month)")
        elif ceiling and ceiling["max"] > cap:
            found.append(f"NodePool {name} can cost ${ceiling['max']:,.2f}/month at its cpu limit "
                         f"({figures['cpuLimit']} vCPU on its dearest admitted type, on-demand), over the cap of "
                         f"${cap:,.0f}: lower spec.limits.cpu, narrow its instance types, or raise "
                         "maxMonthlyAtCpuLimit")
    return found


# --- IAM ----------------------------------------------------------------------------------------------------


def _grants(pattern: str, action: str) -> bool:
    # IAM action patterns use * and ? and are case-insensitive.
    return fnmatchcase(action.lower(), pattern.lower())


def check_iam_policy(resource_type: str, props: Mapping[str, Any]) -> list[str]:
    """No statement allows iam:PassRole (directly, or through iam:* or *) on every role."""
    if resource_type not in IAM_POLICY_TYPES:
        return []
    document = props.get("policy")
    if isinstance(document, str):
        try:
            document = json.loads(document)
        except ValueError:
            return []  # not known yet (an output during preview); checked when it is
    statements = _dig(document, "Statement")
    found = []
    for i, st in enumerate([statements] if isinstance(statements, Mapping) else _items(statements)):
        if not isinstance(st, Mapping) or st.get("Effect") != "Allow":
            continue
        every_resource = "*" in _strings(st.get("Resource")) or "NotResource" in st
        if not every_resource:
            continue
        if "NotAction" in st:
            granted = not any(_grants(p, "iam:PassRole") for p in _strings(st.get("NotAction")))
            how = "NotAction without iam:PassRole"
        else:
            hits = [a for a in _strings(st.get("Action")) if _grants(a, "iam:PassRole")]
            granted, how = bool(hits), ", ".join(hits)
        if granted:
            sid = st.get("Sid") or f"Statement[{i}]"
            found.append(f"{sid} allows iam:PassRole ({how}) on every resource: whoever holds it can hand any role, "
                         "admin included, to a service; allow it on the specific role ARNs")
    return found


# --- EKS ----------------------------------------------------------------------------------------------------


def stack_of(urn: str) -> str:
    """`urn:pulumi:prod::project::type::name` -> `prod`."""
    return urn.split("::", 1)[0].rsplit(":", 1)[-1]


def encryption_required(stack: str, config: Mapping[str, Any]) -> bool:
    """The policy config `requireEncryption` decides; without it, production stacks (`prod`, `prod-*`) must."""
    configured = config.get("requireEncryption")
    if isinstance(configured, bool):
        return configured
    return stack == "prod" or stack.startswith("prod-")


def check_cluster(resource_type: str, props: Mapping[str, Any], require_encryption: bool) -> list[str]:
    """Control-plane logs go to CloudWatch; where required, Kubernetes secrets are envelope-encrypted with KMS."""
    if resource_type not in CLUSTER_TYPES:
        return []
    found = []
    if not _items(props.get("enabledClusterLogTypes")):
        found.append("enabledClusterLogTypes is empty: send at least api, audit and authenticator logs to CloudWatch "
                     "so there is a record of who did what")
    if require_encryption:
        if resource_type == "eks:index:Cluster":
            encrypted = bool(props.get("encryptionConfigKeyArn"))
        else:
            config = props.get("encryptionConfig")
            encrypted = bool(_dig(config, "provider", "keyArn")) and "secrets" in _strings(_dig(config, "resources"))
        if not encrypted:
            found.append("Kubernetes secrets are not encrypted with a KMS key (encryptionConfigKeyArn / "
                         "encryptionConfig): required for this stack")
    return found


# --- pulumi-policy adapters ---------------------------------------------------------------------------------


def _validate(check: Check) -> Callable[[ResourceValidationArgs, ReportViolation], None]:
    def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
        for message in check(args.resource_type, args.props):
            report_violation(message, None)

    return validate


def _validate_cluster(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    required = encryption_required(stack_of(args.urn), args.get_config())
    for message in check_cluster(args.resource_type, args.props, required):
        report_violation(message, None)


def _validate_spot(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    for message in check_spot_interruption((r.resource_type, r.props) for r in args.resources):
        report_violation(message, None)


def _validate_pool_cost(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    cap = max_monthly_at_cpu_limit(args.get_config())
    for message in check_pool_cost(((r.resource_type, r.props) for r in args.resources), cap):
        report_violation(message, None)


MANDATORY = EnforcementLevel.MANDATORY

RESOURCE_CHECKS: dict[str, Check] = {
    "nodepool-limits-and-expiry": check_nodepool,
    "ec2nodeclass-imdsv2-encrypted-ebs": check_ec2nodeclass,
}
"""The pack's checks of one Karpenter object, by policy name (what `import-legacy` holds its output to)."""
POOL_COST_POLICY = "nodepool-cost-ceiling"

POLICIES = [
    ResourceValidationPolicy(
        name="nodepool-limits-and-expiry",
        description="Every Karpenter NodePool sets spec.limits and spec.template.spec.expireAfter.",
        validate=_validate(RESOURCE_CHECKS["nodepool-limits-and-expiry"]), enforcement_level=MANDATORY),
    ResourceValidationPolicy(
        name="ec2nodeclass-imdsv2-encrypted-ebs",
        description="EC2NodeClasses require IMDSv2 explicitly and encrypt every EBS volume.",
        validate=_validate(RESOURCE_CHECKS["ec2nodeclass-imdsv2-encrypted-ebs"]), enforcement_level=MANDATORY),
    ResourceValidationPolicy(
        name="iam-no-passrole-on-star",
        description="No IAM policy allows iam:PassRole (or iam:*, *) on Resource \"*\".",
        validate=_validate(check_iam_policy), enforcement_level=MANDATORY),
    ResourceValidationPolicy(
        name="eks-logging-and-secrets-encryption",
        description="EKS clusters send control-plane logs to CloudWatch and, in production, encrypt secrets with KMS.",
        validate=_validate_cluster, enforcement_level=MANDATORY,
        config_schema=PolicyConfigSchema(properties={"requireEncryption": {"type": "boolean"}})),
    StackValidationPolicy(
        name="spot-needs-interruption-queue",
        description="If a NodePool may use spot, the stack has an SQS interruption queue that the Karpenter "
                    "release names in settings.interruptionQueue.",
        validate=_validate_spot, enforcement_level=MANDATORY),
    StackValidationPolicy(
        name=POOL_COST_POLICY,
        description="No NodePool can cost more a month at its cpu limit (on its dearest admitted vCPUs, on-demand) "
                    f"than maxMonthlyAtCpuLimit USD (default {DEFAULT_MAX_MONTHLY_AT_CPU_LIMIT:,.0f}).",
        validate=_validate_pool_cost, enforcement_level=MANDATORY,
        config_schema=PolicyConfigSchema(properties={"maxMonthlyAtCpuLimit": {"type": "number", "minimum": 0}})),
]
"""Every policy of the pack, in the order they are reported."""
