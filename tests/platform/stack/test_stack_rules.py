"""Cross-field rules, each refused with the stack file, the line and the key path.

The expected line is checked against the file's text (the line must hold the key, or the list item, the path
ends with), not against the reader's own bookkeeping.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.support import config_models, plan_config, stack_config
from tests.support.mutations import Mutation, both, refused, setitem

NET, CLU, KAR = "eks-karpenter:network", "eks-karpenter:cluster", "eks-karpenter:karpenter"
POOLS, CLASSES, TAGS = "eks-karpenter:nodePools", "eks-karpenter:nodeClasses", "eks-karpenter:tags"
KMS_EAST = "arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab"



def pool(**fields: Any) -> Mutation:
    def apply(cfg: dict[str, Any]) -> None:
        cfg[POOLS][0].update(fields)
    return apply


def cluster(**fields: Any) -> Mutation:
    def apply(cfg: dict[str, Any]) -> None:
        cfg[CLU].update(fields)
    return apply


def system_group(**fields: Any) -> Mutation:
    def apply(cfg: dict[str, Any]) -> None:
        cfg[CLU].setdefault("systemNodeGroup", {}).update(fields)
    return apply


def ebs_key(key: str) -> Mutation:
    def apply(cfg: dict[str, Any]) -> None:
        cfg[CLASSES][0]["blockDeviceMappings"][0]["ebs"]["kmsKeyID"] = key
    return apply


def adopt_into_new_vpc(cfg: dict[str, Any]) -> None:
    cfg[NET] = {"availabilityZones": ["us-west-2a", "us-west-2b"], "vpcCidr": "10.40.0.0/16"}


def ssm_arm64_class(cfg: dict[str, Any]) -> None:
    cfg[CLASSES][0]["amiSelectorTerms"] = [
        {"ssmParameter": "/aws/service/eks/optimized-ami/1.34/amazon-linux-2023/arm64/standard/recommended/image_id"}]
    cfg[CLASSES][0]["amiFamily"] = "AL2023"


# (id, base stack, mutation, key path, message fragment)
REFUSED: list[tuple[str, str, Mutation, str, str]] = [
    # architecture vs instance families vs AMI
    ("arm64-ami-type-x86-types", "prod", system_group(amiType="AL2023_ARM_64_STANDARD"),
     f"{CLU}.systemNodeGroup.instanceTypes[0]", "m7i.xlarge is amd64, but amiType AL2023_ARM_64_STANDARD is arm64"),
    ("bottlerocket-arm-x86-types", "dev", system_group(amiType="BOTTLEROCKET_ARM_64"),
     f"{CLU}.systemNodeGroup.instanceTypes[1]", "m6i.large is amd64"),
    ("x86-ami-type-graviton-types", "dev", system_group(instanceTypes=["m7g.large"]),
     f"{CLU}.systemNodeGroup.instanceTypes[0]", "m7g.large is arm64"),
    ("spot-group-mixed-arch", "dev", lambda c: c[CLU]["spotNodeGroups"][0].update(
        instanceTypes=["m6g.large", "m7g.large", "m5.large"], amiType="AL2023_ARM_64_STANDARD"),
     f"{CLU}.spotNodeGroups[0].instanceTypes[2]", "one architecture per node group"),
    ("arm64-pool-x86-families", "prod", lambda c: c[POOLS][2].update(instanceFamilies=["c7g", "c5", "m5"]),
     f"{POOLS}[2].instanceFamilies[1]", "c5 is amd64 only, but the pool allows arm64 (arch)"),
    ("amd64-pool-graviton-types", "dev", pool(instanceTypes=["m7g.large"], instanceCategories=None,
                                              minGeneration=None),
     f"{POOLS}[0].instanceTypes[0]", "m7g is arm64 only, but the pool allows amd64"),
    ("requirement-family-wrong-arch", "dev", pool(requirements=[
        {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["c6g"]}]),
     f"{POOLS}[0].requirements[0].values[0]", "c6g is arm64 only"),
    ("arm64-ami-amd64-pool", "dev", ssm_arm64_class, f"{POOLS}[0].arch",
     "selects only arm64 AMIs (amiSelectorTerms), so amd64 nodes could not boot"),
    # regions, partitions, accounts, KMS
    ("kms-other-region", "prod", cluster(kmsKeyArn=KMS_EAST.replace("us-east-1", "eu-west-1")),
     f"{CLU}.kmsKeyArn", "KMS key is in region eu-west-1, not the stack's region us-east-1"),
    ("kms-other-partition", "prod", cluster(kmsKeyArn=KMS_EAST.replace("arn:aws:", "arn:aws-cn:")),
     f"{CLU}.kmsKeyArn", "partition aws-cn does not match"),
    ("kms-other-account", "prod", both(cluster(kmsKeyArn=KMS_EAST),
                                       setitem("aws:allowedAccountIds", ["444455556666"])),
     f"{CLU}.kmsKeyArn", "account 111122223333 is not one of aws:allowedAccountIds"),
    ("ebs-kms-other-region", "prod", ebs_key(KMS_EAST.replace("us-east-1", "us-west-2")),
     f"{CLASSES}[0].blockDeviceMappings[0].ebs.kmsKeyID", "not the stack's region"),
    ("ebs-kms-not-kms", "prod", ebs_key("arn:aws:s3:::bucket"),
     f"{CLASSES}[0].blockDeviceMappings[0].ebs.kmsKeyID", "not a kms ARN"),
    ("ebs-kms-malformed", "prod", ebs_key("arn:aws:kms:us-east-1:key/abc"),
     f"{CLASSES}[0].blockDeviceMappings[0].ebs.kmsKeyID", "not an ARN"),
    ("ebs-kms-garbage", "prod", ebs_key("my key"), f"{CLASSES}[0].blockDeviceMappings[0].ebs.kmsKeyID",
     "a KMS key ARN, key id or alias"),
    ("policy-other-partition", "dev", lambda c: c[KAR].update(nodeRole={"additionalPolicyArns": [
        "arn:aws-us-gov:iam::aws:policy/AmazonS3ReadOnlyAccess"]}),
     f"{KAR}.nodeRole.additionalPolicyArns[0]", "partition aws-us-gov does not match"),
    ("accounts-unquoted", "prod", setitem("aws:allowedAccountIds", [123456789012]),
     "aws:allowedAccountIds[0]", "quote account ids"),
    ("region-malformed", "dev", setitem("aws:region", "eu-west"), "aws:region",
     "not an AWS region: did you mean `eu-west-"),
    ("region-not-a-string", "dev", setitem("aws:region", ["eu-west-1"]), "aws:region", "not an AWS region"),
    # tags
    ("tag-value-too-long", "dev", lambda c: c[TAGS].update(team="x" * 257), f"{TAGS}.team", "at most 256"),
    ("tag-key-too-long", "dev", lambda c: c[TAGS].update({"k" * 129: "x"}), f"{TAGS}.{'k' * 129}", "at most 128"),
    ("tag-key-empty", "dev", lambda c: c[TAGS].update({"": "x"}), f'{TAGS}[""]', "at least 1 character"),
    ("tag-bad-character", "dev", lambda c: c[TAGS].update(team="a,b"), f"{TAGS}.team", "may only hold"),
    ("network-tag-too-long", "dev", lambda c: c[NET].update(tags={"a": "v" * 300}), f"{NET}.tags.a",
     "at most 256"),
    ("node-class-tag-too-long", "prod", lambda c: c[CLASSES][0]["tags"].update(backup="v" * 300),
     f"{CLASSES}[0].tags.backup", "at most 256"),
    # limits and quantities
    ("limits-cpus", "dev", pool(limits={"cpus": 100}), f"{POOLS}[0].limits.cpus",
     "not a resource a limit can cap: did you mean `cpu`?"),
    ("limits-gpu-unqualified", "dev", pool(limits={"cpu": "10", "gpu": 4}), f"{POOLS}[0].limits.gpu",
     "not a resource a limit can cap"),
    ("limits-storage", "dev", pool(limits={"cpu": "10", "storage": "1Ti"}), f"{POOLS}[0].limits.storage",
     "not a resource a limit can cap"),
    ("limits-memory-without-unit", "dev", pool(limits={"cpu": "10", "memory": 1000}), f"{POOLS}[0].limits.memory",
     "memory without a unit is a number of bytes"),
    ("kubelet-reserved-without-unit", "dev", lambda c: c[CLASSES][0].update(kubelet={
        "systemReserved": {"memory": "100"}}), f"{CLASSES}[0].kubelet.systemReserved.memory", "without a unit"),
    ("eviction-without-unit", "dev", lambda c: c[CLASSES][0].update(kubelet={
        "evictionHard": {"memory.available": "500"}}), f"{CLASSES}[0].kubelet.evictionHard.memory.available",
     "without a unit"),
    ("controller-memory-without-unit", "dev", lambda c: c[KAR].update(resources={
        "requests": {"cpu": "1", "memory": "1024"}, "limits": {"cpu": "1", "memory": "1Gi"}}),
     f"{KAR}.resources.requests.memory", "without a unit"),
    # instance categories
    ("category-unknown", "dev", pool(instanceCategories=["c", "compute"]), f"{POOLS}[0].instanceCategories[1]",
     "no EC2 instance category has this name"),
    ("category-typo", "dev", pool(instanceCategories=["c", "mm"]), f"{POOLS}[0].instanceCategories[1]",
     "did you mean `m`?"),
    ("category-requirement", "dev", pool(instanceCategories=None, requirements=[
        {"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["q"]}]),
     f"{POOLS}[0].requirements[0].values[0]", "no EC2 instance category"),
    # adoption vs creation
    ("existing-cluster-new-vpc", "brownfield", adopt_into_new_vpc, f"{NET}.vpcId",
     "the cluster is adopted (eks-karpenter:cluster.existing)"),
]


def _check_line(message: str, path: str, fragment: str, text: str) -> None:
    pattern = re.compile(rf"^stacks/Pulumi\.bad\.yaml:(\d+): {re.escape(path)}: (.*)$")
    found = [(int(m.group(1)), m.group(2)) for m in map(pattern.match, message.splitlines()) if m]
    assert found, f"no problem at {path} in:\n{message}"
    hits = [(line, msg) for line, msg in found if fragment in msg]
    assert hits, f"{fragment!r} not in {found}"
    line = hits[0][0]
    # The line holds the last key of the path, or its list item; a missing key points at its parent's line.
    *_, parent, last = ["", *re.split(r"[.\[]", path.split(":", 1)[1])]
    written = text.splitlines()[line - 1]
    key = "''" if last == '""]' else last.rstrip("]")  # yaml.safe_dump writes an empty key as ? ''
    assert key in written or last[:-1].isdigit() or written.lstrip().startswith("-") or (
        "(got nothing)" in hits[0][1] and parent.rstrip("]") in written), (line, written)


@pytest.mark.parametrize(("base", "mutate", "path", "fragment"), [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED])
def test_refused_with_file_line_and_key(tmp_path: Path, base: str, mutate: Mutation, path: str,
                                        fragment: str) -> None:
    error, text = refused(tmp_path, base, mutate)
    _check_line(error, path, fragment, text)


ACCEPTED: list[tuple[str, str, Mutation]] = [
    ("limits-extended-resources", "dev", pool(limits={"cpu": "10", "memory": "0", "nvidia.com/gpu": 4,
                                                      "hugepages-2Mi": "1Gi", "pods": 100, "nodes": 10})),
    ("categories-known", "dev", pool(instanceCategories=["c", "hpc", "trn", "inf"])),
    ("multi-arch-pool-both-families", "dev", pool(arch=["amd64", "arm64"], instanceFamilies=["m7g", "m7i"],
                                                  instanceCategories=None)),
    ("arm64-ami-type-graviton", "dev", system_group(amiType="AL2023_ARM_64_STANDARD",
                                                    instanceTypes=["m7g.large", "m6g.large"])),
    ("kms-same-region-allowed-account", "prod", both(
        cluster(kmsKeyArn=KMS_EAST), setitem("aws:allowedAccountIds", ["111122223333", "123456789012"]))),
    ("ebs-kms-alias-and-id", "prod", ebs_key("alias/ebs")),
    ("aws-managed-policy", "dev", lambda c: c[KAR].update(nodeRole={"additionalPolicyArns": [
        "arn:aws:iam::aws:policy/AmazonS3ReadOnlyAccess"]})),
    ("tags-at-the-limits", "dev", lambda c: c[TAGS].update({"k" * 128: "v" * 256, "a b:c/d=e+f-g@h_i.j": ""})),
    ("unicode-tag", "dev", lambda c: c[TAGS].update(équipe="données")),
]


@pytest.mark.slow
@pytest.mark.parametrize(("base", "mutate"), [c[1:] for c in ACCEPTED], ids=[c[0] for c in ACCEPTED])
def test_accepted(tmp_path: Path, base: str, mutate: Mutation) -> None:
    cfg = stack_config(base)
    mutate(cfg)
    result = plan_config(cfg, tmp_path)
    assert result.error is None, result.error


def test_each_models_defaults_are_what_validating_it_empty_gives() -> None:
    # A section the stack file leaves out takes `defaults()`, built without validation: it must be the same model.
    checked = 0
    for model in config_models():
        if any(field.is_required() for field in model.__pydantic_fields__.values()):
            with pytest.raises(TypeError, match="has no defaults"):
                model.defaults()
            continue
        built, validated = model.defaults(), model()
        assert built == validated, model.__qualname__
        assert built.model_fields_set == validated.model_fields_set == set(), model.__qualname__
        assert built.model_dump() == validated.model_dump(), model.__qualname__
        checked += 1
    assert checked >= 20
