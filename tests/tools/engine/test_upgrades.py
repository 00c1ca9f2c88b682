"""Upgrades in the plan diff: Kubernetes one minor at a time in the order EKS needs, Karpenter release
changes with their IAM, values and CRD changes; `infra diff` refuses a jump of two minors."""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path
from typing import Any

import pytest
from eks_karpenter.tools import cli
from eks_karpenter.tools.engine import PlanDocument
from eks_karpenter.tools.engine.upgrades import (
    karpenter_version,
    kubernetes_version,
    render_upgrades,
    upgrade_problems,
    upgrade_section,
)

from tests.support import plan_config, plan_stack, stack_config

CLU = "eks-karpenter:cluster"
KARP = "eks-karpenter:karpenter"


@functools.cache
def dev_plan(k8s: str | None = None, karpenter: str | None = None) -> PlanDocument:
    config: dict[str, Any] = stack_config("dev")
    if k8s:
        config[CLU]["version"] = k8s
        if k8s == "1.33":  # out of standard support today: the explicit opt-in
            config[CLU]["upgradePolicy"] = {"supportType": "EXTENDED"}
    if karpenter:
        config[KARP] = {**config.get(KARP, {}), "version": karpenter}
    with tempfile.TemporaryDirectory() as tmp:
        result = plan_config(config, Path(tmp), stack="dev")  # the same stack: same URNs as plan_stack("dev")
    assert result.error is None, result.error
    return result.document


def test_versions_are_read_off_the_plan() -> None:
    assert kubernetes_version(plan_stack("dev")) == "1.35"
    assert karpenter_version(plan_stack("dev")) == "1.14.1"
    assert kubernetes_version(plan_stack("brownfield")) is None  # adopted: the program changes nothing of it


def test_one_minor_is_allowed_and_shown_in_order() -> None:
    old, new = dev_plan("1.34"), plan_stack("dev")
    assert upgrade_problems(old, new) == []
    text = "\n".join(upgrade_section(old, new))
    assert "#### Kubernetes 1.34 → 1.35" in text
    steps = [line for line in text.splitlines() if line[:3] in ("1. ", "2. ", "3. ", "4. ")]
    # The add-ons wait for the system node group (coredns needs nodes), so the plan applies them after it.
    assert [s.split(":")[0] for s in steps] == ["1. control plane",
                                                 "2. system node groups (replaced node by node with 1.35 AMIs)",
                                                 "3. add-ons (pinned for 1.35)", "4. Karpenter fleets"]
    assert "`kube-proxy` v1.34.1-eksbuild.2 → v1.35.0-eksbuild.2" in steps[2]
    assert "`cluster-system`" in steps[1] and "`nodepool-general`" in steps[3]
    assert "`al2023@v20260815`" in steps[3]
    # ... the system group only: a spot node group may roll side by side with them, and the diff says so.
    assert ("Not enforced by a dependency in this plan (Pulumi may run them side by side): add-ons after system "
            "node groups.") in text
    assert "Karpenter fleets after" not in text  # Karpenter waits for every node group


def test_two_minors_are_refused() -> None:
    old, new = dev_plan("1.33"), plan_stack("dev")
    (problem,) = upgrade_problems(old, new)
    assert "Kubernetes 1.33 → 1.35 skips a minor" in problem and "deploy 1.34 first" in problem
    assert render_upgrades(old, new).startswith("### Upgrades\n\n#### Refused\n\n- Kubernetes 1.33 → 1.35")


def test_a_downgrade_is_refused() -> None:
    (problem,) = upgrade_problems(plan_stack("dev"), dev_plan("1.34"))
    assert "cannot downgrade" in problem


def test_nothing_moves_nothing_shown() -> None:
    assert render_upgrades(plan_stack("dev"), plan_stack("dev")) == ""


def test_a_karpenter_upgrade_shows_iam_values_and_crds() -> None:
    old, new = dev_plan(karpenter="1.12.2"), plan_stack("dev")
    assert upgrade_problems(old, new) == []
    text = render_upgrades(old, new)
    assert "#### Karpenter 1.12.2 → 1.14.1" in text
    assert "- IAM actions: + ec2:DescribeInstanceStatus" in text
    assert ("- chart values: + settings.amiRefreshInterval, + settings.featureGates.capacityBuffer, "
            "+ settings.subnetRefreshInterval") in text
    assert "- CRDs: + capacitybuffers.autoscaling.x-k8s.io" in text


@pytest.mark.parametrize(("old_k8s", "code"), [("1.34", 0), ("1.33", 3)])
def test_the_diff_command_exits_3_on_a_refused_upgrade(old_k8s: str, code: int, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "old.json").write_text(dev_plan(old_k8s).to_json())
    (tmp_path / "new.json").write_text(plan_stack("dev").to_json())
    assert cli.main(["diff", str(tmp_path / "old.json"), str(tmp_path / "new.json")]) == code
    out, err = capsys.readouterr()
    assert f"#### Kubernetes {old_k8s} → 1.35" in out
    assert ("error: Kubernetes 1.33 → 1.35 skips a minor" in err) == (code == 3)
