"""The shipped stacks are examples a new user copies: a fresh stack's IAM names carry the region (`iamNames:
legacy` is a commented line for a stack deployed before 0.2.0), a real run refuses the example account's ARNs and
API allow-list CIDRs in documentation ranges, and prod's private-only endpoint has its first `up` written down as
commented lines that plan."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from eks_karpenter.arns import EXAMPLE_ACCOUNT, example_account_issues
from eks_karpenter.config.errors import ConfigError, render_path
from eks_karpenter.platform.cluster.rules import example_range
from eks_karpenter.tools.engine import run_plan

from tests.support import REPO, plan_config, plan_stack, stack_config

ROLE, POLICY = "aws:iam/role:Role", "aws:iam/policy:Policy"
CALLER = "aws:index/getCallerIdentity:getCallerIdentity"
REAL_ACCOUNT = "210987654321"


def stack_text(stack: str) -> str:
    return (REPO / "stacks" / f"Pulumi.{stack}.yaml").read_text()


@pytest.mark.parametrize("stack", ["dev", "prod", "brownfield"])
def test_no_shipped_stack_keeps_legacy_iam_names(stack: str) -> None:
    assert "eks-karpenter:iamNames" not in stack_config(stack)


@pytest.mark.parametrize("stack", ["prod", "brownfield"])
def test_legacy_iam_names_are_a_commented_line_saying_when(stack: str) -> None:
    text = stack_text(stack)
    [line] = [n for n, line in enumerate(text.splitlines()) if re.fullmatch(r"\s*# eks-karpenter:iamNames: legacy",
                                                                              line)]
    before = " ".join(text.splitlines()[line - 2:line])
    assert "before 0.2.0" in before and "new stack" in before


@pytest.mark.slow
def test_a_fresh_prod_gets_region_scoped_iam_names() -> None:
    doc = plan_stack("prod")
    names = {str(r.inputs["name"]) for r in doc.by_type(ROLE) + doc.by_type(POLICY) if r.inputs.get("name")}
    assert names and all("us-east-1" in n for n in names), names
    node_class = doc.get("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", "nodeclass-default")
    assert node_class.inputs["spec"]["role"] == "prod-karpenter-karpenter-node-us-east-1"


def _caller(account: str) -> dict[str, Any]:
    return {"accountId": account, "arn": f"arn:aws:iam::{account}:user/someone", "userId": "AIDA", "id": account}


@pytest.mark.slow
def test_a_real_run_refuses_the_example_account_before_registering_anything() -> None:
    result = run_plan(REPO, "prod", invoke_results={CALLER: _caller(REAL_ACCOUNT)})
    assert isinstance(result.error, ConfigError)
    message = str(result.error)
    for key in ("eks-karpenter:access.deployers[0].principalArn", "eks-karpenter:access.deployers[1].principalArn",
                "eks-karpenter:access.clusterAdmins[0]", "eks-karpenter:access.clusterAdmins[1]",
                "eks-karpenter:observability.alarmTopicArn"):
        assert f"{key}: account {EXAMPLE_ACCOUNT} is the example account" in message, message
    assert "stacks/Pulumi.prod.yaml" in message
    assert [r for r in result.document.resources if r.custom] == []


def test_only_the_example_accounts_arns_are_named() -> None:
    config = stack_config("prod")
    issues = example_account_issues(config, ())
    assert {render_path(i.path) for i in issues} >= {"eks-karpenter:access.deployers[0].principalArn",
                                                     "eks-karpenter:observability.alarmTopicArn"}
    own = yaml.safe_load(stack_text("prod").replace(EXAMPLE_ACCOUNT, REAL_ACCOUNT))["config"]
    assert example_account_issues(own, ()) == []
    # AWS-managed policies have no account, and an id that merely contains the digits is not an ARN's account.
    assert example_account_issues({"p": ["arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore",
                                         f"arn:aws:iam::{REAL_ACCOUNT}:role/x{EXAMPLE_ACCOUNT}"]}, ()) == []


def with_example_ranges(caller: str | None, **cluster: Any) -> str:
    """dev's plan with `cluster` keys changed, run as an identity of account `caller` (None: offline, as the
    example account); the error, if any."""
    section = {**stack_config("dev")["eks-karpenter:cluster"], **cluster}
    result = run_plan(REPO, "dev", invoke_results={CALLER: _caller(caller)} if caller else None,
                      config_overrides={"eks-karpenter:cluster": json.dumps(section)})
    if result.error is not None:
        assert [r for r in result.document.resources if r.custom] == []
    return str(result.error or "")


def test_a_real_run_refuses_documentation_ranges_in_the_api_allow_lists() -> None:
    message = with_example_ranges(REAL_ACCOUNT, publicAccessCidrs=["203.0.113.10/32", "100.64.0.0/16"],
                                  apiAccess={"cidrs": ["10.100.0.0/24", "198.51.100.0/28"]})
    assert "eks-karpenter:cluster.publicAccessCidrs[0]: 203.0.113.10/32 is in 203.0.113.0/24, an example range " \
           "reserved for documentation (RFC 5737)" in message, message
    assert "eks-karpenter:cluster.apiAccess.cidrs[1]: 198.51.100.0/28 is in 198.51.100.0/24" in message
    assert "100.64.0.0/16" not in message and "10.100.0.0/24" not in message
    # Offline, as the example account, the example plans.
    assert with_example_ranges(None, publicAccessCidrs=["203.0.113.10/32"]) == ""


def test_the_deployer_cidr_shortcut_is_refused_where_it_was_written(tmp_path: Path) -> None:
    config = {**stack_config("dev"), "eks-karpenter:deployerCidr": "192.0.2.7/32"}
    config["eks-karpenter:cluster"] = {k: v for k, v in config["eks-karpenter:cluster"].items()
                                       if k not in ("endpointPublicAccess", "publicAccessCidrs")}
    result = plan_config(config, tmp_path, stack="dev", invoke_results={CALLER: _caller(REAL_ACCOUNT)})
    message = str(result.error)
    assert "eks-karpenter:deployerCidr: 192.0.2.7/32 is in 192.0.2.0/24" in message, message
    assert "publicAccessCidrs[0]: 192.0.2.7/32" not in message


def test_documentation_ranges() -> None:
    assert example_range("2001:db8:1::/48") == "2001:db8::/32"
    assert example_range("192.0.2.0/24") == "192.0.2.0/24"
    for cidr in ("203.0.112.0/23", "10.0.0.0/8", "0.0.0.0/0", "2001:db9::/32", "198.51.101.0/24"):
        assert example_range(cidr) is None, cidr


def uncomment_bootstrap(text: str) -> str:
    """prod's stack file as its comment says the first `up` runs: the commented public-endpoint lines instead of
    `endpointPublicAccess: false`."""
    lines = text.splitlines()
    at = lines.index("    endpointPublicAccess: false")
    bootstrap = [re.sub(r"^(\s*)# ", r"\1", line) for line in lines[at + 1:at + 3]]
    assert [b.split(":")[0].strip() for b in bootstrap] == ["endpointPublicAccess", "publicAccessCidrs"], bootstrap
    return "\n".join([*lines[:at], *bootstrap, *lines[at + 3:]]) + "\n"


@pytest.mark.slow
def test_prods_first_up_through_the_public_endpoint_plans_as_its_comment_says(tmp_path: Path) -> None:
    config = yaml.safe_load(uncomment_bootstrap(stack_text("prod")))["config"]
    result = plan_config(config, tmp_path, stack="prod")
    assert result.error is None, result.error
    [cluster] = result.document.by_type("eks:index:Cluster")
    assert cluster.inputs["endpointPublicAccess"] is True
    assert cluster.inputs["publicAccessCidrs"] == ["203.0.113.10/32"]
    # The runners' subnet stays admitted: after the peering, the next `up` runs from there.
    rules = result.document.by_type("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule")
    assert any(r.inputs.get("cidrIpv4") == "10.100.0.0/24" for r in rules)
