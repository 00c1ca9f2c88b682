"""Values AWS, EKS, the API server or Karpenter would refuse at apply time (or silently ignore), written as users
write them: each refused at plan time with the stack file, its line and the key path, or warned about with the
same when it is legal but almost surely not meant.

The expected line is checked against the file's text: the line must hold the key the path ends with (or its list
item).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.support import plan_config, stack_config
from tests.support.mutations import Mutation, both, refused, setitem

NET, CLU, KAR = "eks-karpenter:network", "eks-karpenter:cluster", "eks-karpenter:karpenter"
POOLS, CLASSES = "eks-karpenter:nodePools", "eks-karpenter:nodeClasses"
NTH, OBS = "eks-karpenter:nodeTerminationHandler", "eks-karpenter:observability"
NODEGROUP = "eks.amazonaws.com/nodegroup"
WORKSPACE = "arn:aws:aps:us-east-1:123456789012:workspace/ws-0123abcd-4567-89ef-0123-456789abcdef"
TOPIC = "arn:aws:sns:us-east-1:123456789012:platform-oncall"



def section(key: str, **fields: Any) -> Mutation:
    def apply(cfg: dict[str, Any]) -> None:
        cfg.setdefault(key, {}).update(fields)
    return apply


def first(key: str, **fields: Any) -> Mutation:
    """Update the first entry of a list section (`nodePools`, `nodeClasses`)."""
    def apply(cfg: dict[str, Any]) -> None:
        cfg[key][0].update(fields)
    return apply


def api_access(**fields: Any) -> Mutation:
    def apply(cfg: dict[str, Any]) -> None:
        cfg[CLU]["apiAccess"] = fields
    return apply


def disruption(**fields: Any) -> Mutation:
    def apply(cfg: dict[str, Any]) -> None:
        cfg[POOLS][0]["disruption"] = fields
    return apply


def root_volume(size: str, volume_type: str = "gp3") -> Mutation:
    def apply(cfg: dict[str, Any]) -> None:
        cfg[CLASSES][0]["blockDeviceMappings"][0]["ebs"].update(volumeSize=size, volumeType=volume_type)
    return apply


def spot_group_labels(labels: dict[str, str]) -> Mutation:
    def apply(cfg: dict[str, Any]) -> None:
        cfg[CLU]["spotNodeGroups"][0]["labels"] = labels
    return apply


def in_days(days: int) -> str:
    return (datetime.now(UTC).date() + timedelta(days=days)).strftime("v%Y%m%d")


BOTTLEROCKET = {"name": "default", "amiSelectorTerms": [{"alias": "bottlerocket@v1.50.0"}], "blockDeviceMappings": [
    {"deviceName": "/dev/xvda", "ebs": {"volumeSize": "4Gi", "volumeType": "gp3"}},
    {"deviceName": "/dev/xvdb", "rootVolume": True, "ebs": {"volumeSize": "10Gi", "volumeType": "gp3"}}]}
WEEKDAYS = [{"start": "08:00", "end": "18:00", "reasons": ["Underutilized", "Drifted"]}]

# (id, base stack, mutation, key path, message fragment)
REFUSED: list[tuple[str, str, Mutation, str, str]] = [
    # EC2 ids: 8 or 17 hex digits
    ("vpc-id-truncated", "brownfield", section(NET, vpcId="vpc-0a1b2c3d4e5f607"), f"{NET}.vpcId", "pattern"),
    ("subnet-term-id-15-digits", "dev", first(CLASSES, subnetSelectorTerms=[{"id": "subnet-0a1b2c3d4e5f600"}]),
     f"{CLASSES}[0].subnetSelectorTerms[0].id", "pattern"),
    ("ami-id-uppercase", "dev", first(CLASSES, amiFamily="AL2023", amiSelectorTerms=[{"id": "ami-0A1B2C3D4E5F60001"}]),
     f"{CLASSES}[0].amiSelectorTerms[0].id", "pattern"),
    ("api-access-sg-9-digits", "prod", api_access(securityGroupIds=["sg-0a1b2c3d4"]),
     f"{CLU}.apiAccess.securityGroupIds[0]", "pattern"),
    ("node-sg-id-12-digits", "brownfield", section(CLU, nodeSecurityGroupIds=["sg-0a1b2c3d4e5f"]),
     f"{CLU}.nodeSecurityGroupIds[0]", "pattern"),
    # ARNs the stack's own resources use: its region, partition and accounts
    ("alarm-topic-other-region", "prod", section(OBS, alarmTopicArn=TOPIC.replace("us-east-1", "eu-west-1")),
     f"{OBS}.alarmTopicArn", "SNS topic is in region eu-west-1, not the stack's region us-east-1"),
    ("amp-workspace-other-partition", "prod", section(OBS, metrics="ampScraper", monitorLabels={},
                                                      ampWorkspaceArn=WORKSPACE.replace("arn:aws:", "arn:aws-cn:")),
     f"{OBS}.ampWorkspaceArn", "partition aws-cn does not match"),
    ("alarm-topic-other-account", "prod", setitem("aws:allowedAccountIds", ["111122223333"]),
     f"{OBS}.alarmTopicArn", "account 123456789012 is not one of aws:allowedAccountIds"),
    # AMI alias releases: a real day, not later than today
    ("alias-impossible-date", "dev", first(CLASSES, amiSelectorTerms=[{"alias": "al2023@v20261331"}]),
     f"{CLASSES}[0].amiSelectorTerms[0].alias", "is not a date"),
    ("alias-february-30", "dev", first(CLASSES, amiSelectorTerms=[{"alias": "al2023@v20260230"}]),
     f"{CLASSES}[0].amiSelectorTerms[0].alias", "is not a date"),
    ("alias-future-release", "dev", first(CLASSES, amiSelectorTerms=[{"alias": f"al2023@{in_days(60)}"}]),
     f"{CLASSES}[0].amiSelectorTerms[0].alias", "dated after today"),
    # fields and enum values of a later Karpenter release than the stack selects
    ("balanced-on-1.13", "dev", both(section(KAR, version="1.13.1"), lambda c: c[POOLS][0]["disruption"].update(
        consolidationPolicy="Balanced")), f"{POOLS}[0].disruption.consolidationPolicy",
     "Karpenter 1.13.1's NodePool does not accept Balanced"),
    ("cpu-options-on-1.12", "dev", both(section(KAR, version="1.12.2"), first(CLASSES, cpuOptions={
        "nestedVirtualization": "enabled"})), f"{CLASSES}[0].cpuOptions",
     "has no spec.cpuOptions (it arrived in 1.13.1)"),
    ("connection-tracking-on-1.12", "dev", both(section(KAR, version="1.12.2"), first(CLASSES, connectionTracking={
        "tcpEstablishedTimeout": 3600})), f"{CLASSES}[0].connectionTracking", "has no spec.connectionTracking"),
    # add-on and chart versions that cannot exist
    ("kube-proxy-of-another-minor", "dev", section(CLU, addonVersions={"kube-proxy": "v1.33.4-eksbuild.3"}),
     f"{CLU}.addonVersions.kube-proxy", "must match the cluster's Kubernetes minor 1.35"),
    ("nth-app-version-as-chart", "dev", section(NTH, version="1.25.6"), f"{NTH}.version",
     "is an application version"),
    # sizes
    ("root-volume-below-snapshot", "dev", root_volume("8Gi"), f"{CLASSES}[0].blockDeviceMappings[0].ebs.volumeSize",
     "smaller than the 20 GiB snapshot the AL2023 AMI has on /dev/xvda"),
    ("bottlerocket-data-volume-below-snapshot", "dev", setitem(CLASSES, [BOTTLEROCKET]),
     f"{CLASSES}[0].blockDeviceMappings[1].ebs.volumeSize", "smaller than the 20 GiB snapshot"),
    ("gp3-above-16-tib", "dev", root_volume("20Ti"), f"{CLASSES}[0].blockDeviceMappings[0].ebs.volumeSize",
     "above the largest gp3 volume, 16 TiB"),
    ("st1-above-16-tib", "dev", root_volume("18000Gi", "st1"), f"{CLASSES}[0].blockDeviceMappings[0].ebs.volumeSize",
     "above the largest st1 volume"),
    ("pool-cpu-limit-below-smallest-node", "dev", first(POOLS, instanceSizes=["2xlarge", "4xlarge"], limits={
        "cpu": "4", "memory": "256Gi"}), f"{POOLS}[0].limits.cpu", "below the smallest instance the pool admits "
     "(8 vCPUs)"),
    ("pool-memory-limit-below-smallest-node", "dev", first(POOLS, instanceSizes=["2xlarge", "4xlarge"], limits={
        "cpu": "64", "memory": "8Gi"}), f"{POOLS}[0].limits.memory", "below the smallest instance the pool admits"),
    # placement and scheduling
    ("toleration-exists-with-value", "dev", section(KAR, tolerations=[
        {"key": "dedicated", "operator": "Exists", "value": "platform", "effect": "NoSchedule"}]),
     f"{KAR}.tolerations[0].value", "must be empty with operator: Exists"),
    ("toleration-no-key-equal", "dev", section(KAR, tolerations=[{"value": "true", "effect": "NoSchedule"}]),
     f"{KAR}.tolerations[0].operator", "must say operator: Exists"),
    ("controller-fargate-and-node-group", "brownfield", section(KAR, controllerOnFargate=True),
     f"{KAR}.nodeSelector.{NODEGROUP}", "controllerOnFargate: true runs it on Fargate"),
    ("controller-node-group-on-created-cluster", "dev", section(KAR, nodeSelector={NODEGROUP: "system"}),
     f"{KAR}.nodeSelector.{NODEGROUP}", "EKS names its managed node groups"),
    ("controller-label-no-system-node-carries", "dev", section(KAR, nodeSelector={"workload-class": "platform"}),
     f"{KAR}.nodeSelector.workload-class", "no node of the system node group, where the controller runs"),
    ("controller-on-spot-capacity-of-a-created-cluster", "dev", section(KAR, nodeSelector={
        "eks.amazonaws.com/capacityType": "SPOT"}), f"{KAR}.nodeSelector.eks.amazonaws.com/capacityType",
     "carry eks.amazonaws.com/capacityType: ON_DEMAND"),
    ("nth-queue-beside-spot-groups", "dev", setitem(NTH, {"enabled": True, "mode": "queue"}), f"{NTH}.mode",
     "spot managed node groups (cluster.spotNodeGroups: workshop-spot) get neither"),
    ("nth-selector-misses-a-spot-group", "dev", spot_group_labels({"workload": "batch"}),
     f"{NTH}.nodeSelector.lifecycle", "spot node group(s) workshop-spot"),
    ("nth-node-group-on-created-cluster", "dev", section(NTH, nodeSelector={NODEGROUP: "workshop-spot"}),
     f"{NTH}.nodeSelector.{NODEGROUP}", "EKS names its managed node groups"),
    # access to the API server
    ("api-access-open-on-protected", "prod", api_access(cidrs=["10.100.0.0/24", "0.0.0.0/0"]),
     f"{CLU}.apiAccess.cidrs[1]", "whole internet on tcp/443"),
    ("private-endpoint-public-source-only", "prod", api_access(cidrs=["81.2.69.142/32"]),
     f"{CLU}.apiAccess.cidrs", "every source is a public address"),
    # observability and windows
    ("queue-age-alarm-at-retention", "prod", section(OBS, queueOldestMessageSeconds=600),
     f"{OBS}.queueOldestMessageSeconds", "could never fire"),
    ("amp-workspace-with-prometheus-operator", "prod", section(OBS, ampWorkspaceArn=WORKSPACE),
     f"{OBS}.ampWorkspaceArn", "only applies with metrics: ampScraper"),
    ("time-zone-beside-utc-budgets-only", "dev", disruption(timeZone="Europe/Berlin", budgets=[
        {"nodes": "0", "schedule": "0 8 * * mon-fri", "duration": "10h"}]), f"{POOLS}[0].disruption.timeZone",
     "is ignored: budgets' `schedule` is UTC"),
    ("window-under-always-on-zero-budget", "dev", disruption(timeZone="Europe/Berlin", budgets=[{"nodes": "0"}],
                                                             windows=WEEKDAYS),
     f"{POOLS}[0].disruption.windows[0]", "has no effect: budgets[0]"),
]


def _found(text: str, path: str) -> list[tuple[int, str]]:
    pattern = re.compile(rf"^stacks/Pulumi\.bad\.yaml:(\d+): {re.escape(path)}: (.*)$")
    return [(int(m.group(1)), m.group(2)) for m in map(pattern.match, text.splitlines()) if m]


def _check_line(text: str, path: str, fragment: str, file_text: str) -> None:
    found = _found(text, path)
    assert found, f"no problem at {path} in:\n{text}"
    hits = [(line, msg) for line, msg in found if fragment in msg]
    assert hits, f"{fragment!r} not in {found}"
    line = hits[0][0]
    last = re.split(r"[.\[]", path.split(":", 1)[1])[-1]
    written = file_text.splitlines()[line - 1]
    # yaml.safe_dump writes a dotted label key as is (`eks.amazonaws.com/nodegroup: ...`): match its last part.
    assert last.rstrip("]") in written or last[:-1].isdigit() or written.lstrip().startswith("-"), (line, written)


@pytest.mark.parametrize(("base", "mutate", "path", "fragment"), [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED])
def test_refused_with_file_line_and_key(tmp_path: Path, base: str, mutate: Mutation, path: str,
                                        fragment: str) -> None:
    error, text = refused(tmp_path, base, mutate)
    _check_line(error, path, fragment, text)


WARNED: list[tuple[str, str, Mutation, str, str]] = [
    ("observability-off-with-settings", "dev", setitem(OBS, {"metrics": "ampScraper"}), f"{OBS}.metrics",
     "has no effect while enabled is false"),
    ("time-zone-abbreviation", "dev", disruption(timeZone="EST", windows=WEEKDAYS), f"{POOLS}[0].disruption.timeZone",
     "no daylight saving"),
    ("fixed-offset-zone", "dev", disruption(timeZone="Etc/GMT+5", windows=WEEKDAYS),
     f"{POOLS}[0].disruption.timeZone", "no daylight saving"),
    ("utc-schedule-beside-local-windows", "dev", disruption(timeZone="America/New_York", windows=WEEKDAYS, budgets=[
        {"nodes": "10%"}, {"nodes": "0", "schedule": "0 0 * * sat", "duration": "48h"}]),
     f"{POOLS}[0].disruption.budgets[1].schedule", "is UTC: timeZone (America/New_York) applies to windows only"),
    ("vpc-cni-of-another-era", "dev", section(CLU, addonVersions={"vpc-cni": "v1.12.6-eksbuild.2"}),
     f"{CLU}.addonVersions.vpc-cni", "a build of another era"),
    ("coredns-of-another-era", "dev", section(CLU, addonVersions={"coredns": "v1.8.7-eksbuild.10"}),
     f"{CLU}.addonVersions.coredns", "a build of another era"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("base", "mutate", "path", "fragment"), [c[1:] for c in WARNED], ids=[c[0] for c in WARNED])
def test_warned_with_file_line_and_key(tmp_path: Path, base: str, mutate: Mutation, path: str,
                                       fragment: str) -> None:
    cfg = stack_config(base)
    mutate(cfg)
    result = plan_config(cfg, tmp_path)
    assert result.error is None, result.error
    _check_line("\n".join(result.document.warnings), path, fragment,
                (tmp_path / "stacks" / "Pulumi.bad.yaml").read_text())


ACCEPTED: list[tuple[str, str, Mutation]] = [
    ("ids-of-8-digits", "brownfield", section(NET, vpcId="vpc-0a1b2c3d")),
    ("place-named-zone-no-warning", "dev", disruption(timeZone="Europe/Berlin", windows=WEEKDAYS)),
    ("balanced-on-1.14", "dev", lambda c: c[POOLS][0]["disruption"].update(consolidationPolicy="Balanced")),
    ("zero-limit-pauses-a-pool", "dev", first(POOLS, limits={"cpu": "0", "memory": "0"})),
    ("window-beside-a-scoped-zero-budget", "dev", disruption(timeZone="Europe/Berlin", windows=WEEKDAYS, budgets=[
        {"nodes": "0", "reasons": ["Empty"]}])),
    ("controller-selects-a-system-group-label", "dev", both(
        lambda c: c[CLU]["systemNodeGroup"].update(labels={"workload-class": "platform"}),
        section(KAR, nodeSelector={"workload-class": "platform", "topology.kubernetes.io/zone": "eu-west-1a"}))),
    ("nth-selects-the-eks-spot-label", "dev", both(spot_group_labels({"workload": "batch"}), section(
        NTH, nodeSelector={"eks.amazonaws.com/capacityType": "SPOT"}))),
]


@pytest.mark.slow
@pytest.mark.parametrize(("base", "mutate"), [c[1:] for c in ACCEPTED], ids=[c[0] for c in ACCEPTED])
def test_accepted_without_a_warning_at_the_key(tmp_path: Path, base: str, mutate: Mutation) -> None:
    cfg = stack_config(base)
    mutate(cfg)
    result = plan_config(cfg, tmp_path)
    assert result.error is None, result.error
    assert not any("daylight saving" in w or "another era" in w for w in result.document.warnings)
