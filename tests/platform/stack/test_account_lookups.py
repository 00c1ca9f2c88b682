"""What only the account knows, checked at preview before anything is registered: the chosen zones by zone ID,
the instance types offered there, a VPC this stack already created, and the fixed-name resources an earlier
cluster of the same name may have left. Offline the mocks answer as a fresh account (every catalogued type in
every zone but us-east-1e, which is use1-az3 there; no VPC, log group or queue yet); here fixtures answer as other
accounts do."""

from __future__ import annotations

import json
from typing import Any

import pytest
from eks_karpenter.config.errors import ConfigError
from eks_karpenter.platform.lookups import (
    OFFERINGS_TOKEN,
    SUBNET_TOKEN,
    SUBNETS_TOKEN,
    VPC_TOKEN,
    VPCS_TOKEN,
    ZONES_TOKEN,
    Launcher,
    network_change_issues,
    offering_issues,
    zone_issues,
)
from eks_karpenter.platform.network.plan import plan_subnets
from eks_karpenter.platform.taken_names import (
    LOG_GROUP_TOKEN,
    LOG_GROUPS_TOKEN,
    QUEUE_TOKEN,
    QUEUES_TOKEN,
    Found,
    log_group_issue,
    queue_issue,
)
from eks_karpenter.tools.engine import PlanDocument, PlanResult, run_plan
from eks_karpenter.tools.engine.mocks import InvokeFailure

from tests.support import REPO, plan_stack, stack_config

DEV_ZONES = ["eu-west-1a", "eu-west-1b"]


def run(stack: str = "dev", invoke_results: dict[str, Any] | None = None, **overrides: Any) -> PlanResult:
    return run_plan(REPO, stack, invoke_results=invoke_results,
                    config_overrides={k: v if isinstance(v, str) else json.dumps(v) for k, v in overrides.items()})


def refused(result: PlanResult) -> str:
    assert isinstance(result.error, ConfigError), result.error
    assert [r for r in result.document.resources if r.custom] == []  # nothing registered
    return str(result.error)


def network(**changes: Any) -> dict[str, Any]:
    return {**stack_config("dev")["eks-karpenter:network"], **changes}


def offerings(types: dict[str, list[str]]) -> dict[str, Any]:
    """An account offering `types` (zone -> types) in each zone asked about."""
    def answer(args: dict[str, Any]) -> dict[str, Any]:
        zones = [v for f in args["filters"] if f["name"] == "location" for v in f["values"]]
        pairs = [(t, z) for z in zones for t in types.get(z, [])]
        return {"instanceTypes": [t for t, _ in pairs], "locations": [z for _, z in pairs],
                "locationTypes": ["availability-zone"] * len(pairs), "locationType": "availability-zone", "id": "x"}
    return {OFFERINGS_TOKEN: answer}


# --- zones by zone ID ---------------------------------------------------------------------------------------------

def test_offline_the_zones_and_their_offerings_are_looked_up_once() -> None:
    doc = plan_stack("dev")
    tokens = [i.token for i in doc.invokes]
    assert tokens.count(ZONES_TOKEN) == 1 and tokens.count(OFFERINGS_TOKEN) == 1
    [ask] = [i for i in doc.invokes if i.token == OFFERINGS_TOKEN]
    assert ask.args["locationType"] == "availability-zone"
    # The types the stack names only (its node groups'; dev's pool admits whole categories): not every offering.
    groups = stack_config("dev")["eks-karpenter:cluster"]
    named = {*groups["systemNodeGroup"]["instanceTypes"], *groups["spotNodeGroups"][0]["instanceTypes"]}
    assert ask.args["filters"] == [{"name": "location", "values": DEV_ZONES},
                                   {"name": "instance-type", "values": sorted(named)}]
    assert not [w for w in doc.warnings if "offered" in w]


def test_a_zone_eks_refuses_and_without_current_types_is_refused_by_its_zone_id() -> None:
    # The mock account is an older one: us-east-1e is use1-az3 there.
    text = refused(run(**{"aws:region": "us-east-1", "eks-karpenter:network": network(
        availabilityZones=["us-east-1d", "us-east-1e", "us-east-1f"])}))
    assert "eks-karpenter:network.availabilityZones[1]: us-east-1e is zone use1-az3 in this account, where EKS " \
           "creates no cluster" in text
    assert "eks-karpenter:cluster.systemNodeGroup.instanceTypes: node group system: none of its instance types is " \
           "offered in us-east-1e (use1-az3)" in text


def test_the_same_letter_is_another_zone_in_another_account() -> None:
    account = {ZONES_TOKEN: {"names": [f"us-east-1{x}" for x in "abcdef"], "state": "available", "id": "us-east-1",
                             "zoneIds": ["use1-az3", "use1-az1", "use1-az2", "use1-az4", "use1-az6", "use1-az5"]}}
    zones = ["us-east-1d", "us-east-1e", "us-east-1f"]
    account.update(offerings({z: ["m7i.large", "m6i.large", "m5.large", "m5a.large"] for z in zones}))
    result = run(invoke_results=account, **{"aws:region": "us-east-1", "eks-karpenter:network": network(
        availabilityZones=["us-east-1d", "us-east-1e", "us-east-1f"])})
    assert result.error is None, result.error


def test_a_zone_this_account_does_not_have_is_refused_with_its_zones() -> None:
    # us-west-1 has a, b and c, but an account sees two of them: this one a and c.
    text = refused(run(**{"aws:region": "us-west-1", "eks-karpenter:network": network(
        availabilityZones=["us-west-1a", "us-west-1b"])}))
    assert "eks-karpenter:network.availabilityZones[1]: this account has no zone us-west-1b (its zones in " \
           "us-west-1: us-west-1a (usw1-az1), us-west-1c (usw1-az3)" in text


def test_zone_rules_by_id() -> None:
    account = {"us-east-1a": "use1-az3", "us-east-1b": "use1-az1"}
    at = ("n", "availabilityZones")
    created = zone_issues({"us-east-1a": at + (0,), "us-east-1b": at + (1,)}, account, "us-east-1", True)
    assert [i.path for i in created] == [at + (0,)]
    assert zone_issues({"us-east-1a": at + (0,)}, account, "us-east-1", control_plane=False) == []


# --- instance-type offerings ----------------------------------------------------------------------------------------

def test_a_pool_that_admits_nothing_offered_in_its_zones_is_refused() -> None:
    pools = stack_config("dev")["eks-karpenter:nodePools"]
    pools.append({"name": "gpu", "instanceFamilies": ["p5"], "capacityTypes": ["on-demand"]})
    offered = {z: ["m7i.large", "m6i.large", "c7i.large", "m5.large", "m5a.large"] for z in DEV_ZONES}
    text = refused(run(invoke_results=offerings(offered), **{"eks-karpenter:nodePools": pools}))
    assert "eks-karpenter:nodePools[1]: NodePool gpu is pinned to p5, none of which is offered in its zones " \
           "(eu-west-1a (euw1-az1), eu-west-1b (euw1-az2)) in this account" in text
    assert "general" not in text


def test_types_offered_in_some_zones_only_are_warnings() -> None:
    offered = {"eu-west-1a": ["m7i.large", "m6i.large", "c7i.large", "m5.large"],
               "eu-west-1b": ["m6i.large", "c7i.large", "m5.large", "m5a.large"]}
    result = run(invoke_results=offerings(offered))
    assert result.error is None, result.error
    warnings = result.document.warnings
    assert "node group system: m7i.large is not offered in eu-west-1b in this account: the group launches its " \
           "other types there" in warnings
    assert any(w.startswith("node group workshop-spot: m5a.large is not offered in eu-west-1a") for w in warnings)


def test_a_node_group_without_a_type_in_one_zone_is_refused() -> None:
    offered = {"eu-west-1a": ["m7i.large", "c7i.large", "m5.large"], "eu-west-1b": ["c7i.large", "m5.large"]}
    text = refused(run(invoke_results=offerings(offered)))
    assert "eks-karpenter:cluster.systemNodeGroup.instanceTypes: node group system: none of its instance types is " \
           "offered in eu-west-1b (euw1-az2)" in text
    assert "describe-instance-type-offerings" in text


def test_offering_rules() -> None:
    offered = {"a": frozenset({"m5.large", "c5.large"}), "b": frozenset({"c5.large"})}
    pool = Launcher("NodePool", "p", ("pools", 0), ("m5.large", "m5.xlarge", "r7g"), ("a", "b"))
    issues, warnings = offering_issues(offered, {"a": "az1", "b": "az2"}, [pool])
    assert issues == []
    assert warnings == ["NodePool p: m5.xlarge is offered in none of its zones (a (az1), b (az2)) in this account",
                        "NodePool p: r7g is offered in none of its zones (a (az1), b (az2)) in this account",
                        "NodePool p admits no instance type offered in b: its nodes launch in the other zones only"]
    family = Launcher("NodePool", "f", ("pools", 1), ("c5",), ("a", "b"))
    assert offering_issues(offered, {}, [family]) == ([], [])
    [issue] = offering_issues(offered, {}, [Launcher("NodePool", "p", ("pools", 0), ("m5.large",), ("b",))])[0]
    assert issue.path == ("pools", 0)
    group = Launcher("node group", "g", ("groups",), ("m5.large", "c5.large"), ("a", "b"))
    assert offering_issues(offered, {}, [group]) == (
        [], ["node group g: m5.large is not offered in b in this account: the group launches its other types there"])


def test_the_types_a_pool_is_pinned_to() -> None:
    from eks_karpenter.platform.build import pinned_types
    from eks_karpenter.platform.nodepool.config import NodePoolConfig

    assert pinned_types(NodePoolConfig.model_validate({"name": "p"})) == ()
    assert pinned_types(NodePoolConfig.model_validate({"name": "p", "instanceFamilies": ["m7i"]})) == ("m7i",)
    assert pinned_types(NodePoolConfig.model_validate({"name": "p", "instanceFamilies": ["m7i"], "requirements": [
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m7i.large"]}]})) == ("m7i.large",)


# --- a VPC this stack already created ------------------------------------------------------------------------------

def existing_vpc(cidr: str, zones: list[str], vpc_cidr: str = "10.20.0.0/16") -> dict[str, Any]:
    """The account as after an `up` of dev with `zones`: its VPC and discovery-tagged private subnets."""
    subnets = {f"subnet-{i:017x}": (p.zone, p.private_cidr) for i, p in enumerate(plan_subnets(vpc_cidr, zones))}
    return {
        VPCS_TOKEN: {"ids": ["vpc-0123456789abcdef0"], "id": "eu-west-1"},
        VPC_TOKEN: {"id": "vpc-0123456789abcdef0", "cidrBlock": cidr},
        SUBNETS_TOKEN: {"ids": list(subnets), "id": "eu-west-1"},
        SUBNET_TOKEN: lambda args: {"id": args["id"], "availabilityZone": subnets[args["id"]][0],
                                    "cidrBlock": subnets[args["id"]][1]},
    }


def test_offline_no_vpc_exists_yet() -> None:
    doc = plan_stack("dev")
    [ask] = [i for i in doc.invokes if i.token == VPCS_TOKEN]
    assert ask.args["tags"] == {"Name": "dev-karpenter-vpc", "eks-karpenter/cluster": "dev-karpenter"}
    assert VPC_TOKEN not in [i.token for i in doc.invokes]
    assert VPCS_TOKEN not in [i.token for i in plan_stack("brownfield").invokes]  # an adopted VPC is not ours


def test_a_later_up_with_the_same_network_goes_through() -> None:
    assert run(invoke_results=existing_vpc("10.20.0.0/16", DEV_ZONES)).error is None


def test_a_new_vpc_cidr_on_an_existing_vpc_is_refused_by_the_program() -> None:
    text = refused(run(invoke_results=existing_vpc("10.20.0.0/16", DEV_ZONES),
                       **{"eks-karpenter:network": network(vpcCidr="10.30.0.0/16")}))
    assert "eks-karpenter:network.vpcCidr: this stack's VPC vpc-0123456789abcdef0 exists with 10.20.0.0/16: a " \
           "VPC's CIDR cannot change in place" in text
    assert "docs/changes.md" in text


@pytest.mark.parametrize(("zones", "key", "words"), [
    (["eu-west-1b", "eu-west-1a"], "availabilityZones[0]", "eu-west-1b moved in the list"),
    (["eu-west-1a", "eu-west-1c"], "availabilityZones", "eu-west-1b is no longer listed"),
    (["eu-west-1c", "eu-west-1a", "eu-west-1b"], "availabilityZones[1]", "eu-west-1a moved in the list"),
])
def test_zones_reordered_or_removed_on_an_existing_vpc_are_refused(zones: list[str], key: str, words: str) -> None:
    text = refused(run(invoke_results=existing_vpc("10.20.0.0/16", DEV_ZONES),
                       **{"eks-karpenter:network": network(availabilityZones=zones)}))
    assert f"eks-karpenter:network.{key}: {words}" in text


def test_appending_a_zone_to_an_existing_vpc_goes_through() -> None:
    result = run(invoke_results=existing_vpc("10.20.0.0/16", DEV_ZONES),
                 **{"eks-karpenter:network": network(availabilityZones=[*DEV_ZONES, "eu-west-1c"])})
    assert result.error is None, result.error


def test_network_change_rules() -> None:
    subnets = {"a": ("subnet-1", "10.0.0.0/19"), "b": ("subnet-2", "10.0.32.0/19")}
    assert network_change_issues("vpc-1", "10.0.0.0/16", subnets, vpc_cidr="10.0.0.0/16", zones=["a", "b", "c"],
                                 at=("n",)) == []
    [issue] = network_change_issues("vpc-1", "10.0.0.0/16", subnets, vpc_cidr="10.1.0.0/16", zones=["a", "b"],
                                    at=("n",))
    assert issue.path == ("n", "vpcCidr") and issue.value == "10.1.0.0/16"


# --- fixed names a first `up` may find taken ----------------------------------------------------------------------

LOG_GROUP = "/aws/eks/dev-karpenter/cluster"
DEV = "organization/eks-karpenter/dev"
"""The dev stack as its stack tag names it (offline, the organization a self-managed backend reports)."""
OWN_TAGS = f"eks-karpenter/cluster=dev-karpenter,eks-karpenter/stack={DEV}"
LOG_GROUP_ARN = f"arn:aws:logs:eu-west-1:123456789012:log-group:{LOG_GROUP}"


def left_log_group(tags: dict[str, str]) -> dict[str, Any]:
    """The account as an earlier cluster of dev's name left it: its control-plane log group, with `tags`."""
    return {
        LOG_GROUPS_TOKEN: {"arns": [LOG_GROUP_ARN], "logGroupNames": [LOG_GROUP], "id": "eu-west-1"},
        LOG_GROUP_TOKEN: {"name": LOG_GROUP, "arn": LOG_GROUP_ARN, "id": LOG_GROUP, "retentionInDays": 0,
                          "creationTime": 1, "kmsKeyId": "", "logGroupClass": "STANDARD", "tags": tags},
    }


def log_group(doc: PlanDocument) -> Any:
    [group] = doc.by_type("aws:cloudwatch/logGroup:LogGroup")
    return group


def test_offline_no_control_plane_log_group_exists_yet() -> None:
    doc = plan_stack("dev")
    [ask] = [i for i in doc.invokes if i.token == LOG_GROUPS_TOKEN]
    assert ask.args["logGroupNamePrefix"] == LOG_GROUP
    assert LOG_GROUP_TOKEN not in [i.token for i in doc.invokes]
    assert "import" not in log_group(doc).options
    # An adopted cluster's log group is not this stack's; without logging there is none.
    assert LOG_GROUPS_TOKEN not in [i.token for i in plan_stack("brownfield").invokes]
    cluster = {**stack_config("dev")["eks-karpenter:cluster"], "logTypes": []}
    assert LOG_GROUPS_TOKEN not in [i.token for i in run(**{"eks-karpenter:cluster": cluster}).document.invokes]


def test_a_log_group_an_earlier_cluster_of_the_name_left_is_refused_with_the_ways_out() -> None:
    text = refused(run(invoke_results=left_log_group({})))
    assert f"eks-karpenter:cluster.logTypes: the log group {LOG_GROUP} already exists in this account (eu-west-1) " \
           "and this stack did not create it" in text
    assert "ResourceAlreadyExistsException" in text
    assert f"`aws logs tag-resource --region eu-west-1 --resource-arn {LOG_GROUP_ARN} --tags {OWN_TAGS}`): the " \
           "next `up` adopts it" in text
    assert f"`aws logs delete-log-group --region eu-west-1 --log-group-name {LOG_GROUP}`" in text
    # This stack's own group stripped of its tags looks the same: tagging it back is the way out.
    assert "or it is this stack's own group, whose tags were removed" in text
    # Another cluster's tag is not this one's.
    refused(run(invoke_results=left_log_group({"eks-karpenter/cluster": "other"})))


def test_a_log_group_tagged_as_this_stacks_is_adopted_and_the_planned_one_carries_the_tag() -> None:
    assert log_group(plan_stack("dev")).inputs["tags"]["eks-karpenter/stack"] == DEV
    result = run(invoke_results=left_log_group({"eks-karpenter/cluster": "dev-karpenter",
                                                "eks-karpenter/stack": DEV, "team": "platform"}))
    assert result.error is None, result.error
    group = log_group(result.document)
    assert group.options["import"] == LOG_GROUP
    assert group.inputs["retentionInDays"] == 90 and group.inputs["name"] == LOG_GROUP
    assert group.inputs["tags"]["eks-karpenter/stack"] == DEV
    # Only the fixed-name resources carry it: the cluster tag is what every other resource has.
    assert "eks-karpenter/stack" not in queue_rule(result.document).inputs["tags"]


def test_a_log_group_tagged_by_an_earlier_release_with_the_cluster_only_is_adopted() -> None:
    result = run(invoke_results=left_log_group({"eks-karpenter/cluster": "dev-karpenter"}))
    assert result.error is None, result.error
    group = log_group(result.document)
    assert group.options["import"] == LOG_GROUP and group.inputs["tags"]["eks-karpenter/stack"] == DEV


def test_a_log_group_of_another_stack_with_the_cluster_name_is_refused_naming_that_stack() -> None:
    other = "organization/eks-karpenter/dev2"
    text = refused(run(invoke_results=left_log_group({"eks-karpenter/cluster": "dev-karpenter",
                                                      "eks-karpenter/stack": other})))
    assert f"the log group {LOG_GROUP} already exists in this account (eu-west-1) and is the Pulumi stack " \
           f"{other}'s" in text
    assert "Give this stack's cluster another `name`" in text
    assert f"--resource-arn {LOG_GROUP_ARN} --tags eks-karpenter/stack={DEV}`" in text


def test_a_log_group_cloudformation_made_is_never_adopted() -> None:
    text = refused(run(invoke_results=left_log_group({"eks-karpenter/cluster": "dev-karpenter",
                                                      "eks-karpenter/stack": DEV,
                                                      "aws:cloudformation:stack-name": "logging"})))
    assert "belongs to the CloudFormation stack logging (its tag aws:cloudformation:stack-name)" in text
    assert "`aws cloudformation delete-stack --region eu-west-1 --stack-name logging`" in text


def test_log_group_ownership_rules() -> None:
    found = Found(LOG_GROUP, LOG_GROUP, LOG_GROUP_ARN, {"eks-karpenter/cluster": "a"})
    assert log_group_issue(found, "a", "o/p/s", "eu-west-1", ("c", "logTypes"), ["api"]) is None
    issue = log_group_issue(found, "b", "o/p/s", "eu-west-1", ("c", "logTypes"), ["api"])
    assert issue is not None and issue.path == ("c", "logTypes") and issue.value == ["api"]
    # The stack tag decides over the cluster tag, and CloudFormation's over both.
    own = Found(LOG_GROUP, LOG_GROUP, LOG_GROUP_ARN, {"eks-karpenter/cluster": "a", "eks-karpenter/stack": "o/p/s"})
    assert own.owned_by("a", "o/p/s") and not own.owned_by("a", "o/p/t")
    assert not Found("a", "a", "arn", {**own.tags, "aws:cloudformation:stack-name": "x"}).owned_by("a", "o/p/s")


def test_a_failed_look_up_is_refused_naming_the_permissions_it_needs() -> None:
    def denied(action: str) -> Any:
        def answer(args: dict[str, Any]) -> dict[str, Any]:
            raise InvokeFailure(f"AccessDeniedException: not authorized to perform: {action}")
        return answer
    text = refused(run(invoke_results={LOG_GROUPS_TOKEN: denied("logs:DescribeLogGroups")}))
    assert "eks-karpenter:cluster.logTypes: looking up the fixed-name resources a first `up` may find taken " \
           "failed (" in text and "AccessDeniedException" in text
    assert "the identity running the preview needs logs:DescribeLogGroups (docs/UPGRADING.md" in text
    text = refused(run(invoke_results={**left_log_group({}), LOG_GROUP_TOKEN: denied("logs:ListTagsForResource")}))
    assert "needs logs:DescribeLogGroups, logs:ListTagsForResource (" in text
    text = refused(run(invoke_results={QUEUES_TOKEN: denied("sqs:ListQueues")}))
    assert "eks-karpenter:interruption.enabled: looking up" in text and "needs sqs:ListQueues (" in text
    text = refused(run(invoke_results={**other_queues({}), QUEUE_TOKEN: denied("sqs:ListQueueTags")}))
    assert "needs sqs:GetQueueUrl, sqs:GetQueueAttributes, sqs:ListQueueTags (" in text


QUEUE_URL = "https://sqs.eu-west-1.amazonaws.com/123456789012/dev-karpenter"


def other_queues(tags: dict[str, str], urls: list[str] | None = None) -> dict[str, Any]:
    """The account with an SQS queue named after dev's cluster (as Karpenter's getting-started CloudFormation
    stack leaves one), with `tags`; `urls`: every queue the name is a prefix of."""
    return {
        QUEUES_TOKEN: {"queueUrls": urls if urls is not None else [QUEUE_URL], "id": "eu-west-1"},
        QUEUE_TOKEN: {"name": "dev-karpenter", "url": QUEUE_URL, "id": QUEUE_URL,
                      "arn": "arn:aws:sqs:eu-west-1:123456789012:dev-karpenter", "tags": tags},
    }


def queue(doc: PlanDocument) -> Any:
    [found] = doc.by_type("aws:sqs/queue:Queue")
    return found


def queue_rule(doc: PlanDocument) -> Any:
    return doc.by_type("aws:cloudwatch/eventRule:EventRule")[0]


def test_offline_no_queue_of_the_clusters_name_exists_yet() -> None:
    for stack in ("dev", "brownfield"):  # an adopted cluster's stack creates its queue too
        doc = plan_stack(stack)
        [ask] = [i for i in doc.invokes if i.token == QUEUES_TOKEN]
        assert ask.args["queueNamePrefix"] == stack_config(stack)["eks-karpenter:cluster"]["name"]
        assert QUEUE_TOKEN not in [i.token for i in doc.invokes]
        assert "import" not in queue(doc).options


def test_a_queue_of_the_clusters_name_another_tool_made_is_refused_with_the_ways_out() -> None:
    text = refused(run(invoke_results=other_queues({"owner": "cloudformation"})))
    assert "eks-karpenter:interruption.enabled: an SQS queue dev-karpenter already exists in this account " \
           "(eu-west-1) and this stack did not create it" in text
    assert "a `pulumi destroy` would delete it" in text
    assert "`aws cloudformation delete-stack --region eu-west-1 --stack-name Karpenter-dev-karpenter`" in text
    assert f"if no CloudFormation stack made it, manage it from this stack: mark it as this stack's (`aws sqs " \
           f"tag-queue --region eu-west-1 --queue-url {QUEUE_URL} --tags {OWN_TAGS}`), the next `up` adopts it" in text


def test_a_queue_cloudformation_made_is_never_adopted_whatever_its_tags() -> None:
    tags = {"aws:cloudformation:stack-name": "Karpenter-dev-karpenter", "eks-karpenter/cluster": "dev-karpenter",
            "eks-karpenter/stack": DEV}
    text = refused(run(invoke_results=other_queues(tags)))
    assert "eks-karpenter:interruption.enabled: the SQS queue dev-karpenter already exists in this account " \
           "(eu-west-1) and belongs to the CloudFormation stack Karpenter-dev-karpenter" in text
    assert "`aws cloudformation delete-stack` of that stack would delete it under this one" in text
    assert "`aws cloudformation delete-stack --region eu-west-1 --stack-name Karpenter-dev-karpenter`" in text
    assert "remove the SQS queue from that stack's template" in text and "tag-queue" not in text


def test_a_queue_of_another_stack_with_the_cluster_name_is_refused_naming_that_stack() -> None:
    other = "acme/platform/dev"
    text = refused(run(invoke_results=other_queues({"eks-karpenter/cluster": "dev-karpenter",
                                                    "eks-karpenter/stack": other})))
    assert f"the SQS queue dev-karpenter already exists in this account (eu-west-1) and is the Pulumi stack " \
           f"{other}'s" in text
    assert f"--queue-url {QUEUE_URL} --tags eks-karpenter/stack={DEV}`" in text


def test_queues_the_name_is_only_a_prefix_of_are_not_in_the_way() -> None:
    result = run(invoke_results=other_queues({}, urls=[QUEUE_URL + "-dlq", QUEUE_URL + "2"]))
    assert result.error is None, result.error
    assert QUEUE_TOKEN not in [i.token for i in result.document.invokes]


def test_a_queue_tagged_as_this_stacks_or_by_an_earlier_release_as_this_clusters_is_adopted() -> None:
    assert queue(plan_stack("dev")).inputs["tags"]["eks-karpenter/stack"] == DEV
    for tags in ({"eks-karpenter/cluster": "dev-karpenter", "eks-karpenter/stack": DEV},
                 {"eks-karpenter/cluster": "dev-karpenter"}):
        result = run(invoke_results=other_queues(tags))
        assert result.error is None, result.error
        assert queue(result.document).options["import"] == QUEUE_URL
        assert queue(result.document).inputs["tags"]["eks-karpenter/stack"] == DEV


def test_without_interruption_handling_the_queue_is_not_looked_up() -> None:
    pools = [{**p, "capacityTypes": ["on-demand"]} for p in stack_config("dev")["eks-karpenter:nodePools"]]
    cluster = {**stack_config("dev")["eks-karpenter:cluster"], "spotNodeGroups": []}
    result = run(**{"eks-karpenter:interruption": {"enabled": False}, "eks-karpenter:nodePools": pools,
                    "eks-karpenter:cluster": cluster})
    assert result.error is None, result.error
    assert QUEUES_TOKEN not in [i.token for i in result.document.invokes]


def test_queue_ownership_rules() -> None:
    found = Found("a", QUEUE_URL, "arn", {"eks-karpenter/cluster": "a"})
    assert queue_issue(found, "a", "o/p/s", "eu-west-1", ("i", "enabled"), True) is None
    issue = queue_issue(found, "b", "o/p/s", "eu-west-1", ("i", "enabled"), True)
    assert issue is not None and issue.path == ("i", "enabled")
