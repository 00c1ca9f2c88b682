"""The supported Karpenter releases (1.12.2, 1.13.1, 1.14.1): for each, the controller IAM policies, the
chart values and the CRDs this library renders, against that release's own upstream files; any other refused."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from eks_karpenter import versions
from eks_karpenter.arns import partition_of
from eks_karpenter.platform.iam.policy import PolicyScope, controller_policies, dns_suffix
from eks_karpenter.platform.karpenter.config import KarpenterConfig
from eks_karpenter.platform.karpenter.releases import omitted_values, release_of, upgrade_changes
from eks_karpenter.platform.karpenter.values import controller_values

from tests.platform.iam.test_iam_policy import CfnLoader, normalise
from tests.platform.karpenter.test_karpenter_values import CONFIGS, ENDPOINT, QUEUE
from tests.support import STACKS, UPSTREAM, plan_stack, requires_upstream
from tests.support.helm_keys import KARPENTER_CRD_OPEN_MAPS, KARPENTER_OPEN_MAPS, MISSING, lookup, undefined_keys
from tests.support.iam import all_actions

ACCOUNT = "111122223333"
VERSIONS = versions.KARPENTER_VERSIONS


def folder(version: str) -> Path:
    """A release's upstream files: today's pinned release in karpenter/, earlier ones in karpenter-<version>/."""
    return UPSTREAM / ("karpenter" if version == versions.KARPENTER_VERSION else f"karpenter-{version}")


def chart_values(version: str, chart: str = "karpenter") -> dict[str, Any]:
    return dict(yaml.safe_load((folder(version) / f"{chart}-chart-values.yaml").read_text()))


def template(version: str) -> dict[str, Any]:
    path = folder(version) / "karpenter-getting-started-cloudformation.yaml"
    loaded = yaml.load(path.read_text(), Loader=CfnLoader)  # a SafeLoader subclass: safe
    assert isinstance(loaded, dict)
    return loaded


def scope(version: str, region: str = "eu-west-1", zonal_shift: bool | None = None) -> PolicyScope:
    partition = partition_of(region)
    return PolicyScope(
        cluster_name="prod-eu", region=region, account_id=ACCOUNT,
        node_role_arn=f"arn:{partition}:iam::{ACCOUNT}:role/KarpenterNodeRole-prod-eu",
        interruption_queue_arn=f"arn:{partition}:sqs:{region}:{ACCOUNT}:prod-eu",
        zonal_shift=release_of(version).zonal_shift_policy if zonal_shift is None else zonal_shift,
        karpenter_version=version)


def upstream_policies(version: str, s: PolicyScope) -> dict[str, dict[str, Any]]:
    values = {"ClusterName": s.cluster_name, "AWS::Partition": s.partition, "AWS::Region": s.region,
              "AWS::AccountId": s.account_id, "AWS::URLSuffix": dns_suffix(s.partition),
              "KarpenterNodeRole.Arn": s.node_role_arn, "KarpenterInterruptionQueue.Arn": s.interruption_queue_arn}
    return {
        logical.removesuffix("Policy"): json.loads(re.sub(r"\$\{([^}]+)\}", lambda m: str(values[m[1]]),
                                                          resource["Properties"]["PolicyDocument"]))
        for logical, resource in template(version)["Resources"].items()
        if resource["Type"] == "AWS::IAM::ManagedPolicy"
    }


def values_for(version: str, raw: dict[str, Any], arn: str | None) -> dict[str, Any]:
    return controller_values(KarpenterConfig.model_validate({**raw, "version": version}), cluster_name="eks-prod",
                             cluster_endpoint=ENDPOINT, interruption_queue_name=QUEUE, irsa_role_arn=arn)


def configs_for(version: str) -> dict[str, tuple[dict[str, Any], str | None]]:
    """The values tests' configs, less what the release cannot honour (the config rules refuse those)."""
    release = release_of(version)
    out = {}
    for name, (raw, arn) in CONFIGS.items():
        raw = json.loads(json.dumps(raw))
        if not release.zonal_shift_policy and raw.get("zonalShift"):
            continue
        if not release.refresh_intervals:
            for key in ("amiRefreshInterval", "subnetRefreshInterval"):
                raw.get("settings", {}).pop(key, None)
        if not release.capacity_buffer:
            raw.get("featureGates", {}).pop("capacityBuffer", None)
        out[name] = (raw, arn)
    return out


# --- the table against each release's files ---------------------------------------------------------------------

def test_the_table_lists_the_supported_releases_oldest_first() -> None:
    assert VERSIONS == ("1.12.2", "1.13.1", "1.14.1")
    assert versions.KARPENTER_VERSION in VERSIONS
    assert [tuple(int(p) for p in v.split(".")) for v in VERSIONS] == sorted(
        tuple(int(p) for p in v.split(".")) for v in VERSIONS)
    for release in versions.KARPENTER_RELEASES.values():
        low, high = release.kubernetes
        assert low in ("1.26",) and high in versions.SUPPORTED_KUBERNETES_VERSIONS, release.version


def test_an_unknown_release_is_refused_with_the_supported_list() -> None:
    with pytest.raises(ValueError, match=r"Karpenter 1\.11\.0 is not supported; supported releases: 1\.12\.2, "
                                         r"1\.13\.1, 1\.14\.1"):
        release_of("1.11.0")
    with pytest.raises(ValueError, match="supported releases"):
        scope("1.15.0")
    with pytest.raises(ValueError, match=r"1\.12\.2 grants no zonal-shift permission"):
        scope("1.12.2", zonal_shift=True)


@requires_upstream
@pytest.mark.parametrize("version", VERSIONS)
def test_the_release_folder_is_that_release(version: str) -> None:
    for chart in ("karpenter", "karpenter-crd"):
        meta = yaml.safe_load((folder(version) / f"{chart}-Chart.yaml").read_text())
        assert (meta["name"], meta["version"], meta["appVersion"]) == (chart, version, version)
    assert chart_values(version)["controller"]["image"]["tag"] == version


@requires_upstream
@pytest.mark.parametrize("version", VERSIONS)
def test_the_table_flags_are_read_off_the_release_files(version: str) -> None:
    release = release_of(version)
    resources = template(version)["Resources"]
    assert release.zonal_shift_policy == ("ZonalShiftPolicy" in resources)
    theirs = all_actions(upstream_policies(version, scope(version)).values())
    assert release.describe_instance_status == ("ec2:DescribeInstanceStatus" in theirs)
    settings = chart_values(version)["settings"]
    assert release.refresh_intervals == ("amiRefreshInterval" in settings) == ("subnetRefreshInterval" in settings)
    assert release.capacity_buffer == ("capacityBuffer" in settings["featureGates"])


# --- IAM ---------------------------------------------------------------------------------------------------------

@requires_upstream
@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("region", ["eu-west-1", "cn-north-1", "us-gov-west-1"])
def test_controller_policies_equal_the_releases_template(version: str, region: str) -> None:
    s = scope(version, region)
    ours, theirs = controller_policies(s), upstream_policies(version, s)
    assert sorted(ours) == sorted(theirs)
    for name in theirs:
        mine, upstream = ours[name]["Statement"], theirs[name]["Statement"]
        assert [normalise(x) for x in mine] == [normalise(x) for x in upstream], (version, name)


# --- values ------------------------------------------------------------------------------------------------------

@requires_upstream
@pytest.mark.parametrize("version", VERSIONS)
def test_every_rendered_values_key_exists_in_the_releases_chart(version: str) -> None:
    chart = chart_values(version)
    for name, (raw, arn) in configs_for(version).items():
        assert undefined_keys(values_for(version, raw, arn), chart, KARPENTER_OPEN_MAPS) == [], (version, name)
    crd_chart = chart_values(version, "karpenter-crd")
    from eks_karpenter.platform.karpenter.values import crd_values
    assert undefined_keys(crd_values(), crd_chart, KARPENTER_CRD_OPEN_MAPS) == []


@requires_upstream
@pytest.mark.parametrize("version", VERSIONS)
def test_keys_left_out_for_a_release_are_exactly_those_its_chart_lacks(version: str) -> None:
    chart, newest = chart_values(version), chart_values(versions.KARPENTER_VERSION)
    rendered = values_for(version, {}, None)
    for dotted in omitted_values(release_of(version)):
        assert lookup(chart, dotted) is MISSING and lookup(newest, dotted) is not MISSING, dotted
        assert lookup(rendered, dotted) is MISSING, dotted
    # ... and every settings key the chart has and the default config renders is rendered with the chart's default
    for key, value in rendered["settings"].items():
        if key not in ("clusterName", "clusterEndpoint", "interruptionQueue"):
            assert chart["settings"][key] == value, (version, key)


def test_the_1_12_values_have_no_refresh_settings_nor_capacity_buffer_gate() -> None:
    settings = values_for("1.12.2", {}, None)["settings"]
    assert "amiRefreshInterval" not in settings and "subnetRefreshInterval" not in settings
    assert "capacityBuffer" not in settings["featureGates"]
    newest = values_for("1.14.1", {}, None)["settings"]
    assert newest["amiRefreshInterval"] == "1m" and newest["featureGates"]["capacityBuffer"] is False
    assert "capacityBuffer" not in values_for("1.13.1", {}, None)["settings"]["featureGates"]


# --- CRDs --------------------------------------------------------------------------------------------------------

@requires_upstream
@pytest.mark.parametrize("version", VERSIONS)
def test_the_releases_crd_files_are_in_its_crd_list(version: str) -> None:
    names = {yaml.safe_load(p.read_text())["metadata"]["name"] for p in folder(version).glob("karpenter.*_*.yaml")}
    assert len(names) == 3 and names <= set(release_of(version).crds)


@requires_upstream
def test_the_pinned_releases_crd_list_is_its_crd_charts() -> None:
    templates = UPSTREAM / "charts" / "karpenter-crd" / "templates"
    # Helm templates, not plain YAML: the CRD's name is metadata's first `name:`.
    names = {re.search(r"(?m)^metadata:\n(?:  .*\n)*?  name: ([a-z0-9.-]+)$", p.read_text())[1]  # type: ignore[index]
             for p in templates.glob("*_*.yaml")}
    assert set(release_of(versions.KARPENTER_VERSION).crds) == names


@requires_upstream
@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("stack", STACKS)
def test_every_stack_object_passes_each_releases_crds(version: str, stack: str) -> None:
    from tests.support.crd_validator import validate_object

    for kind in ("kubernetes:karpenter.sh/v1:NodePool", "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"):
        for r in plan_stack(stack).by_type(kind):
            obj = {k: r.inputs[k] for k in ("apiVersion", "kind", "metadata", "spec")}
            assert validate_object(obj, folder(version)) == [], (version, r.name)


# --- what an upgrade changes -------------------------------------------------------------------------------------

def test_upgrade_changes_name_iam_values_and_crds() -> None:
    up = upgrade_changes("1.12.2", "1.14.1", zonal_shift=True)
    assert up.iam_added == ("arc-zonal-shift:GetManagedResource", "ec2:DescribeInstanceStatus")
    assert up.values_added == ("settings.amiRefreshInterval", "settings.featureGates.capacityBuffer",
                               "settings.subnetRefreshInterval")
    assert up.crds_added == ("capacitybuffers.autoscaling.x-k8s.io",)
    assert up.iam_removed == up.values_removed == up.crds_removed == ()
    lines = up.lines()
    assert lines[0].startswith("IAM actions: + arc-zonal-shift:GetManagedResource")
    assert any("karpenter-crd release is upgraded first" in line for line in lines)
    down = upgrade_changes("1.14.1", "1.13.1")
    assert down.values_removed == ("settings.featureGates.capacityBuffer",)
    assert down.crds_removed == ("capacitybuffers.autoscaling.x-k8s.io",) and down.iam_removed == ()
    assert upgrade_changes("1.13.1", "1.13.1").lines() == []
    assert upgrade_changes("1.12.2", "1.13.1").iam_added == ("ec2:DescribeInstanceStatus",)
