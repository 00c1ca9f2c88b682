"""The plan JSON records every resource option that changes what the engine does, and every invoke made."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from eks_karpenter.tools.engine import PlanDocument, run_plan

from tests.support import plan_stack

PROGRAM = '''
import pulumi
import pulumi_aws as aws

first = aws.sqs.Queue("first")
aws.sqs.Queue("options", name=first.name, opts=pulumi.ResourceOptions(
    protect=True, retain_on_delete=True, delete_before_replace=True, replace_on_changes=["name"],
    ignore_changes=["tags"], depends_on=[first],
    custom_timeouts=pulumi.CustomTimeouts(create="2m", delete="15m")))
aws.sqs.Queue("plain")
aws.get_caller_identity()
aws.eks.get_cluster(name="looked-up")
'''


def _plan(tmp_path: Path) -> PlanDocument:
    (tmp_path / "stacks").mkdir(exist_ok=True)
    (tmp_path / "Pulumi.yaml").write_text("name: demo\nruntime: python\nmain: prog.py\nstackConfigDir: stacks\n")
    (tmp_path / "prog.py").write_text(PROGRAM)
    (tmp_path / "stacks" / "Pulumi.s.yaml").write_text(yaml.safe_dump({"config": {"aws:region": "eu-west-1"}}))
    result = run_plan(tmp_path, "s")
    assert result.error is None, result.error
    return result.document


def test_every_engine_option_is_recorded(tmp_path: Path) -> None:
    doc = _plan(tmp_path)
    first = doc.get("aws:sqs/queue:Queue", "first")
    options = doc.get("aws:sqs/queue:Queue", "options").options
    assert options["protect"] is True
    assert options["retainOnDelete"] is True
    assert options["deleteBeforeReplace"] is True
    assert options["replaceOnChanges"] == ["name"]
    assert options["ignoreChanges"] == ["tags"]
    assert options["customTimeouts"] == {"create": "2m", "delete": "15m"}
    # recorded even though an input (name) also depends on `first`: the SDK merges both into `dependencies`
    assert options["dependsOn"] == [first.urn]


def test_unset_options_are_left_out(tmp_path: Path) -> None:
    options = _plan(tmp_path).get("aws:sqs/queue:Queue", "plain").options
    for name in ("protect", "retainOnDelete", "deleteBeforeReplace", "replaceOnChanges", "ignoreChanges",
                 "customTimeouts", "dependsOn"):
        assert name not in options


def test_depends_on_lists_explicit_edges_only() -> None:
    # The node access entry names the node role's ARN as an input (an implicit edge): not a dependsOn.
    doc = plan_stack("dev")
    entry = doc.get("aws:eks/accessEntry:AccessEntry", "karpenter-iam-node-access")
    role = doc.get("aws:iam/role:Role", "karpenter-node-role")
    assert role.urn in entry.dependencies
    assert role.urn not in entry.options.get("dependsOn", [])


@pytest.mark.slow
def test_provider_option_is_the_provider_urn() -> None:
    doc = plan_stack("dev")
    provider = doc.get("pulumi:providers:kubernetes", "cluster-k8s")
    release = doc.get("kubernetes:helm.sh/v3:Release", "karpenter-controller")
    assert release.options["provider"] == provider.urn


def test_invokes_are_in_the_json_with_token_and_args(tmp_path: Path) -> None:
    body = json.loads(_plan(tmp_path).to_json())
    assert body["invokes"] == [
        {"token": "aws:eks/getCluster:getCluster", "args": {"name": "looked-up"}},
        {"token": "aws:index/getCallerIdentity:getCallerIdentity", "args": {}},
    ]


def test_json_round_trips_and_is_byte_deterministic() -> None:
    doc = plan_stack("brownfield")
    text = doc.to_json()
    again = PlanDocument.from_json(text)
    assert again.invokes == doc.invokes
    assert again.to_json() == text
    assert json.loads(text)["invokes"], "the brownfield stack looks its cluster up"
