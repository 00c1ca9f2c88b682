"""An adopted cluster's facts: recorded from the cluster (a stand-in EKS client and the fake Kubernetes API) by
`preflight --record`, and read by `plan --facts` in place of the offline placeholders, which the plan then no
longer labels as made up."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import kubernetes
import pytest
from eks_karpenter.platform.kube import KubeApi
from eks_karpenter.platform.preflight.probe import answer
from eks_karpenter.tools import cli
from eks_karpenter.tools.facts import record_facts
from eks_karpenter.tools.project import load_project, validated_stack_config

from tests.support import REPO
from tests.support.fake_kube import FakeCluster

CA_DEPLOYMENT = "cluster-autoscaler-aws-cluster-autoscaler"


class StubEks:
    """`describe_cluster` and `describe_nodegroup` as boto3 answers them for the brownfield stack's cluster."""

    def __init__(self, core_min: int = 2) -> None:
        self.core_min = core_min

    def describe_cluster(self, name: str) -> dict[str, Any]:
        return {"cluster": {"name": name, "version": "1.34", "endpoint": "https://ABC.gr7.us-west-2.eks.amazonaws.com",
                            "certificateAuthority": {"data": "Q0E="},
                            "accessConfig": {"authenticationMode": "API_AND_CONFIG_MAP"},
                            "resourcesVpcConfig": {"endpointPublicAccess": True, "publicAccessCidrs": ["0.0.0.0/0"],
                                                   "clusterSecurityGroupId": "sg-0c1a2b3c4d5e6f708",
                                                   "vpcId": "vpc-0a1b2c3d4e5f60718"}}}

    def describe_nodegroup(self, clusterName: str, nodegroupName: str) -> dict[str, Any]:
        sizes = {"core": (self.core_min, 3, 2), "spot-4vcpu-16gb": (0, 10, 4)}
        if nodegroupName not in sizes:
            raise RuntimeError(f"An error occurred (ResourceNotFoundException) when calling the DescribeNodegroup "
                               f"operation: No node group found for name: {nodegroupName}.")
        low, high, running = sizes[nodegroupName]
        return {"nodegroup": {"nodegroupName": nodegroupName, "capacityType": "SPOT" if "spot" in nodegroupName
                              else "ON_DEMAND", "scalingConfig": {"minSize": low, "maxSize": high,
                                                                  "desiredSize": running},
                              "nodeRole": f"arn:aws:iam::111122223333:role/{nodegroupName}",
                              "subnets": ["subnet-0a1b2c3d4e5f60001"], "status": "ACTIVE"}}


def recorded(eks: StubEks) -> dict[str, Any]:
    cfg = validated_stack_config(load_project(REPO), "brownfield")
    fake = FakeCluster([])
    fake.add_deployment("kube-system", CA_DEPLOYMENT, replicas=1)
    with fake.serving() as url:
        config = kubernetes.client.Configuration()
        config.host = url
        api = KubeApi(kubernetes.client.ApiClient(config))
        return record_facts(cfg, "eks-karpenter", "brownfield", eks, lambda request: answer(api, request))


def test_the_record_holds_what_the_preflight_reads() -> None:
    facts = recorded(StubEks())
    assert facts["cluster"] == "legacy-cas" and facts["format"] == 1
    assert facts["clusterFacts"]["version"] == "1.34"
    assert facts["nodeGroups"]["core"] == {"capacityType": "ON_DEMAND", "minSize": 2, "maxSize": 3, "desiredSize": 2,
                                           "nodeRoleArn": "arn:aws:iam::111122223333:role/core",
                                           "subnetIds": ["subnet-0a1b2c3d4e5f60001"], "status": "ACTIVE"}
    assert "ResourceNotFoundException" in facts["nodeGroups"]["spot-8vcpu-32gb"]["error"]
    assert facts["inCluster"]["deployments"] == {f"kube-system/{CA_DEPLOYMENT}": 1}
    assert "Q0E=" not in json.dumps(facts)  # nothing of the cluster's credentials


def plan_with(tmp_path: Path, facts: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(facts))
    code = cli.main(["plan", "--stack", "brownfield", "--facts", str(path), "--format", "json"])
    out, err = capsys.readouterr()
    return code, out if code == 0 else err


def test_a_plan_on_recorded_facts_checks_the_real_values(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = plan_with(tmp_path, recorded(StubEks(core_min=1)), capsys)
    assert code == 1
    assert "node group 'core' may shrink to 1 nodes (minSize)" in err
    assert "no managed node group 'spot-8vcpu-32gb'" in err


def test_a_plan_on_recorded_facts_no_longer_labels_them_placeholders(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    facts = recorded(StubEks())
    facts["nodeGroups"]["spot-8vcpu-32gb"] = {"capacityType": "SPOT", "minSize": 0, "maxSize": 10, "desiredSize": 1,
                                              "nodeRoleArn": "arn:aws:iam::111122223333:role/spot",
                                              "subnetIds": [], "status": "ACTIVE"}
    code, out = plan_with(tmp_path, facts, capsys)
    assert code == 0, out
    assert not [w for w in json.loads(out)["warnings"] if "placeholder" in w]


def test_facts_of_another_cluster_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = plan_with(tmp_path, {**recorded(StubEks()), "cluster": "prod-eks"}, capsys)
    assert code == 1 and "recorded from cluster 'prod-eks', but the stack adopts 'legacy-cas'" in err
