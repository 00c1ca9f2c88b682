"""Plan-time warnings on what the platform's own choices open to the preview identity and to teams: a preview
deployer reading a built-in namespace's Secrets, and platform reservations that team pools' launches can take."""

from __future__ import annotations

import json
from typing import Any

from eks_karpenter.platform.stack import load_stack_config

from tests.support import stack_config

PREVIEW = {"name": "preview", "principalArn": "arn:aws:iam::123456789012:role/github-preview", "role": "preview"}


def warnings_of(config: dict[str, Any], stack: str = "x") -> list[str]:
    found: list[str] = []
    flat = {k: v if isinstance(v, str) else json.dumps(v) for k, v in config.items()}
    load_stack_config(flat, f"stacks/Pulumi.{stack}.yaml", warnings=found)
    return found


def about(warnings: list[str], text: str) -> list[str]:
    return [w for w in warnings if text in w]


def test_a_preview_deployer_beside_the_platform_in_kube_system_is_warned_of_once() -> None:
    (warning,) = about(warnings_of(stack_config("dev")), "built-in namespace")
    # dev's Karpenter and termination handler both sit in kube-system: one warning, at Karpenter's key.
    assert "eks-karpenter:karpenter.namespace: is a built-in namespace" in warning
    assert "(configmaps, secrets)" in warning and "preview deployers (preview)" in warning
    assert "eks-karpenter diff` refuses that move" in warning and "drop the preview deployer" in warning
    assert warning.endswith('(got "kube-system")')


def test_platform_namespaces_of_their_own_are_not_warned_of() -> None:
    config = stack_config("dev")
    config["eks-karpenter:karpenter"]["namespace"] = "karpenter"
    config["eks-karpenter:nodeTerminationHandler"]["namespace"] = "node-termination-handler"
    assert about(warnings_of(config), "built-in namespace") == []


def test_without_a_preview_deployer_kube_system_is_not_warned_of() -> None:
    config = stack_config("dev")
    access = config["eks-karpenter:access"]
    access["deployers"] = [d for d in access["deployers"] if d.get("role") != "preview"]
    assert about(warnings_of(config), "built-in namespace") == []


def test_the_termination_handler_alone_in_kube_system_is_warned_of_at_its_key() -> None:
    config = stack_config("dev")
    config["eks-karpenter:karpenter"]["namespace"] = "karpenter"
    (warning,) = about(warnings_of(config), "built-in namespace")
    assert "eks-karpenter:nodeTerminationHandler.namespace: is a built-in namespace" in warning
    assert "(secrets)" in warning  # the handler's release record; the ConfigMaps are in Karpenter's namespace


def test_a_migration_adds_the_deployments_read_in_the_cluster_autoscalers_namespace() -> None:
    config = stack_config("brownfield")
    config.setdefault("eks-karpenter:access", {}).setdefault("deployers", []).append(PREVIEW)
    (warning,) = about(warnings_of(config, "brownfield"), "built-in namespace")
    assert "(configmaps, deployments, secrets)" in warning


def _with_reservation(config: dict[str, Any], **term: Any) -> dict[str, Any]:
    config["eks-karpenter:nodeClasses"][0]["capacityReservationSelectorTerms"] = [{"tags": {"purpose": "peak"},
                                                                                   **term}]
    return config


def test_platform_reservations_beside_a_pool_team_are_warned_of_once() -> None:
    config = _with_reservation(stack_config("dev"))
    config["eks-karpenter:nodeClasses"].append({**config["eks-karpenter:nodeClasses"][0], "name": "reserved-2"})
    (warning,) = about(warnings_of(config), "instanceMatchCriteria: targeted")
    assert "eks-karpenter:nodeClasses[0].capacityReservationSelectorTerms: selects capacity reservations" in warning
    assert "teams with pool rights (batch)" in warning and "open reservation (EC2's default)" in warning


def test_targeted_reservations_or_no_pool_team_are_not_warned_of() -> None:
    targeted = _with_reservation(stack_config("dev"), instanceMatchCriteria="targeted")
    assert about(warnings_of(targeted), "instanceMatchCriteria: targeted") == []
    no_pools = _with_reservation(stack_config("dev"))
    for team in no_pools["eks-karpenter:access"]["teams"]:
        team.pop("nodePoolLimits", None)
        team["nodePools"] = False
    assert about(warnings_of(no_pools), "instanceMatchCriteria: targeted") == []
