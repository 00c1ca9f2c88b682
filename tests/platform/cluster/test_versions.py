"""Kubernetes version and support cost: the EKS support calendar,
the upgrade policy, and the pins that must match the chosen version."""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from eks_karpenter import versions
from eks_karpenter.config.errors import ConfigError
from eks_karpenter.platform.stack import load_stack_config

from tests.support import plan_config, plan_stack, stack_config

CLU = "eks-karpenter:cluster"
CLASSES = "eks-karpenter:nodeClasses"
TODAY = date(2026, 11, 23)


def flat(config: dict[str, Any]) -> dict[str, str]:
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in config.items()}


def problems(config: dict[str, Any], today: date = TODAY) -> list[str]:
    try:
        load_stack_config(flat(config), "stacks/Pulumi.x.yaml", today=today)
    except ConfigError as err:
        return str(err).splitlines()[1:]
    return []


def refused_at(config: dict[str, Any], path: str, fragment: str, today: date = TODAY) -> None:
    lines = [line for line in problems(config, today) if line.startswith(f"stacks/Pulumi.x.yaml: {path}: ")]
    assert lines and any(fragment in line for line in lines), problems(config, today)


def dev(**cluster: Any) -> dict[str, Any]:
    config = stack_config("dev")
    config[CLU].update(cluster)
    return config


# --- the table ---------------------------------------------------------------------------------------------------

def test_every_supported_version_has_support_dates_and_addon_pins() -> None:
    assert set(versions.EKS_KUBERNETES_SUPPORT) == set(versions.SUPPORTED_KUBERNETES_VERSIONS)
    assert set(versions.ADDON_VERSIONS) >= set(versions.SUPPORTED_KUBERNETES_VERSIONS)
    assert date.today() >= versions.EKS_KUBERNETES_SUPPORT_COMPILED
    for v, s in versions.EKS_KUBERNETES_SUPPORT.items():
        # 14 months of standard support after the EKS release, 12 months of extended support after that.
        months = (s.end_of_standard.year - s.released.year) * 12 + s.end_of_standard.month - s.released.month
        assert months == 14 and s.end_of_standard.day == s.released.day, v
        assert s.end_of_extended == s.end_of_standard.replace(year=s.end_of_standard.year + 1), v
        assert versions.ADDON_VERSIONS[v]["kube-proxy"].startswith(f"v{v}."), v


def test_the_default_version_is_in_standard_support_when_the_table_was_compiled() -> None:
    s = versions.EKS_KUBERNETES_SUPPORT[versions.KUBERNETES_VERSION]
    assert s.released <= versions.EKS_KUBERNETES_SUPPORT_COMPILED <= s.end_of_standard


# --- support dates -----------------------------------------------------------------------------------------------

def test_a_version_past_end_of_extended_support_is_refused() -> None:
    refused_at(dev(version="1.29"), f"{CLU}.version", "end of EKS extended support on 2026-03-23")
    # ... even with the opt-in: EKS no longer runs it.
    refused_at(dev(version="1.29", upgradePolicy={"supportType": "EXTENDED"}), f"{CLU}.version",
               "end of EKS extended support")


def test_a_version_past_standard_support_is_never_refused() -> None:
    # The running cluster may need an emergency change today: a warning (below), not a refusal.
    end = versions.EKS_KUBERNETES_SUPPORT["1.34"].end_of_standard
    assert problems(dev(version="1.34"), today=end + timedelta(days=1)) == []
    assert problems(dev(version="1.33")) == []
    assert problems(dev(version="1.33", upgradePolicy={"supportType": "EXTENDED"})) == []


def test_past_standard_support_warns_that_eks_may_upgrade_it_and_refresh_comes_first() -> None:
    from eks_karpenter.platform.cluster.config import ClusterConfig
    from eks_karpenter.platform.cluster.rules import version_warnings

    s = versions.EKS_KUBERNETES_SUPPORT["1.34"]
    (warning,) = version_warnings(ClusterConfig(name="c", version="1.34"), s.end_of_standard + timedelta(days=1))
    assert "left EKS standard support on 2026-12-02" in warning
    assert "EKS may upgrade the control plane" in warning and "`pulumi refresh` first" in warning
    assert "upgradePolicy.supportType: EXTENDED" in warning


def test_version_rules_do_not_apply_to_an_existing_cluster() -> None:
    assert problems(stack_config("brownfield"), today=date(2040, 1, 1)) == []


# --- pins that must match the version ----------------------------------------------------------------------------

def test_an_al2_node_group_ami_type_on_a_version_without_al2_amis_is_refused() -> None:
    config = dev(version="1.33", upgradePolicy={"supportType": "EXTENDED"})
    config[CLU]["systemNodeGroup"]["amiType"] = "AL2_x86_64"
    config[CLU]["spotNodeGroups"][0]["amiType"] = "AL2_x86_64"
    refused_at(config, f"{CLU}.systemNodeGroup.amiType", "no Amazon Linux 2 AMIs for Kubernetes 1.33")
    refused_at(config, f"{CLU}.spotNodeGroups[0].amiType", "no Amazon Linux 2 AMIs")
    config[CLU]["version"] = "1.32"
    assert problems(config) == []


def test_an_al2_alias_on_a_version_without_al2_amis_is_refused() -> None:
    config = dev()
    config[CLASSES][0]["amiSelectorTerms"] = [{"alias": "al2@v20250801"}]
    refused_at(config, f"{CLASSES}[0].amiSelectorTerms[0].alias", "no Amazon Linux 2 AMIs for Kubernetes 1.35")


def test_an_al2_family_with_selector_terms_on_a_version_without_al2_amis_is_refused() -> None:
    config = dev()
    config[CLASSES][0].update(amiFamily="AL2", amiSelectorTerms=[{"id": "ami-0123456789abcdef0"}])
    refused_at(config, f"{CLASSES}[0].amiFamily", "no Amazon Linux 2 AMIs")


def test_an_ami_release_older_than_the_version_is_refused() -> None:
    config = dev(version="1.34")
    config[CLASSES][0]["amiSelectorTerms"] = [{"alias": "al2023@v20250601"}]
    refused_at(config, f"{CLASSES}[0].amiSelectorTerms[0].alias", "predates Kubernetes 1.34 on EKS (2025-10-02)")
    config[CLASSES][0]["amiSelectorTerms"] = [{"alias": "al2023@v20251015"}]
    assert problems(config) == []


def test_a_kube_proxy_pin_of_another_minor_is_refused() -> None:
    config = dev(addonVersions={"kube-proxy": "v1.33.4-eksbuild.3"})
    refused_at(config, f"{CLU}.addonVersions.kube-proxy", "match the cluster's Kubernetes minor 1.35")


# --- the plan ------------------------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_cluster_sets_its_upgrade_policy_explicitly(stack: str) -> None:
    (cluster,) = plan_stack(stack).by_type("eks:index:Cluster")
    assert cluster.inputs["upgradePolicy"] == {"supportType": "STANDARD"}


@pytest.mark.slow
def test_opting_in_to_extended_support_reaches_the_cluster(tmp_path: Path) -> None:
    config = dev(upgradePolicy={"supportType": "EXTENDED"})
    (cluster,) = plan_config(config, tmp_path).document.by_type("eks:index:Cluster")
    assert cluster.inputs["upgradePolicy"] == {"supportType": "EXTENDED"}


def test_an_out_of_support_version_registers_nothing(tmp_path: Path) -> None:
    result = plan_config(dev(version="1.29"), tmp_path)
    assert isinstance(result.error, ConfigError)
    written = (tmp_path / "stacks" / "Pulumi.bad.yaml").read_text().splitlines()
    line = written.index("    version: '1.29'") + 1
    assert f"stacks/Pulumi.bad.yaml:{line}: {CLU}.version: Kubernetes 1.29 reached the end" in str(result.error)
    assert not result.document.resources


def test_a_minor_without_pinned_addons_or_support_dates_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(versions, "ADDON_VERSIONS", {k: v for k, v in versions.ADDON_VERSIONS.items() if k != "1.35"})
    refused_at(dev(version="1.35"), f"{CLU}.version", "pins no EKS add-on versions")
    monkeypatch.setattr(versions, "EKS_KUBERNETES_SUPPORT",
                        {k: v for k, v in versions.EKS_KUBERNETES_SUPPORT.items() if k != "1.36"})
    refused_at(dev(version="1.36"), f"{CLU}.version", "has no EKS support dates")


# --- warnings --------------------------------------------------------------------------------------------------

def test_warnings_before_the_end_of_standard_support_and_during_extended_support() -> None:
    from eks_karpenter.platform.cluster.config import ClusterConfig
    from eks_karpenter.platform.cluster.rules import version_warnings

    s = versions.EKS_KUBERNETES_SUPPORT["1.34"]
    cfg = ClusterConfig(name="c", version="1.34")
    assert version_warnings(cfg, s.end_of_standard - timedelta(days=91)) == []
    (soon,) = version_warnings(cfg, s.end_of_standard - timedelta(days=30))
    assert "standard support ends on 2026-12-02 (30 days)" in soon and "upgrades the control plane" in soon
    extended = ClusterConfig(name="c", version="1.34", upgradePolicy={"supportType": "EXTENDED"})
    (billed,) = version_warnings(extended, s.end_of_standard + timedelta(days=1))
    assert "six times" in billed and str(s.end_of_extended) in billed
    assert version_warnings(ClusterConfig(name="c", existing=True), s.end_of_standard) == []


def test_the_plan_prints_the_support_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import eks_karpenter.platform.build

    s = versions.EKS_KUBERNETES_SUPPORT["1.35"]
    monkeypatch.setattr(eks_karpenter.platform.build, "today", lambda: s.end_of_standard - timedelta(days=10))
    doc = plan_config(dev(), tmp_path).document
    assert any("EKS standard support ends on" in w and "(10 days)" in w for w in doc.warnings), doc.warnings
