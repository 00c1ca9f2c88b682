"""Every stack plans offline; the network layer registers what Karpenter's discovery needs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from eks_karpenter.tags import DISCOVERY_KEY, ELB_KEY, INTERNAL_ELB_KEY

from tests.support import REPO, STACKS, plan_stack

SUBNET = "aws:ec2/subnet:Subnet"
TAG = "aws:ec2/tag:Tag"


def test_committed_stacks() -> None:
    assert STACKS == ["brownfield", "dev", "prod"]


@pytest.mark.slow
@pytest.mark.parametrize("stack", STACKS)
def test_every_stack_plans(stack: str) -> None:
    doc = plan_stack(stack)
    assert doc.resources
    assert doc.outputs["discoveryTagValue"]
    assert len(doc.outputs["privateSubnetIds"]) >= 2


@pytest.mark.slow
@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_subnet_tags_and_az_spread(stack: str) -> None:
    doc = plan_stack(stack)
    cluster = doc.outputs["discoveryTagValue"]
    subnets = doc.by_type(SUBNET)
    private = [s for s in subnets if "-private-" in s.name]
    public = [s for s in subnets if "-public-" in s.name]
    zones = {s.inputs["availabilityZone"] for s in private}
    assert len(private) == len(public) == len(zones) >= 2
    assert {s.inputs["availabilityZone"] for s in public} == zones
    for s in private:
        assert s.inputs["tags"][DISCOVERY_KEY] == cluster
        assert s.inputs["tags"][INTERNAL_ELB_KEY] == "1"
        assert ELB_KEY not in s.inputs["tags"]
    for s in public:
        assert DISCOVERY_KEY not in s.inputs["tags"]
        assert s.inputs["tags"][ELB_KEY] == "1"
        assert s.inputs["mapPublicIpOnLaunch"] is False


def test_user_tags_on_every_taggable_resource() -> None:
    doc = plan_stack("dev")
    taggable = [r for r in doc.resources if r.custom and "tags" in r.inputs]
    assert len(taggable) > 10
    for r in taggable:
        assert r.inputs["tags"]["environment"] == "dev", r.urn
        assert r.inputs["tags"]["eks-karpenter/cluster"] == "dev-karpenter", r.urn


@pytest.mark.slow
def test_dev_has_one_nat_and_prod_one_per_zone() -> None:
    assert len(plan_stack("dev").by_type("aws:ec2/natGateway:NatGateway")) == 1
    prod_nats = plan_stack("prod").by_type("aws:ec2/natGateway:NatGateway")
    assert len(prod_nats) == 3
    # each private route table routes through the NAT of its own zone
    prod = plan_stack("prod")
    routes = [r for r in prod.by_type("aws:ec2/route:Route") if "-private-" in r.name]
    assert len({r.inputs["natGatewayId"] for r in routes}) == 3


@pytest.mark.slow
def test_prod_protects_the_vpc_and_subnets_not_the_network_component() -> None:
    doc = plan_stack("prod")
    # On the component, `protect` would reach route tables, gateways and NAT, which routine changes replace.
    assert "protect" not in doc.get("eks-karpenter:index:Network", "network").options
    protected = {r.type for r in doc.resources if r.options.get("protect") and r.type.startswith("aws:ec2/")}
    assert protected == {"aws:ec2/vpc:Vpc", "aws:ec2/subnet:Subnet"}
    assert all(s.options.get("protect") is True for s in doc.by_type(SUBNET))


@pytest.mark.slow
def test_brownfield_adopts_the_network_without_creating_or_tagging_anything() -> None:
    doc = plan_stack("brownfield")
    assert doc.by_type(SUBNET) == []
    assert doc.by_type("aws:ec2/vpc:Vpc") == []
    assert doc.by_type("aws:ec2/natGateway:NatGateway") == []
    # subnets another tool owns get no discovery or load-balancer tags unless the stack asks (test_unowned_tags)
    assert doc.by_type(TAG) == []
    assert doc.outputs["vpcId"] == "vpc-0a1b2c3d4e5f60718"
    assert doc.outputs["privateSubnetIds"] == {"us-west-2a": "subnet-0a1b2c3d4e5f60001",
                                               "us-west-2b": "subnet-0a1b2c3d4e5f60002",
                                               "us-west-2c": "subnet-0a1b2c3d4e5f60003"}


@pytest.mark.slow
def test_plan_json_is_byte_identical_across_runs() -> None:
    def run() -> str:
        return subprocess.run([sys.executable, "-m", "infra", "plan", "--stack", "dev", "--format", "json"],
                              cwd=REPO, check=True, capture_output=True, text=True).stdout

    first = run()
    assert first == run()
    body = json.loads(first)
    assert set(body) >= {"project", "stack", "resources"}
    r = body["resources"][0]
    assert set(r) >= {"urn", "type", "name", "parent", "custom", "inputs", "dependencies"}


@pytest.mark.slow
@pytest.mark.parametrize("stack", [s for s in STACKS if s != "brownfield"])  # an adopted cluster's: untagged
def test_exactly_one_security_group_carries_the_discovery_tag(stack: str) -> None:
    doc = plan_stack(stack)
    sg_tags = [t for t in doc.by_type(TAG)
               if t.inputs["key"] == DISCOVERY_KEY and t.inputs["resourceId"].startswith("sg-")]
    assert len(sg_tags) == 1
    assert sg_tags[0].inputs["resourceId"] == doc.outputs["clusterSecurityGroupId"]
    assert sg_tags[0].inputs["value"] == doc.outputs["discoveryTagValue"]
    # no security group is created with the discovery tag or an extra cluster-ownership tag
    for sg in doc.by_type("aws:ec2/securityGroup:SecurityGroup"):
        tags = sg.inputs.get("tags", {})
        assert DISCOVERY_KEY not in tags
        assert not any(k.startswith("kubernetes.io/cluster/") for k in tags)
    assert all(not t.inputs["key"].startswith("kubernetes.io/cluster/") for t in doc.by_type(TAG))


@pytest.mark.slow
def test_out_writes_manifests_values_and_policies(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "infra", "plan", "--stack", "prod", "--out", str(tmp_path)],
                          cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    files = {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()}
    assert {"kubernetes/nodepool-nodepool-general.yaml", "kubernetes/ec2nodeclass-nodeclass-default.yaml",
            "helm/karpenter-controller.values.yaml", "iam/karpenter-iam-NodeLifecycle.json",
            "iam/karpenter-iam-controller.trust.json"} <= files
    pool = yaml.safe_load((tmp_path / "kubernetes/nodepool-nodepool-general.yaml").read_text())
    assert (pool["apiVersion"], pool["kind"], pool["metadata"]["name"]) == ("karpenter.sh/v1", "NodePool", "general")
    policy = json.loads((tmp_path / "iam/karpenter-iam-NodeLifecycle.json").read_text())
    assert policy["Version"] == "2012-10-17" and policy["Statement"]


@pytest.mark.slow
def test_markdown_format_is_a_pr_comment() -> None:
    proc = subprocess.run([sys.executable, "-m", "infra", "plan", "--stack", "dev", "--format", "markdown"],
                          cwd=REPO, capture_output=True, text=True, check=True)
    assert proc.stdout.startswith("### Offline plan: `eks-karpenter` / `dev`")
    assert "| `eks-karpenter:index:Network` | 18 |" in proc.stdout
    assert "`kubernetes:karpenter.sh/v1:NodePool` | `nodepool-general`" in proc.stdout
