"""Hardening reviewers ask for: the control-plane log group, the secrets key's policy, VPC
flow logs, and an interruption queue only this stack's rules may feed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from eks_karpenter.config.errors import ConfigError

from tests.support import plan_config, plan_stack, stack_config

LOG_GROUP = "aws:cloudwatch/logGroup:LogGroup"
EKS = "eks:index:Cluster"
KEY = "aws:kms/key:Key"
FLOW = "aws:ec2/flowLog:FlowLog"
CLU, NET = "eks-karpenter:cluster", "eks-karpenter:network"


def refused(tmp_path: Path, config: dict[str, Any], path: str, fragment: str) -> None:
    result = plan_config(config, tmp_path)
    assert isinstance(result.error, ConfigError), result.error
    lines = [line for line in str(result.error).splitlines() if f": {path}: " in line]
    assert lines and any(fragment in line for line in lines), str(result.error)
    assert not result.document.resources


# --- control-plane log group ------------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_control_plane_log_group_exists_before_the_cluster(stack: str) -> None:
    doc = plan_stack(stack)
    (cluster,) = doc.by_type(EKS)
    group = doc.get(LOG_GROUP, "cluster-control-plane-logs")
    assert group.inputs["name"] == f"/aws/eks/{cluster.inputs['name']}/cluster"
    assert group.inputs["retentionInDays"] == 90
    assert group.urn in cluster.dependencies
    assert bool(group.options.get("protect")) is (stack == "prod")


def test_log_retention_comes_from_config_and_must_be_a_cloudwatch_period(tmp_path: Path) -> None:
    config = stack_config("dev")
    config[CLU]["logRetentionInDays"] = 30
    doc = plan_config(config, tmp_path).document
    assert doc.get(LOG_GROUP, "cluster-control-plane-logs").inputs["retentionInDays"] == 30
    config[CLU]["logRetentionInDays"] = 45
    refused(tmp_path, config, f"{CLU}.logRetentionInDays", "Input should be")


@pytest.mark.slow
def test_no_log_group_without_log_types(tmp_path: Path) -> None:
    config = stack_config("dev")
    config[CLU]["logTypes"] = []
    doc = plan_config(config, tmp_path).document
    assert not [g for g in doc.by_type(LOG_GROUP) if g.name == "cluster-control-plane-logs"]


# --- secrets key ------------------------------------------------------------------------------------------------

def test_secrets_key_has_an_explicit_policy_and_rotation() -> None:
    (key,) = plan_stack("prod").by_type(KEY)
    assert key.inputs["enableKeyRotation"] is True and key.inputs["rotationPeriodInDays"] == 365
    statements = {s["Sid"]: s for s in json.loads(key.inputs["policy"])["Statement"]}
    admin = statements["EnableAccountAdministration"]
    # The account keeps administering the key: no lockout.
    assert admin["Principal"] == {"AWS": "arn:aws:iam::123456789012:root"} and admin["Action"] == "kms:*"
    use = statements["AllowUseThroughEks"]
    assert use["Condition"]["StringEquals"] == {"kms:CallerAccount": "123456789012",
                                                "kms:ViaService": "eks.us-east-1.amazonaws.com"}
    assert "kms:Decrypt" in use["Action"] and "kms:CreateGrant" in use["Action"]
    assert not any(a in use["Action"] for a in ("kms:*", "kms:PutKeyPolicy", "kms:ScheduleKeyDeletion"))


# --- flow logs --------------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_prod_records_flow_logs_to_cloudwatch_through_a_scoped_role() -> None:
    doc = plan_stack("prod")
    (flow,) = doc.by_type(FLOW)
    group = doc.get(LOG_GROUP, "network-flow-logs")
    assert flow.inputs["logDestinationType"] == "cloud-watch-logs"
    assert flow.inputs["logDestination"].endswith(":log-group:/aws/vpc/prod-karpenter/flow-logs")
    assert flow.inputs["trafficType"] == "ALL" and flow.inputs["vpcId"].startswith("vpc-")
    assert group.inputs["retentionInDays"] == 90 and group.options.get("protect") is True
    role = doc.get("aws:iam/role:Role", "network-flow-logs")
    trust = json.loads(role.inputs["assumeRolePolicy"])["Statement"][0]
    assert trust["Principal"] == {"Service": "vpc-flow-logs.amazonaws.com"}
    assert trust["Condition"]["StringEquals"] == {"aws:SourceAccount": "123456789012"}
    write = json.loads(doc.get("aws:iam/rolePolicy:RolePolicy", "network-flow-logs").inputs["policy"])
    assert write["Statement"][0]["Resource"] == [flow.inputs["logDestination"], flow.inputs["logDestination"] + ":*"]


def test_flow_logs_are_off_by_default() -> None:
    assert not plan_stack("dev").by_type(FLOW)


@pytest.mark.slow
def test_flow_logs_to_an_existing_bucket(tmp_path: Path) -> None:
    config = stack_config("dev")
    config[NET]["flowLogs"] = {"enabled": True, "destination": "s3",
                               "s3BucketArn": "arn:aws:s3:::org-flow-logs/dev"}
    doc = plan_config(config, tmp_path).document
    (flow,) = doc.by_type(FLOW)
    assert (flow.inputs["logDestinationType"], flow.inputs["logDestination"]) == (
        "s3", "arn:aws:s3:::org-flow-logs/dev")
    assert "iamRoleArn" not in flow.inputs
    assert not [g for g in doc.by_type(LOG_GROUP) if g.name == "network-flow-logs"]


def test_flow_log_config_mistakes_are_refused(tmp_path: Path) -> None:
    config = stack_config("dev")
    config[NET]["flowLogs"] = {"enabled": True, "destination": "s3"}
    refused(tmp_path, config, f"{NET}.flowLogs.s3BucketArn", "required with destination: s3")
    brownfield = stack_config("brownfield")
    brownfield[NET]["flowLogs"] = {"enabled": True}
    refused(tmp_path, brownfield, f"{NET}.flowLogs", "only applies when creating a VPC")


# --- interruption queue -----------------------------------------------------------------------------------------

def test_only_this_stacks_rules_may_feed_the_interruption_queue() -> None:
    doc = plan_stack("dev")
    (policy,) = [p for p in doc.by_type("aws:sqs/queuePolicy:QueuePolicy") if p.name == "interruption-queue-policy"]
    (allow,) = [s for s in json.loads(policy.inputs["policy"])["Statement"] if s["Effect"] == "Allow"]
    sources = allow["Condition"]["ArnEquals"]["aws:SourceArn"]
    rules = doc.by_type("aws:cloudwatch/eventRule:EventRule")
    assert len(sources) == len([r for r in rules if r.name.startswith("interruption-")]) == 5
    assert {d for d in policy.dependencies if "eventRule" in d} == {
        r.urn for r in rules if r.name.startswith("interruption-")}
