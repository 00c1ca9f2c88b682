"""Bad stack files: one clean error naming the file and key path, and nothing registered."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from eks_karpenter import ConfigError

from tests.support import REPO, plan_config, stack_config

NET, CLU, KEY = "eks-karpenter:network", "eks-karpenter:cluster", "eks-karpenter"

Mutation = Callable[[dict[str, Any]], None]


def setv(path: str, value: Any) -> Mutation:
    """Set a dotted path (list indices as numbers) in a stack's config."""
    def apply(cfg: dict[str, Any]) -> None:
        key, *rest = path.split("|")
        target: Any = cfg.setdefault(key, {})
        parts = rest[0].split(".") if rest else []
        for part in parts[:-1]:
            target = target[int(part)] if part.isdigit() else target.setdefault(part, {})
        if parts:
            last = parts[-1]
            if last.isdigit():
                target[int(last)] = value
            else:
                target[last] = value
        else:
            cfg[key] = value
    return apply


def delete(path: str) -> Mutation:
    def apply(cfg: dict[str, Any]) -> None:
        key, sub = path.split("|")
        target = cfg[key]
        *parents, last = sub.split(".")
        for part in parents:
            target = target[part]
        del target[last]
    return apply


def arabic_indic(digits: str) -> str:
    return "".join(chr(0x660 + int(d)) for d in digits)


# (id, base stack, mutation, expected key path, expected message fragment)
CASES: list[tuple[str, str, Mutation, str, str]] = [
    ("unknown-top-key", "dev", setv("eks-karpenter:netwrok", {"a": 1}), "eks-karpenter:netwrok", "unknown key"),
    ("region-missing", "dev", lambda c: c.pop("aws:region"), "aws:region", "required"),
    ("network-typo", "dev", setv(f"{NET}|natGatways", "single"), f"{NET}.natGatways",
     "unknown key: did you mean `natGateways`?"),
    ("too-few-zones", "dev", setv(f"{NET}|availabilityZones", ["eu-west-1a"]), f"{NET}.availabilityZones",
     "at least 2"),
    ("too-many-zones", "dev", setv(f"{NET}|availabilityZones", [f"eu-west-1{c}" for c in "abcdefg"]),
     f"{NET}.availabilityZones", "at most 6"),
    ("zone-wrong-region", "dev", setv(f"{NET}|availabilityZones", ["eu-west-1a", "us-east-1b"]),
     f"{NET}.availabilityZones[1]", "not in the stack's region"),
    ("zone-duplicate", "dev", setv(f"{NET}|availabilityZones", ["eu-west-1a", "eu-west-1a"]),
     f"{NET}.availabilityZones", "unique"),
    ("zone-malformed", "dev", setv(f"{NET}|availabilityZones", ["eu-west-1a", "Zone B"]),
     f"{NET}.availabilityZones[1]", "pattern"),
    ("cidr-malformed", "dev", setv(f"{NET}|vpcCidr", "10.0.0.0/33"), f"{NET}.vpcCidr", "CIDR"),
    ("cidr-host-bits", "dev", setv(f"{NET}|vpcCidr", "10.0.0.1/16"), f"{NET}.vpcCidr", "CIDR"),
    ("cidr-too-small", "dev", setv(f"{NET}|vpcCidr", "10.0.0.0/24"), f"{NET}.vpcCidr", "/16 to /20"),
    ("nat-mode", "dev", setv(f"{NET}|natGateways", "two"), f"{NET}.natGateways", "'single' or 'perAz'"),
    ("network-not-object", "dev", setv(NET, "vpc-123"), NET, "valid dictionary"),
    # Zones default to three of the region's; us-west-1's usable zones differ per account, so there they are required.
    ("zones-missing-no-default", "dev", lambda c: (delete(f"{NET}|availabilityZones")(c),
                                                  c.__setitem__("aws:region", "us-west-1")),
     f"{NET}.availabilityZones", "required when creating a VPC in us-west-1"),
    ("cluster-name-twice", "dev", setv("eks-karpenter:clusterName", "other"), "eks-karpenter:clusterName",
     "disagrees with eks-karpenter:cluster name"),
    ("cluster-name-malformed", "dev", setv("eks-karpenter:clusterName", "bad name"), "eks-karpenter:clusterName",
     "pattern"),
    ("adopt-without-subnets", "brownfield", delete(f"{NET}|privateSubnetIds"), f"{NET}.privateSubnetIds",
     "required when adopting"),
    ("adopt-with-cidr", "brownfield", setv(f"{NET}|vpcCidr", "10.0.0.0/16"), f"{NET}.vpcCidr",
     "only applies when creating"),
    ("adopt-one-zone", "brownfield", setv(f"{NET}|privateSubnetIds", {"us-west-2a": "subnet-0a1b2c3d4e5f60001"}),
     f"{NET}.privateSubnetIds", "at least 2 zones"),
    ("adopt-bad-subnet-id", "brownfield", setv(f"{NET}|privateSubnetIds.us-west-2a", "sn-1"),
     f"{NET}.privateSubnetIds.us-west-2a", "pattern"),
    ("adopt-bad-vpc-id", "brownfield", setv(f"{NET}|vpcId", "vpc-XYZ"), f"{NET}.vpcId", "pattern"),
    ("adopt-duplicate-subnet", "brownfield", setv(f"{NET}|publicSubnetIds.us-west-2a", "subnet-0a1b2c3d4e5f60001"),
     NET, "listed twice"),
    ("create-with-subnet-ids", "dev", setv(f"{NET}|privateSubnetIds", {"eu-west-1a": "subnet-0a1b2c3d"}),
     f"{NET}.privateSubnetIds", "only applies when adopting"),
    ("network-reserved-tag", "dev", setv(f"{NET}|tags", {"karpenter.sh/discovery": "x"}),
     f"{NET}.tags.karpenter.sh/discovery", "reserved tag key"),
    ("stack-reserved-tag", "dev", setv("eks-karpenter:tags", {"kubernetes.io/cluster/x": "owned"}),
     "eks-karpenter:tags.kubernetes.io/cluster/x", "reserved tag key"),
    ("stack-owner-tag", "dev", setv("eks-karpenter:tags", {"eks-karpenter/stack": "o/p/s"}),
     "eks-karpenter:tags.eks-karpenter/stack", "reserved tag key"),
    ("tags-not-strings", "dev", setv("eks-karpenter:tags", {"team": ["a"]}), "eks-karpenter:tags.team",
     "valid string"),
    ("protect-not-bool", "dev", setv("eks-karpenter:protect", "maybe"), "eks-karpenter:protect", "boolean"),
    ("cluster-missing", "dev", lambda c: c.pop(CLU), CLU, "required"),
    ("cluster-name-missing", "dev", delete(f"{CLU}|name"), f"{CLU}.name", "required"),
    ("cluster-name-bad", "dev", setv(f"{CLU}|name", "-bad name"), f"{CLU}.name", "pattern"),
    ("cluster-name-long", "dev", setv(f"{CLU}|name", "a" * 77), f"{CLU}.name", "at most 76"),
    ("k8s-too-new", "dev", setv(f"{CLU}|version", "1.37"), f"{CLU}.version", "supports"),
    ("k8s-too-old", "dev", setv(f"{CLU}|version", "1.25"), f"{CLU}.version", "supports"),
    ("k8s-number", "dev", setv(f"{CLU}|version", 1.3), f"{CLU}.version", "valid string"),
    ("config-map-without-opt-in", "dev", setv(f"{CLU}|authenticationMode", "API_AND_CONFIG_MAP"),
     f"{CLU}.authenticationMode", "use API, the default"),
    ("config-map-only", "dev", setv(f"{CLU}|authenticationMode", "CONFIG_MAP"), f"{CLU}.authenticationMode",
     "'API' or 'API_AND_CONFIG_MAP'"),
    ("aws-auth-on-a-created-cluster", "dev", setv(f"{CLU}|awsAuthCompatibility", True),
     f"{CLU}.awsAuthCompatibility", "stops on a 401"),
    ("public-endpoint-no-cidrs", "dev", setv(f"{CLU}|publicAccessCidrs", []), f"{CLU}.publicAccessCidrs",
     "allow-list"),
    ("public-cidr-malformed", "dev", setv(f"{CLU}|publicAccessCidrs", ["203.0.113.0/33"]),
     f"{CLU}.publicAccessCidrs[0]", "CIDR"),
    ("no-endpoint", "prod", setv(f"{CLU}|endpointPrivateAccess", False), f"{CLU}.endpointPrivateAccess",
     "at least one"),
    ("prod-open-endpoint", "prod", lambda c: c[CLU].update(endpointPublicAccess=True,
                                                            publicAccessCidrs=["0.0.0.0/0"]),
     f"{CLU}.publicAccessCidrs", "may not be open"),
    ("prod-unencrypted", "prod", setv(f"{CLU}|secretsEncryption", False), f"{CLU}.secretsEncryption",
     "must encrypt"),
    ("bad-log-type", "dev", setv(f"{CLU}|logTypes", ["api", "kubelet"]), f"{CLU}.logTypes[1]", "'api'"),
    ("system-group-one-node", "dev", setv(f"{CLU}|systemNodeGroup.minSize", 1), f"{CLU}.systemNodeGroup.minSize",
     "greater than or equal to 2"),
    ("system-group-desired-above-max", "dev", setv(f"{CLU}|systemNodeGroup.desiredSize", 9),
     f"{CLU}.systemNodeGroup.desiredSize", "between minSize"),
    ("system-group-no-types", "dev", setv(f"{CLU}|systemNodeGroup.instanceTypes", []),
     f"{CLU}.systemNodeGroup.instanceTypes", "at least 1"),
    ("system-group-bad-type", "dev", setv(f"{CLU}|systemNodeGroup.instanceTypes", ["m7i-large"]),
     f"{CLU}.systemNodeGroup.instanceTypes[0]", "pattern"),
    ("spot-group-empty-types", "dev", setv(f"{CLU}|spotNodeGroups", [{"name": "spot", "instanceTypes": []}]),
     f"{CLU}.spotNodeGroups[0].instanceTypes", "at least one instance type"),
    ("spot-group-duplicate-name", "dev", setv(f"{CLU}|spotNodeGroups", [{"name": "a"}, {"name": "a"}]),
     f"{CLU}.spotNodeGroups[1].name", "unique"),
    ("spot-group-bad-taint", "dev", setv(f"{CLU}|spotNodeGroups", [
        {"name": "a", "taints": [{"key": "x", "effect": "NO_SCHEDULE"}]}]),
     f"{CLU}.spotNodeGroups[0].taints[0].effect", "'NoSchedule'"),
    ("pod-identity-on-fargate", "dev", setv("eks-karpenter:karpenter|controllerOnFargate", True),
     "eks-karpenter:karpenter.identity", "needs IRSA"),
    ("karpenter-version-v-prefix", "dev", setv("eks-karpenter:karpenter|version", "v1.14.1"),
     "eks-karpenter:karpenter.version", "no leading 'v'"),
    ("karpenter-version-too-old", "dev", setv("eks-karpenter:karpenter|version", "0.37.0"),
     "eks-karpenter:karpenter.version", "supports (its IAM policies, Helm values and CRDs are known for these "
     "only): 1.12.2, 1.13.1, 1.14.1"),
    ("karpenter-replicas-above-system-nodes", "dev", setv("eks-karpenter:karpenter|replicas", 3),
     "eks-karpenter:karpenter.replicas", "its own system node"),
    ("karpenter-identity-unknown", "dev", setv("eks-karpenter:karpenter|identity", "kiam"),
     "eks-karpenter:karpenter.identity", "'podIdentity' or 'irsa'"),
    ("karpenter-request-above-limit", "dev", setv("eks-karpenter:karpenter|resources", {
        "requests": {"cpu": "2", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}),
     "eks-karpenter:karpenter.resources.requests.cpu", "above the limit"),
    ("spot-group-without-handler", "dev", lambda c: c.__setitem__("eks-karpenter:nodeTerminationHandler",
                                                                  {"enabled": False}),
     f"{CLU}.spotNodeGroups", "without a node termination handler"),
    ("nth-on-karpenter-nodes", "dev", setv("eks-karpenter:nodeTerminationHandler|nodeSelector",
                                           {"karpenter.sh/capacity-type": "spot"}),
     "eks-karpenter:nodeTerminationHandler.nodeSelector.karpenter.sh/capacity-type", "fight over the same nodes"),
    ("nth-imds-without-selector", "dev", setv("eks-karpenter:nodeTerminationHandler|nodeSelector", {}),
     "eks-karpenter:nodeTerminationHandler.nodeSelector", "needs a node selector"),
    ("nth-mode-unknown", "dev", setv("eks-karpenter:nodeTerminationHandler|mode", "webhook"),
     "eks-karpenter:nodeTerminationHandler.mode", "'imds' or 'queue'"),
    ("interruption-not-bool", "dev", setv("eks-karpenter:interruption", {"enabled": "nope"}),
     "eks-karpenter:interruption.enabled", "valid boolean"),
    ("existing-with-version", "brownfield", setv(f"{CLU}|version", "1.33"), f"{CLU}.version",
     "does not apply to an existing cluster"),
    # Patterns are ASCII: Unicode digits (here Arabic-Indic) match `\d`, and no AWS or Kubernetes API takes them.
    ("kms-arn-arabic-indic-account", "dev",
     setv(f"{CLU}|kmsKeyArn", f"arn:aws:kms:eu-west-1:{arabic_indic('123456789012')}:key/x"),
     f"{CLU}.kmsKeyArn", "pattern"),
    ("pool-limit-arabic-indic-digits", "dev", setv("eks-karpenter:nodePools", [
        {"name": "default", "limits": {"cpu": arabic_indic("100")}}]),
     "eks-karpenter:nodePools[0].limits.cpu", "pattern"),
]


@pytest.mark.parametrize(("base", "mutate", "path", "fragment"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_invalid_config_is_one_clean_error(
    tmp_path: Path, base: str, mutate: Mutation, path: str, fragment: str
) -> None:
    cfg = stack_config(base)
    mutate(cfg)
    result = plan_config(cfg, tmp_path)
    assert isinstance(result.error, ConfigError), result.error
    message = str(result.error)
    # Every problem names its line (a missing key: the line of the object, or of `config:`, that lacks it).
    expected = re.compile(rf"stacks/Pulumi\.bad\.yaml:\d+: {re.escape(path)}: ")
    lines = [line for line in message.splitlines() if expected.match(line)]
    assert lines, f"no line matches {expected.pattern!r} in:\n{message}"
    assert any(fragment in line for line in lines), f"{fragment!r} not in {lines}"
    assert all("(got " in line for line in message.splitlines()[1:])
    assert result.document.resources == [], "a bad config must register nothing"


def test_at_least_thirty_cases() -> None:
    assert len(CASES) >= 30


def test_all_problems_are_listed_at_once(tmp_path: Path) -> None:
    cfg = stack_config("dev")
    cfg[NET]["natGateways"] = "two"
    cfg[CLU]["version"] = "1.99"
    cfg["eks-karpenter:tags"] = {"aws:foo": "x"}
    result = plan_config(cfg, tmp_path)
    assert isinstance(result.error, ConfigError)
    assert len(result.error.issues) == 3


@pytest.mark.slow
def test_cli_prints_only_the_error(tmp_path: Path) -> None:
    cfg = stack_config("dev")
    cfg[NET]["vpcCidr"] = "10.0.0.0/8"
    plan_config(cfg, tmp_path)  # writes the scratch project
    proc = subprocess.run([sys.executable, "-m", "infra", "plan", "--stack", "bad", "--program", str(tmp_path)],
                          cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    assert re.search(r"stacks/Pulumi\.bad\.yaml:\d+: eks-karpenter:network\.vpcCidr: ", proc.stderr)


def test_a_broken_section_does_not_trigger_rules_on_its_defaults(tmp_path: Path) -> None:
    cfg = stack_config("dev")
    cfg["eks-karpenter:nodeTerminationHandler"]["mode"] = "webhook"
    result = plan_config(cfg, tmp_path)
    assert isinstance(result.error, ConfigError)
    assert [i.path for i in result.error.issues] == [("eks-karpenter:nodeTerminationHandler", "mode")]


def test_a_quantity_beyond_decimal_range_is_a_clean_error(tmp_path: Path) -> None:
    # Matches the CRD's pattern, but no rule could compare it: refused at the key, never a traceback.
    config = stack_config("prod")
    config["eks-karpenter:nodePools"][0]["limits"]["cpu"] = "1e9999999"
    result = plan_config(config, tmp_path)
    assert isinstance(result.error, ConfigError)
    assert "eks-karpenter:nodePools[0].limits.cpu: not a Kubernetes quantity: the exponent is out of range" \
        in str(result.error)
    assert result.document.resources == []
