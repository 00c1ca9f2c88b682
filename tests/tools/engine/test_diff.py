"""Plan diffs: classification (create/update/replace/delete), rendering, and the `diff` command."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from eks_karpenter.tools.cli import main
from eks_karpenter.tools.engine import PlanDocument, PlannedResource
from eks_karpenter.tools.engine.changes import format_path, parse_path
from eks_karpenter.tools.engine.diff import MAX_VALUE, diff_plans, render_diff_markdown, shorten, show_value
from eks_karpenter.tools.engine.replacements import REPLACE_ON_CHANGE, REPLACE_ON_REMOVE, replacing_paths

from tests.support import plan_stack

SUBNET = "aws:ec2/subnet:Subnet"
VPC = "aws:ec2/vpc:Vpc"
NODEPOOL = "kubernetes:karpenter.sh/v1:NodePool"


def res(type_: str, name: str, inputs: dict[str, Any], options: dict[str, Any] | None = None,
        dependencies: list[str] | None = None, custom: bool = True, stack: str = "dev") -> PlannedResource:
    return PlannedResource(urn=f"urn:pulumi:{stack}::p::{type_}::{name}", type=type_, name=name, parent="",
                           custom=custom, inputs=inputs, dependencies=dependencies or [], options=options or {})


def doc(*resources: PlannedResource, stack: str = "dev") -> PlanDocument:
    return PlanDocument(project="p", stack=stack, resources=sorted(resources, key=lambda r: r.urn))


def edited(plan: PlanDocument, type_: str, name: str, edit: Callable[[dict[str, Any]], None]) -> PlanDocument:
    """A deep copy of `plan` with `edit` applied to one resource's inputs."""
    copied = PlanDocument.from_json(plan.to_json())
    target = copied.get(type_, name)
    edit(target.inputs)
    return copied


# --- classification ------------------------------------------------------------------------------------------


def test_identical_plans_say_no_changes() -> None:
    plan = plan_stack("dev")
    diff = diff_plans(plan, PlanDocument.from_json(plan.to_json()))
    assert not diff.has_changes
    assert diff.counts() == {"create": 0, "update": 0, "replace": 0, "delete": 0, "forget": 0}
    assert diff.unchanged == len(plan.resources)
    assert "No changes" in render_diff_markdown(diff)


def test_changed_subnet_cidr_is_a_replacement() -> None:
    plan = plan_stack("dev")
    subnet = plan.by_type(SUBNET)[0]
    new = edited(plan, SUBNET, subnet.name, lambda i: i.update(cidrBlock="10.99.0.0/19"))
    diff = diff_plans(plan, new)
    assert diff.counts()["replace"] == 1
    (change,) = diff.changes
    assert change.op == "replace" and change.resource.name == subnet.name
    (prop,) = change.properties
    assert prop.label == "cidrBlock" and prop.replaces
    assert (prop.old, prop.new) == (subnet.inputs["cidrBlock"], "10.99.0.0/19")
    text = render_diff_markdown(diff)
    assert "± replace" in text and "**(forces replacement)**" in text and '"10.99.0.0/19"' in text


@pytest.mark.slow
def test_tag_change_is_an_update() -> None:
    plan = plan_stack("dev")
    new = edited(plan, VPC, "network-vpc", lambda i: i["tags"].update(environment="qa"))
    diff = diff_plans(plan, new)
    assert diff.counts() == {"create": 0, "update": 1, "replace": 0, "delete": 0, "forget": 0}
    (prop,) = diff.changes[0].properties
    assert prop.label == "tags.environment" and not prop.replaces
    assert "`tags.environment`: `\"dev\"` → `\"qa\"`" in render_diff_markdown(diff)


def test_created_and_deleted_resources_are_counted() -> None:
    plan = plan_stack("dev")
    gone = plan.by_type(SUBNET)[0]
    added = res("aws:sqs/queue:Queue", "interruption-queue", {"name": "dev-karpenter"})
    new = PlanDocument(project=plan.project, stack=plan.stack,
                       resources=[r for r in plan.resources if r.urn != gone.urn] + [added])
    diff = diff_plans(plan, new)
    assert diff.counts() == {"create": 1, "update": 0, "replace": 0, "delete": 1, "forget": 0}
    ops = {c.resource.urn: c.op for c in diff.changes}
    assert ops == {added.urn: "create", gone.urn: "delete"}
    assert "**1** to create · **0** to update · **0** to replace · **1** to delete" in render_diff_markdown(diff)


def test_secrets_are_masked() -> None:
    raw_secret = {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", "value": "s3cr3t-raw"}
    old = doc(res("aws:iam/user:User", "u", {"password": "[secret]", "token": "[secret]", "other": "a"}))
    new = doc(res("aws:iam/user:User", "u", {"password": "hunter2", "token": raw_secret, "other": "b"}))
    text = render_diff_markdown(diff_plans(old, new))
    assert "hunter2" not in text and "s3cr3t-raw" not in text
    assert "`password`: `[secret]` → `[secret]`" in text
    assert "`token`: `[secret]` → `[secret]`" in text
    assert "`other`: `\"a\"` → `\"b\"`" in text


def test_long_values_are_shortened() -> None:
    long = "x" * 150 + "END"
    text = show_value(long)
    assert len(text) <= MAX_VALUE and "…" in text and text.endswith('END"')
    assert shorten("short") == "short"
    old = doc(res(VPC, "v", {"description": "a"}))
    new = doc(res(VPC, "v", {"description": long}))
    rendered = render_diff_markdown(diff_plans(old, new))
    assert long not in rendered and "…" in rendered


def test_nested_paths_name_the_changed_leaf() -> None:
    def pool(values: list[str]) -> PlannedResource:
        spec = {"template": {"spec": {"requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In",
                                                        "values": values}]}}}
        return res(NODEPOOL, "default", {"metadata": {"name": "default"}, "spec": spec})

    diff = diff_plans(doc(pool(["spot"])), doc(pool(["spot", "on-demand"])))
    (change,) = diff.changes
    assert change.op == "update"
    assert [p.label for p in change.properties] == ["spec.template.spec.requirements[0].values[1]"]


def test_kubernetes_object_rename_is_a_replacement() -> None:
    old = doc(res(NODEPOOL, "pool", {"metadata": {"name": "default"}}))
    new = doc(res(NODEPOOL, "pool", {"metadata": {"name": "general"}}))
    assert diff_plans(old, new).changes[0].op == "replace"


def test_policy_documents_are_diffed_as_json() -> None:
    def policy(resource: str) -> PlannedResource:
        body = {"Statement": [{"Action": "sqs:ReceiveMessage", "Effect": "Allow", "Resource": resource}]}
        return res("aws:iam/policy:Policy", "p", {"policy": json.dumps(body)})

    diff = diff_plans(doc(policy("arn:a")), doc(policy("arn:b")))
    assert [p.label for p in diff.changes[0].properties] == ["policy.Statement[0].Resource"]


def test_non_identifier_keys_are_quoted_and_paths_round_trip() -> None:
    old = doc(res(SUBNET, "s", {"tags": {"karpenter.sh/discovery": "a"}}))
    new = doc(res(SUBNET, "s", {"tags": {"karpenter.sh/discovery": "b"}}))
    assert diff_plans(old, new).changes[0].properties[0].label == 'tags["karpenter.sh/discovery"]'
    assert parse_path("spec.requirements[0].values") == ("spec", "requirements", 0, "values")
    assert format_path(("spec", "requirements", 0, "values")) == "spec.requirements[0].values"


def test_a_bool_that_becomes_a_number_is_a_change_a_float_that_becomes_an_int_is_not() -> None:
    assert diff_plans(doc(res(VPC, "v", {"flag": True})), doc(res(VPC, "v", {"flag": 1}))).has_changes
    assert not diff_plans(doc(res(VPC, "v", {"hops": 1.0})), doc(res(VPC, "v", {"hops": 1}))).has_changes
    (prop,) = diff_plans(doc(res(VPC, "v", {"hops": 1.0})), doc(res(VPC, "v", {"hops": 2.0}))).changes[0].properties
    assert show_value(prop.old) == "1" and show_value(prop.new) == "2"


@pytest.mark.slow
def test_protected_replacement_is_flagged() -> None:
    plan = plan_stack("prod")
    subnet = plan.by_type(SUBNET)[0]
    assert subnet.options.get("protect")
    diff = diff_plans(plan, edited(plan, SUBNET, subnet.name, lambda i: i.update(availabilityZone="us-east-1f")))
    (change,) = diff.changes
    assert change.op == "replace" and change.blocked
    text = render_diff_markdown(diff)
    assert "Protected" in text and "`protect`" in text and f"`{subnet.name}` (Subnet, replace)" in text


def test_protect_option_change_is_shown() -> None:
    old = doc(res(VPC, "v", {}, options={"protect": True}))
    new = doc(res(VPC, "v", {}))
    (change,) = diff_plans(old, new).changes
    assert change.op == "update" and change.properties[0].label == "option protect"


def test_disabling_cluster_secrets_encryption_replaces_enabling_updates() -> None:
    with_key = res("eks:index:Cluster", "c", {"name": "c", "encryptionConfigKeyArn": "arn:aws:kms:k"}, custom=False)
    without = res("eks:index:Cluster", "c", {"name": "c"}, custom=False)
    assert diff_plans(doc(with_key), doc(without)).changes[0].op == "replace"
    assert diff_plans(doc(without), doc(with_key)).changes[0].op == "update"


def test_program_replace_on_changes_counts() -> None:
    old = doc(res(VPC, "v", {"description": "a"}, options={"replaceOnChanges": ["description"]}))
    new = doc(res(VPC, "v", {"description": "b"}, options={"replaceOnChanges": ["description"]}))
    assert diff_plans(old, new).changes[0].op == "replace"


def test_dependents_of_a_replacement_are_named() -> None:
    vpc_old, vpc_new = res(VPC, "vpc", {"cidrBlock": "10.0.0.0/16"}), res(VPC, "vpc", {"cidrBlock": "10.1.0.0/16"})
    igw = res("aws:ec2/internetGateway:InternetGateway", "igw", {"vpcId": "vpc-1"}, dependencies=[vpc_new.urn])
    diff = diff_plans(doc(vpc_old, igw), doc(vpc_new, igw))
    assert diff.knock_on == {vpc_new.urn: (igw.urn,)}
    assert "`igw` (InternetGateway)" in render_diff_markdown(diff)


def test_rename_without_alias_is_pointed_out() -> None:
    old = doc(res(SUBNET, "old-name", {"cidrBlock": "10.0.0.0/19"}))
    new = doc(res(SUBNET, "new-name", {"cidrBlock": "10.0.0.0/19"}))
    diff = diff_plans(old, new)
    assert [(a.op, b.op) for a, b in diff.moves()] == [("delete", "create")]
    assert "alias" in render_diff_markdown(diff)


def test_renamed_resources_of_one_name_are_told_apart_by_their_type() -> None:
    entry, association = "aws:eks/accessEntry:AccessEntry", "aws:eks/accessPolicyAssociation:AccessPolicyAssociation"
    old = [res(entry, "access-team-batch", {}), res(association, "access-team-batch", {})]
    new = [res(t, "access-entry-batch", {}, options={"aliases": [o.urn]}) for t, o in zip((entry, association), old,
                                                                                          strict=True)]
    text = render_diff_markdown(diff_plans(doc(*old), doc(*new)))
    assert ("kept rather than recreated: `access-team-batch` → `access-entry-batch` (AccessEntry), "
            "`access-team-batch` → `access-entry-batch` (AccessPolicyAssociation).") in text


def test_the_header_says_what_is_compared() -> None:
    import re

    from eks_karpenter import __version__
    from eks_karpenter.tools.cli import _compared, _parser

    dev = doc(res(SUBNET, "a", {}))
    assert render_diff_markdown(diff_plans(dev, dev), "`old.json` (old) → `new.json` (new)").startswith(
        "### Plan diff: `p` / `dev`\n\nCompared: `old.json` (old) → `new.json` (new).\n")
    assert render_diff_markdown(diff_plans(dev, doc(res(SUBNET, "a", {}, stack="dev2"), stack="dev2"))).startswith(
        "### Plan diff: `p` / `dev` → `dev2`\n")
    base = _compared(_parser().parse_args(["diff", "--base", "HEAD", "--stack", "dev"]))
    assert re.fullmatch(r"`HEAD` \(commit [0-9a-f]{12}\) \(old\) → the working tree \(new\)", base), base
    library = _compared(_parser().parse_args(["diff", "--library", "../eks-karpenter", "--stack", "dev"]))
    assert library == (f"the installed library, eks-karpenter {__version__} (old) → the candidate library "
                       "`../eks-karpenter` (new)")
    files = _compared(_parser().parse_args(["diff", "old.json", "new.json"]))
    assert files == "`old.json` (old) → `new.json` (new)"


def test_rename_with_an_alias_is_the_same_resource() -> None:
    old_subnet = res(SUBNET, "old-name", {"cidrBlock": "10.0.0.0/19"})
    renamed = res(SUBNET, "new-name", {"cidrBlock": "10.0.0.0/19"}, options={"aliases": [old_subnet.urn]})
    diff = diff_plans(doc(old_subnet), doc(renamed))
    assert not diff.has_changes and diff.aliased == ((old_subnet.urn, renamed.urn),)
    text = render_diff_markdown(diff)
    assert "No changes" in text and "`old-name` → `new-name`" in text
    changed = res(SUBNET, "new-name", {"cidrBlock": "10.0.32.0/19"}, options={"aliases": [old_subnet.urn]})
    (change,) = diff_plans(doc(old_subnet), doc(changed)).changes
    assert change.op == "replace" and change.resource.urn == changed.urn


# --- replacement data ----------------------------------------------------------------------------------------

REQUIRED = [
    (VPC, "cidrBlock"),
    (SUBNET, "cidrBlock"), (SUBNET, "availabilityZone"), (SUBNET, "vpcId"),
    ("aws:ec2/natGateway:NatGateway", "subnetId"), ("aws:ec2/natGateway:NatGateway", "allocationId"),
    ("aws:ec2/eip:Eip", "domain"),
    ("aws:ec2/routeTable:RouteTable", "vpcId"),
    ("aws:ec2/tag:Tag", "resourceId"), ("aws:ec2/tag:Tag", "key"),
    ("eks:index:Cluster", "name"), ("eks:index:Cluster", "vpcId"),
    ("eks:index:ManagedNodeGroup", "nodeGroupName"), ("eks:index:ManagedNodeGroup", "capacityType"),
    ("eks:index:ManagedNodeGroup", "amiType"), ("eks:index:ManagedNodeGroup", "subnetIds"),
    ("eks:index:ManagedNodeGroup", "diskSize"),
    ("aws:iam/role:Role", "name"), ("aws:iam/role:Role", "path"),
    ("aws:iam/policy:Policy", "name"), ("aws:iam/policy:Policy", "path"),
    ("aws:sqs/queue:Queue", "name"), ("aws:sqs/queue:Queue", "fifoQueue"),
    ("aws:kms/key:Key", "customerMasterKeySpec"), ("aws:kms/key:Key", "keyUsage"),
    ("aws:cloudwatch/eventRule:EventRule", "name"),
    ("aws:eks/accessEntry:AccessEntry", "clusterName"), ("aws:eks/accessEntry:AccessEntry", "principalArn"),
    ("aws:eks/podIdentityAssociation:PodIdentityAssociation", "clusterName"),
    ("aws:eks/podIdentityAssociation:PodIdentityAssociation", "namespace"),
    ("aws:eks/podIdentityAssociation:PodIdentityAssociation", "serviceAccount"),
    ("kubernetes:helm.sh/v3:Release", "name"), ("kubernetes:helm.sh/v3:Release", "namespace"),
    (NODEPOOL, "metadata.name"), ("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", "metadata.name"),
]


@pytest.mark.parametrize(("type_", "prop"), REQUIRED)
def test_replacement_data_covers(type_: str, prop: str) -> None:
    assert prop in replacing_paths(type_, REPLACE_ON_CHANGE)


def test_replacement_data_is_well_formed() -> None:
    for table in (REPLACE_ON_CHANGE, REPLACE_ON_REMOVE):
        for type_, props in table.items():
            assert type_.count(":") >= 1 and props, type_
            assert len(set(props)) == len(props), f"{type_}: duplicate paths"
            assert all(parse_path(p) and format_path(parse_path(p)) == p for p in props), type_
    # EKS and the provider change a cluster's subnets in place (Terraform AWS provider >= 5.25).
    assert "subnetIds" not in replacing_paths("eks:index:Cluster", REPLACE_ON_CHANGE)


# --- command line --------------------------------------------------------------------------------------------


def test_cli_diff_of_two_plan_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan = plan_stack("dev")
    subnet = plan.by_type(SUBNET)[0]
    new = edited(plan, SUBNET, subnet.name, lambda i: i.update(cidrBlock="10.99.0.0/19"))
    new = edited(new, VPC, "network-vpc", lambda i: i["tags"].update(environment="qa"))
    (tmp_path / "old.json").write_text(plan.to_json())
    (tmp_path / "new.json").write_text(new.to_json())
    # A created VPC's subnet replaced (its zone's range moved): written out, and refused with exit status 3.
    assert main(["diff", str(tmp_path / "old.json"), str(tmp_path / "new.json")]) == 3
    captured = capsys.readouterr()
    assert "**1** to update · **1** to replace" in captured.out and f"`{subnet.name}`" in captured.out
    assert captured.err.startswith("error: refused: network.availabilityZones:")


def test_cli_diff_exits_0_on_a_change_up_can_carry_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan = plan_stack("dev")
    new = edited(plan, VPC, "network-vpc", lambda i: i["tags"].update(environment="qa"))
    (tmp_path / "old.json").write_text(plan.to_json())
    (tmp_path / "new.json").write_text(new.to_json())
    assert main(["diff", str(tmp_path / "old.json"), str(tmp_path / "new.json")]) == 0
    assert "**1** to update" in capsys.readouterr().out


def test_a_retained_resource_leaving_the_state_is_forgotten_not_deleted() -> None:
    slr = res("aws:iam/serviceLinkedRole:ServiceLinkedRole", "spot-slr", {"awsServiceName": "spot.amazonaws.com"},
              options={"retainOnDelete": True})
    plain = res(SUBNET, "gone", {"cidrBlock": "10.0.0.0/24"})
    diff = diff_plans(doc(slr, plain), doc())
    assert {c.resource.name: c.op for c in diff.changes} == {"spot-slr": "forget", "gone": "delete"}
    text = render_diff_markdown(diff)
    assert "**1** to forget" in text and "| ○ forget |" in text
    assert "only leave this stack's state and stay in the account: `spot-slr`" in text


def test_an_import_option_on_a_resource_already_in_the_state_is_no_change() -> None:
    # The spot service-linked role: created in a fresh account, imported (same id) on every later run.
    created = res("aws:iam/serviceLinkedRole:ServiceLinkedRole", "spot-slr", {"awsServiceName": "spot.amazonaws.com"},
                  options={"retainOnDelete": True})
    imported = res("aws:iam/serviceLinkedRole:ServiceLinkedRole", "spot-slr",
                   {"awsServiceName": "spot.amazonaws.com"},
                   options={"retainOnDelete": True, "import": "arn:aws:iam::123456789012:role/x"})
    assert not diff_plans(doc(created), doc(imported)).has_changes


@pytest.mark.parametrize("argv", [
    ["diff"],
    ["diff", "one.json"],
    ["diff", "missing-old.json", "missing-new.json"],
    ["diff", "--base", "HEAD"],
    ["diff", "a.json", "b.json", "--stack", "dev"],
])
def test_cli_diff_usage_errors_exit_1_with_one_line(argv: list[str], tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("error: ") and captured.err.count("\n") == 1


def test_cli_diff_rejects_a_file_that_is_not_a_plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.json").write_text("{}")
    (tmp_path / "b.json").write_text("[1, 2")
    assert main(["diff", str(tmp_path / "a.json"), str(tmp_path / "b.json")]) == 1
    assert "not a `plan --format json` document" in capsys.readouterr().err


def test_a_changed_delete_timeout_shows_as_an_option_update() -> None:
    old = doc(res(VPC, "v", {}, options={"customTimeouts": {"delete": "15m"}}))
    new = doc(res(VPC, "v", {}, options={"customTimeouts": {"delete": "40m"}}))
    [change] = diff_plans(old, new).changes
    assert change.op == "update"
    assert [p.label for p in change.properties] == ["option customTimeouts"]


def test_a_renamed_kubernetes_object_is_replaced_create_first_and_a_kept_name_delete_first() -> None:
    # pulumi-kubernetes deletes first only when the object keeps its name and namespace: two objects of
    # different names coexist, so a rename creates the new one before it deletes the old.
    role = "kubernetes:rbac.authorization.k8s.io/v1:Role"
    old = plan_stack("dev")
    renamed = PlanDocument.from_json(old.to_json())
    renamed.get(role, "access-preview-kube-system-role").inputs["metadata"]["name"] = "eks-karpenter:preview:v2"
    (change,) = diff_plans(old, renamed).changes
    assert change.op == "replace" and change.order == "create-before-delete"
    moved = PlanDocument.from_json(old.to_json())
    moved.get(role, "access-preview-kube-system-role").inputs["metadata"]["namespace"] = "karpenter"
    (change,) = diff_plans(old, moved).changes
    assert change.order == "create-before-delete"
    kept = PlanDocument.from_json(old.to_json())
    kept.get(role, "access-preview-kube-system-role").options["replaceOnChanges"] = ["rules"]
    kept.get(role, "access-preview-kube-system-role").inputs["rules"] = []
    (change,) = diff_plans(old, kept).changes
    assert change.op == "replace" and change.order == "delete-before-create"
