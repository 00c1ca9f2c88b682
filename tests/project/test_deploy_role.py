"""The deploy role's least-privilege policy: generated from the resource and invoke types the plans contain,
every AWS type accounted for, no action that no planned type needs, and every action one IAM knows."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from eks_karpenter.tools.deploy_role import ACTIONS_BY_TYPE, PASSES_ROLE_TO, deploy_role_policy, needs_iam, plan_types

from tests.support import REPO, STACKS, plan_stack

POLICY_FILE = REPO / "docs" / "deploy-role-policy.json"


def types_of(*stacks: str) -> set[str]:
    return plan_types(json.loads(plan_stack(s).to_json()) for s in stacks)


def actions(policy: dict[str, Any]) -> set[str]:
    out: set[str] = set()
    for statement in policy["Statement"]:
        action = statement["Action"]
        out |= {action} if isinstance(action, str) else set(action)
    return out


@pytest.mark.parametrize("stack", STACKS)
def test_every_aws_type_a_stack_plans_has_its_actions(stack: str) -> None:
    aws = {t for t in types_of(stack) if needs_iam(t)}
    assert aws and aws <= set(ACTIONS_BY_TYPE), aws - set(ACTIONS_BY_TYPE)


def test_the_committed_policy_is_the_plans() -> None:
    assert json.loads(POLICY_FILE.read_text()) == deploy_role_policy(types_of(*STACKS)), \
        "run .venv/bin/python scripts/gen_docs.py"
    doc = (REPO / "docs" / "deploy-role.md").read_text()
    assert json.dumps(deploy_role_policy(types_of(*STACKS)), indent=2) in doc


def test_no_action_without_a_planned_type_that_needs_it() -> None:
    types = types_of(*STACKS)
    policy = deploy_role_policy(types)
    needed = {a for t in types if t in ACTIONS_BY_TYPE for a in ACTIONS_BY_TYPE[t]}
    assert actions(policy) - {"iam:PassRole"} == needed
    [pass_role] = [s for s in policy["Statement"] if s["Action"] == "iam:PassRole"]
    assert pass_role["Condition"] == {"StringEquals": {"iam:PassedToService": sorted(
        {PASSES_ROLE_TO[t] for t in types if t in PASSES_ROLE_TO})}}
    assert not any(a.endswith(":*") or a == "*" for a in actions(policy))


def test_a_smaller_stack_gets_a_smaller_policy() -> None:
    """Generated per plan: a type only one stack plans adds its actions to that stack's policy only."""
    only_prod = {t for t in types_of("prod") - types_of("dev") if needs_iam(t)}
    assert only_prod, "prod plans a type dev does not (e.g. its KMS key or flow logs)"
    dev, prod = actions(deploy_role_policy(types_of("dev"))), actions(deploy_role_policy(types_of("prod")))
    extra = {a for t in only_prod for a in ACTIONS_BY_TYPE[t]} - {a for t in types_of("dev") if t in ACTIONS_BY_TYPE
                                                                   for a in ACTIONS_BY_TYPE[t]}
    assert extra and extra <= prod and not extra & dev


def test_a_type_without_an_entry_is_refused() -> None:
    with pytest.raises(KeyError, match="aws:s3/bucket:Bucket"):
        deploy_role_policy({"aws:ec2/vpc:Vpc", "aws:s3/bucket:Bucket", "kubernetes:core/v1:Namespace"})
    assert deploy_role_policy({"kubernetes:core/v1:Namespace", "eks-karpenter:index:Network"})["Statement"] == []


@pytest.mark.slow
def test_the_command_prints_the_stacks_policy() -> None:
    proc = subprocess.run([sys.executable, "-m", "infra", "deploy-policy", "--stack", "dev"], cwd=REPO,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == deploy_role_policy(types_of("dev"))


@pytest.mark.slow
def test_the_policy_passes_cfn_lint(tmp_path: Path) -> None:
    """cfn-lint knows every IAM action name: a misspelt action fails here."""
    pytest.importorskip("cfnlint", reason="cfn-lint is in the `dev` extra")
    template = tmp_path / "deploy.json"
    template.write_text(json.dumps({"AWSTemplateFormatVersion": "2010-09-09", "Resources": {"Deploy": {
        "Type": "AWS::IAM::ManagedPolicy", "Properties": {"PolicyDocument": json.loads(POLICY_FILE.read_text())}}}}))
    result = subprocess.run([sys.executable, "-c", "import sys; from cfnlint.runner import main; sys.exit(main())",
                             "--format", "parseable", str(template)], capture_output=True, text=True, timeout=300)
    assert (result.returncode, result.stdout.strip()) == (0, ""), result.stdout + result.stderr
