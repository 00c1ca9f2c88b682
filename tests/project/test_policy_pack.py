"""The CrossGuard pack in policy/: the pure checks, the pulumi-policy wrappers around them, and the pack files.

Plain pytest, no Pulumi CLI: the checks are functions, and the policies are called the way the analyzer calls
them (`ResourceValidationArgs` / `StackValidationArgs`, props wrapped in pulumi-policy's unknown-checking proxy).
"""

from __future__ import annotations

import ast
import importlib.util
import json
import sys
from collections.abc import Mapping
from types import ModuleType
from typing import Any

import pytest
import yaml
from pulumi_policy import (
    PolicyCustomTimeouts,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, UnknownValueError, unknown_checking_proxy

from tests.support import REPO, STACKS, plan_stack

PACK = REPO / "policy"


def _load_guardrails() -> ModuleType:
    # Pulumi runs the pack folder as a script, so its modules are top-level (`import guardrails`), not a package.
    spec = importlib.util.spec_from_file_location("guardrails", PACK / "guardrails.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("guardrails", module)
    spec.loader.exec_module(module)
    return module


g = _load_guardrails()
NODEPOOL, EC2NODECLASS = g.NODEPOOL, g.EC2NODECLASS


def nodepool(name: str = "default", capacity: list[str] | None = None, operator: str = "In",
             limits: dict[str, Any] | None = None, expire: str | None = "720h") -> dict[str, Any]:
    requirements = [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}]
    if capacity is not None:
        requirements.append({"key": "karpenter.sh/capacity-type", "operator": operator, "values": capacity})
    template: dict[str, Any] = {"requirements": requirements,
                                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "x"}}
    if expire is not None:
        template["expireAfter"] = expire
    spec: dict[str, Any] = {"template": {"spec": template}}
    if limits is not None:
        spec["limits"] = limits
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name}, "spec": spec}


def nodeclass(tokens: str | None = "required", mappings: list[dict[str, Any]] | None = None,
              ami: dict[str, str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"role": "node", "amiSelectorTerms": [ami or {"alias": "al2023@v20260815"}]}
    if tokens is not None:
        spec["metadataOptions"] = {"httpTokens": tokens, "httpPutResponseHopLimit": 1}
    if mappings is not None:
        spec["blockDeviceMappings"] = mappings
    return {"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "x"}, "spec": spec}


def iam(*statements: dict[str, Any]) -> dict[str, Any]:
    return {"policy": json.dumps({"Version": "2012-10-17", "Statement": list(statements)})}


def release(queue: str | None) -> dict[str, Any]:
    settings = {"clusterName": "c"} | ({"interruptionQueue": queue} if queue is not None else {})
    return {"chart": "oci://public.ecr.aws/karpenter/karpenter", "name": "karpenter", "values": {"settings": settings}}


GOOD_POOL = nodepool(capacity=["spot", "on-demand"], limits={"cpu": "1000"})
QUEUE = ("aws:sqs/queue:Queue", {"name": "c"})
RELEASE = ("kubernetes:helm.sh/v3:Release", release("c"))


# --- pure checks ------------------------------------------------------------------------------------------------


def test_nodepool_with_limits_and_expiry_passes() -> None:
    assert g.check_nodepool(NODEPOOL, GOOD_POOL) == []


@pytest.mark.parametrize(("pool", "expected"), [
    (nodepool(limits=None), "spec.limits is not set"),
    (nodepool(limits={}), "spec.limits is not set"),
    (nodepool(limits={"cpu": 10}, expire=None), "expireAfter is not set"),
    (nodepool(limits={"cpu": 10}, expire="Never"), "expireAfter is Never"),
])
def test_nodepool_violations(pool: dict[str, Any], expected: str) -> None:
    (message,) = g.check_nodepool(NODEPOOL, pool)
    assert expected in message


def test_checks_ignore_other_types() -> None:
    assert g.check_nodepool("aws:ec2/vpc:Vpc", {}) == []
    assert g.check_ec2nodeclass(NODEPOOL, {}) == []
    assert g.check_iam_policy("aws:iam/role:Role", iam({"Effect": "Allow", "Action": "*", "Resource": "*"})) == []
    assert g.check_cluster("aws:ec2/vpc:Vpc", {}, True) == []


def test_nodeclass_with_imdsv2_and_alias_ami_passes() -> None:
    assert g.check_ec2nodeclass(EC2NODECLASS, nodeclass()) == []
    encrypted = [{"deviceName": "/dev/xvda", "ebs": {"volumeSize": "100Gi", "encrypted": True}}]
    assert g.check_ec2nodeclass(EC2NODECLASS, nodeclass(mappings=encrypted)) == []


@pytest.mark.parametrize(("props", "expected"), [
    (nodeclass(tokens=None), "httpTokens is not set"),
    (nodeclass(tokens="optional"), "httpTokens is 'optional'"),
    (nodeclass(mappings=[{"deviceName": "/dev/xvda", "ebs": {"volumeSize": "20Gi"}}]), "[0] (/dev/xvda) is not"),
    (nodeclass(mappings=[{"deviceName": "/dev/xvda", "ebs": {"volumeSize": "20Gi", "encrypted": False}}]),
     "not encrypted"),
    (nodeclass(ami={"id": "ami-0123456789abcdef0"}), "not selected by alias"),
])
def test_nodeclass_violations(props: dict[str, Any], expected: str) -> None:
    (message,) = g.check_ec2nodeclass(EC2NODECLASS, props)
    assert expected in message


def test_passrole_scoped_to_a_role_passes() -> None:
    props = iam({"Effect": "Allow", "Action": "iam:PassRole", "Resource": "arn:aws:iam::1:role/node"},
                {"Effect": "Allow", "Action": ["ec2:DescribeImages"], "Resource": "*"},
                {"Effect": "Deny", "Action": "iam:*", "Resource": "*"})
    assert g.check_iam_policy("aws:iam/policy:Policy", props) == []


@pytest.mark.parametrize("statement", [
    {"Effect": "Allow", "Action": "iam:PassRole", "Resource": "*"},
    {"Effect": "Allow", "Action": ["ec2:RunInstances", "IAM:passrole"], "Resource": ["arn:x", "*"]},
    {"Effect": "Allow", "Action": "iam:*", "Resource": "*"},
    {"Effect": "Allow", "Action": "*", "Resource": "*"},
    {"Effect": "Allow", "Action": "iam:Pass*", "Resource": "*"},
    {"Effect": "Allow", "NotAction": "s3:*", "Resource": "*"},
    {"Effect": "Allow", "Action": "iam:PassRole", "NotResource": "arn:aws:iam::1:role/admin"},
])
def test_passrole_on_every_resource_is_a_violation(statement: dict[str, Any]) -> None:
    for type_ in ("aws:iam/policy:Policy", "aws:iam/rolePolicy:RolePolicy"):
        (message,) = g.check_iam_policy(type_, iam(statement))
        assert "iam:PassRole" in message


def test_policy_document_as_object_and_single_statement() -> None:
    document = {"Statement": {"Sid": "All", "Effect": "Allow", "Action": "*", "Resource": "*"}}
    (message,) = g.check_iam_policy("aws:iam/policy:Policy", {"policy": document})
    assert message.startswith("All allows")
    assert g.check_iam_policy("aws:iam/policy:Policy", {"policy": "[unknown]"}) == []


def test_spot_pools_need_queue_and_release_setting() -> None:
    assert g.check_spot_interruption([(NODEPOOL, GOOD_POOL), QUEUE, RELEASE]) == []
    found = g.check_spot_interruption([(NODEPOOL, GOOD_POOL)])
    assert len(found) == 2 and "no SQS interruption queue" in found[0] and "no Karpenter Helm release" in found[1]
    (unset,) = g.check_spot_interruption([(NODEPOOL, GOOD_POOL), QUEUE, ("kubernetes:helm.sh/v3:Release",
                                                                          release(None))])
    assert "does not set values.settings.interruptionQueue" in unset
    (arn,) = g.check_spot_interruption([(NODEPOOL, GOOD_POOL), QUEUE, ("kubernetes:helm.sh/v3:Release",
                                                                        release("arn:aws:sqs:us-east-1:1:c"))])
    assert "not an ARN" in arn
    (other,) = g.check_spot_interruption([(NODEPOOL, GOOD_POOL), QUEUE, ("kubernetes:helm.sh/v3:Release",
                                                                          release("elsewhere"))])
    assert "not a queue in this stack" in other


@pytest.mark.parametrize(("pool", "spot"), [
    (nodepool(capacity=None), True),  # v1 adds no default requirement: any capacity type, spot first
    (nodepool(capacity=["spot"]), True),
    (nodepool(capacity=["on-demand"]), False),
    (nodepool(capacity=["spot"], operator="NotIn"), False),
    (nodepool(capacity=["on-demand"], operator="NotIn"), True),
    (nodepool(capacity=[], operator="Exists"), True),
    (nodepool(capacity=[], operator="DoesNotExist"), False),
])
def test_spot_allowed(pool: dict[str, Any], spot: bool) -> None:
    assert g.spot_allowed(pool) is spot
    found = g.check_spot_interruption([(NODEPOOL, pool)])
    assert bool(found) is spot


def test_crd_release_is_not_the_controller() -> None:
    crds = ("kubernetes:helm.sh/v3:Release", {"chart": "oci://public.ecr.aws/karpenter/karpenter-crd", "values": {}})
    found = g.check_spot_interruption([(NODEPOOL, GOOD_POOL), QUEUE, crds])
    assert any("no Karpenter Helm release" in m for m in found)


@pytest.mark.parametrize("type_", ["eks:index:Cluster", "aws:eks/cluster:Cluster"])
def test_cluster_logging(type_: str) -> None:
    (message,) = g.check_cluster(type_, {"name": "c"}, False)
    assert "enabledClusterLogTypes" in message
    assert g.check_cluster(type_, {"enabledClusterLogTypes": ["api", "audit"]}, False) == []


def test_cluster_encryption_when_required() -> None:
    logs = {"enabledClusterLogTypes": ["audit"]}
    assert g.check_cluster("eks:index:Cluster", logs | {"encryptionConfigKeyArn": "arn:aws:kms:k"}, True) == []
    (missing,) = g.check_cluster("eks:index:Cluster", logs, True)
    assert "not encrypted" in missing
    config = {"provider": {"keyArn": "arn:aws:kms:k"}, "resources": ["secrets"]}
    assert g.check_cluster("aws:eks/cluster:Cluster", logs | {"encryptionConfig": config}, True) == []
    assert g.check_cluster("aws:eks/cluster:Cluster", logs | {"encryptionConfig": config | {"resources": []}}, True)
    assert g.check_cluster("aws:eks/cluster:Cluster", logs, False) == []


@pytest.mark.parametrize(("stack", "config", "required"), [
    ("prod", {}, True), ("prod-eu", {}, True), ("dev", {}, False), ("preprod", {}, False),
    ("dev", {"requireEncryption": True}, True), ("prod", {"requireEncryption": False}, False),
])
def test_encryption_required(stack: str, config: dict[str, Any], required: bool) -> None:
    assert g.encryption_required(stack, config) is required


def test_stack_of_urn() -> None:
    assert g.stack_of("urn:pulumi:prod-eu::eks-karpenter::eks:index:Cluster::c") == "prod-eu"


# --- the Policy objects, called like the analyzer calls them -----------------------------------------------------


def _opts() -> PolicyResourceOptions:
    return PolicyResourceOptions(protect=False, ignore_changes=[], delete_before_replace=None, aliases=[],
                                 custom_timeouts=PolicyCustomTimeouts(0, 0, 0), additional_secret_outputs=[])


def _policy(name: str) -> Any:
    (found,) = [p for p in g.POLICIES if p.name == name]
    return found


def run_resource_policy(name: str, type_: str, props: Mapping[str, Any], stack: str = "dev",
                        config: Mapping[str, Any] | None = None) -> list[str]:
    urn = f"urn:pulumi:{stack}::eks-karpenter::{type_}::r"
    args = ResourceValidationArgs(type_, unknown_checking_proxy(dict(props)), urn, "r", _opts(), None, config)
    violations: list[str] = []
    _policy(name).validate(args, lambda message, urn=None: violations.append(message))
    return violations


def run_stack_policy(name: str, resources: list[tuple[str, dict[str, Any]]],
                     config: Mapping[str, Any] | None = None) -> list[str]:
    wrapped = [PolicyResource(t, unknown_checking_proxy(p), f"urn:pulumi:dev::p::{t}::r{i}", f"r{i}", _opts(), None,
                              None, [], {}) for i, (t, p) in enumerate(resources)]
    violations: list[str] = []
    _policy(name).validate(StackValidationArgs(wrapped, config),
                           lambda message, urn=None: violations.append(message))
    return violations


def test_pack_policies_have_unique_names_and_kinds() -> None:
    names = [p.name for p in g.POLICIES]
    assert len(names) == len(set(names)) == 6
    stack_policies = ("spot-needs-interruption-queue", "nodepool-cost-ceiling")
    assert all(isinstance(_policy(name), StackValidationPolicy) for name in stack_policies)
    assert all(isinstance(p, ResourceValidationPolicy) for p in g.POLICIES if p.name not in stack_policies)


def test_resource_policies_report_through_the_analyzer_interface() -> None:
    assert run_resource_policy("nodepool-limits-and-expiry", NODEPOOL, GOOD_POOL) == []
    assert len(run_resource_policy("nodepool-limits-and-expiry", NODEPOOL, nodepool(expire=None))) == 2
    assert run_resource_policy("ec2nodeclass-imdsv2-encrypted-ebs", EC2NODECLASS, nodeclass(tokens="optional"))
    statement = {"Effect": "Allow", "Action": "iam:PassRole", "Resource": "*"}
    assert run_resource_policy("iam-no-passrole-on-star", "aws:iam/rolePolicy:RolePolicy", iam(statement))


def test_cluster_policy_reads_the_stack_from_the_urn_and_the_config() -> None:
    props = {"enabledClusterLogTypes": ["api"]}
    name = "eks-logging-and-secrets-encryption"
    assert run_resource_policy(name, "eks:index:Cluster", props, stack="dev") == []
    assert run_resource_policy(name, "eks:index:Cluster", props, stack="prod")
    assert run_resource_policy(name, "eks:index:Cluster", props, stack="dev", config={"requireEncryption": True})
    assert _policy(name).config_schema.properties == {"requireEncryption": {"type": "boolean"}}


def test_stack_policy_reports_through_the_analyzer_interface() -> None:
    name = "spot-needs-interruption-queue"
    assert run_stack_policy(name, [(NODEPOOL, GOOD_POOL), QUEUE, RELEASE]) == []
    assert len(run_stack_policy(name, [(NODEPOOL, GOOD_POOL)])) == 2


def test_unknown_values_raise_so_the_analyzer_skips_the_policy() -> None:
    with pytest.raises(UnknownValueError):
        run_resource_policy("iam-no-passrole-on-star", "aws:iam/policy:Policy", {"policy": UNKNOWN_STRING_VALUE})


# --- the pack files -------------------------------------------------------------------------------------------


def test_pack_files() -> None:
    meta = yaml.safe_load((PACK / "PulumiPolicy.yaml").read_text())
    runtime = meta["runtime"]
    assert (runtime if isinstance(runtime, str) else runtime["name"]) == "python"
    assert meta["description"] and str(meta["version"]).count(".") == 2
    assert any(line.startswith("pulumi-policy") for line in (PACK / "requirements.txt").read_text().splitlines())
    # PolicyPack(...) starts a server, so it is built in __main__.py only, from the importable policy list.
    main_tree = ast.parse((PACK / "__main__.py").read_text())
    calls = [n for n in ast.walk(main_tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "PolicyPack"]
    assert len(calls) == 1
    assert {k.arg for k in calls[0].keywords} >= {"name", "policies"}
    guard_tree = ast.parse((PACK / "guardrails.py").read_text())
    assert not [n for n in ast.walk(guard_tree)
                if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "PolicyPack"]


@pytest.mark.parametrize("stack", STACKS)
def test_committed_stacks_pass_the_guardrails_offline(stack: str) -> None:
    """The offline plan's inputs stand in for what the analyzer sees, so a layer that breaks a guardrail fails
    here before it fails a preview."""
    plan = plan_stack(stack)
    required = g.encryption_required(stack, {})
    found = []
    for r in plan.resources:
        for check in (g.check_nodepool, g.check_ec2nodeclass, g.check_iam_policy):
            found += [f"{r.name}: {m}" for m in check(r.type, r.inputs)]
        found += [f"{r.name}: {m}" for m in g.check_cluster(r.type, r.inputs, required)]
    found += g.check_spot_interruption((r.type, r.inputs) for r in plan.resources)
    found += g.check_pool_cost(((r.type, r.inputs) for r in plan.resources), g.DEFAULT_MAX_MONTHLY_AT_CPU_LIMIT)
    assert found == []


# --- the cost ceiling ---------------------------------------------------------------------------------------------

def _priced_pool(cpu: str | None, families: list[str]) -> dict[str, Any]:
    pool = nodepool(name="web", capacity=["spot", "on-demand"], limits={"cpu": cpu} if cpu else {"memory": "1Ti"})
    pool["spec"]["template"]["spec"]["requirements"].append(
        {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": families})
    return pool


def test_pool_cost_ceiling_uses_the_dearest_vcpu_at_the_cpu_limit() -> None:
    from eks_karpenter.catalogue import load_catalogue

    m5 = [t for t in load_catalogue() if t.family == "m5" and t.on_demand_hourly]
    dearest = max(t.on_demand_hourly / t.vcpus for t in m5 if t.on_demand_hourly)
    at_limit = 1000 * dearest * 730
    pool = _priced_pool("1000", ["m5"])
    assert g.check_pool_cost([(NODEPOOL, pool)], at_limit + 1) == []
    (found,) = g.check_pool_cost([(NODEPOOL, pool)], at_limit - 1)
    assert found.startswith(f"NodePool web can cost ${at_limit:,.2f}/month at its cpu limit (1000 vCPU")
    (found,) = g.check_pool_cost([(NODEPOOL, _priced_pool(None, ["m5"]))], 1e9)
    assert "has no spec.limits.cpu" in found


def test_pool_cost_ceiling_joins_the_node_class_and_reads_its_config() -> None:
    name = "nodepool-cost-ceiling"
    assert max_config_default() == 100_000
    big = _priced_pool("100000", ["m5"])
    assert run_stack_policy(name, [(NODEPOOL, big)])  # default cap
    assert run_stack_policy(name, [(NODEPOOL, big)], {"maxMonthlyAtCpuLimit": 1e12}) == []
    assert run_stack_policy(name, [(NODEPOOL, _priced_pool("10", ["m5"]))], {"maxMonthlyAtCpuLimit": 1}) != []
    windows = nodepool(name="win", capacity=["on-demand"], limits={"cpu": "10"})
    windows["spec"]["template"]["spec"]["requirements"].append(
        {"key": "kubernetes.io/os", "operator": "In", "values": ["windows"]})
    win_class = nodeclass(ami={"alias": "windows2022@latest"})
    # With its Windows class the pool admits types (and is priced); without it, it would admit none.
    assert g.check_pool_cost([(NODEPOOL, windows), (EC2NODECLASS, win_class)], 1)
    assert g.check_pool_cost([(NODEPOOL, windows)], 1) == []
    assert _policy(name).config_schema.properties == {"maxMonthlyAtCpuLimit": {"type": "number", "minimum": 0}}


def max_config_default() -> float:
    return float(g.max_monthly_at_cpu_limit({}))
