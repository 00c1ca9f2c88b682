"""Pins checked at preview: add-on versions, EC2NodeClass aliases per admitted architecture and node
group AMI releases, looked up for the cluster's minor. Offline the mocks answer; here fixtures answer, missing
versions included, the way the provider does (a failed invoke)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from eks_karpenter import versions
from eks_karpenter.config.errors import ConfigError
from eks_karpenter.platform.adopted import ADDON_VERSIONS_TOKEN
from eks_karpenter.platform.lookups import (
    ADDON_TOKEN,
    SSM_TOKEN,
    alias_parameter,
    class_architectures,
    newest_alias,
    newest_parameter,
    node_group_parameter,
    release_parameter,
)
from eks_karpenter.platform.nodepool.config import NodePoolConfig
from eks_karpenter.tools.engine import run_plan
from eks_karpenter.tools.engine.mocks import InvokeFailure, _invoke

from tests.support import REPO, plan_config, plan_stack, stack_config

PINNED = versions.AMI_ALIAS.partition("@")[2]  # v20260815
AL2023 = "/aws/service/eks/optimized-ami/1.35/amazon-linux-2023"


# --- the parameters Karpenter resolves -----------------------------------------------------------------------------

@pytest.mark.parametrize(("alias", "arch", "parameter"), [
    ("al2023@v20260815", "amd64",
     f"{AL2023}/x86_64/standard/amazon-eks-node-al2023-x86_64-standard-1.35-v20260815/image_id"),
    ("al2023@v20260815", "arm64",
     f"{AL2023}/arm64/standard/amazon-eks-node-al2023-arm64-standard-1.35-v20260815/image_id"),
    ("al2023@latest", "amd64", f"{AL2023}/x86_64/standard/recommended/image_id"),
    ("al2@v20250101", "arm64", "/aws/service/eks/optimized-ami/1.35/amazon-linux-2-arm64/"
                               "amazon-eks-arm64-node-1.35-v20250101/image_id"),
    ("bottlerocket@v1.50.0", "amd64", "/aws/service/bottlerocket/aws-k8s-1.35/x86_64/1.50.0/image_id"),
    ("bottlerocket@1.50.0", "arm64", "/aws/service/bottlerocket/aws-k8s-1.35/arm64/1.50.0/image_id"),
    ("bottlerocket@latest", "arm64", "/aws/service/bottlerocket/aws-k8s-1.35/arm64/latest/image_id"),
    ("windows2022@latest", "amd64", None),
])
def test_alias_parameters_are_the_ones_karpenter_reads(alias: str, arch: str, parameter: str | None) -> None:
    assert alias_parameter(alias, "1.35", arch) == parameter


def test_newest_release_parameters_and_their_aliases() -> None:
    assert newest_parameter("al2023", "1.35", "amd64") == f"{AL2023}/x86_64/standard/recommended/release_version"
    assert newest_alias("al2023", "1.35.2-20261101") == "al2023@v20261101"
    assert newest_parameter("bottlerocket", "1.35", "arm64") == "/aws/service/bottlerocket/aws-k8s-1.35/arm64/latest/" \
                                                                "image_version"
    assert newest_alias("bottlerocket", "1.50.0-3e2bd5b8") == "bottlerocket@v1.50.0"
    assert node_group_parameter("AL2023_ARM_64_STANDARD", "1.35") == (
        "al2023", f"{AL2023}/arm64/standard/recommended/release_version")
    assert node_group_parameter("BOTTLEROCKET_x86_64", "1.35") == (
        "bottlerocket", "/aws/service/bottlerocket/aws-k8s-1.35/x86_64/latest/image_version")


@pytest.mark.parametrize(("alias", "arch", "parameter"), [
    ("al2023@v20260815", "amd64",
     f"{AL2023}/x86_64/standard/amazon-eks-node-al2023-x86_64-standard-1.35-v20260815/release_version"),
    ("al2023@v20260815", "arm64",
     f"{AL2023}/arm64/standard/amazon-eks-node-al2023-arm64-standard-1.35-v20260815/release_version"),
    ("al2@v20250101", "amd64", "/aws/service/eks/optimized-ami/1.35/amazon-linux-2/amazon-eks-node-1.35-v20250101/"
                               "release_version"),
    ("al2023@latest", "amd64", None),  # no release to pin
    ("bottlerocket@v1.50.0", "amd64", None),  # not an EKS-optimized release
])
def test_a_pinned_release_is_read_beside_the_image_karpenter_reads(alias: str, arch: str,
                                                                   parameter: str | None) -> None:
    assert release_parameter(alias, "1.35", arch) == parameter


def test_architectures_a_class_serves() -> None:
    pools = [NodePoolConfig.model_validate(p) for p in (
        {"name": "a", "nodeClass": "default"},
        {"name": "b", "nodeClass": "graviton", "arch": ["amd64", "arm64"],
         "requirements": [{"key": "kubernetes.io/arch", "operator": "NotIn", "values": ["amd64"]}]},
    )]
    assert class_architectures("default", pools) == ("amd64",)
    assert class_architectures("graviton", pools) == ("arm64",)
    assert class_architectures("unused", pools) == ()


# --- the plan, with recorded answers ------------------------------------------------------------------------------

def ssm(missing: tuple[str, ...] = (), newest: str = "1.35.2-20261101") -> Any:
    def answer(args: dict[str, Any]) -> dict[str, Any]:
        name = str(args["name"])
        if any(m in name for m in missing):
            raise InvokeFailure(f"ParameterNotFound: parameter {name} not found")
        result = _invoke(SSM_TOKEN, dict(args), "eu-west-1")
        return {**result, "value": newest} if name.endswith("/release_version") else result
    return answer


def addons(offered: dict[str, tuple[str, str]]) -> Any:
    """EKS's answers per add-on: (default, newest)."""
    def answer(args: dict[str, Any]) -> dict[str, Any]:
        default, newest = offered[str(args["addonName"])] if args["addonName"] in offered else (None, None)
        result = _invoke(ADDON_TOKEN, dict(args), "eu-west-1")
        if default is None:
            return result
        return {**result, "version": newest if args.get("mostRecent") else default}
    return answer


def test_offline_every_pin_exists_and_is_looked_up() -> None:
    doc = plan_stack("dev")
    tokens = [i.token for i in doc.invokes]
    assert tokens.count(ADDON_TOKEN) == 8  # four add-ons: default and newest
    names = [i.args["name"] for i in doc.invokes if i.token == SSM_TOKEN]
    assert f"{AL2023}/x86_64/standard/amazon-eks-node-al2023-x86_64-standard-1.35-{PINNED}/image_id" in names
    assert f"{AL2023}/x86_64/standard/recommended/release_version" in names  # the system node group's release
    assert not [w for w in doc.warnings if "gets AMI release" in w or "confirm it with" in w]


def test_an_alias_that_does_not_resolve_fails_with_the_newest_release() -> None:
    result = run_plan(REPO, "dev", invoke_results={SSM_TOKEN: ssm(missing=(f"-{PINNED}/",))})
    assert isinstance(result.error, ConfigError)
    message = str(result.error)
    assert (f"eks-karpenter:nodeClasses[0].amiSelectorTerms[0].alias: al2023@{PINNED} has no amd64 AMI for "
            f"Kubernetes 1.35") in message
    assert "the newest is al2023@v20261101" in message
    assert [r for r in result.document.resources if r.custom] == []  # nothing registered


def test_each_admitted_architecture_is_checked() -> None:
    config = stack_config("dev")
    pools = config["eks-karpenter:nodePools"]
    pools[0]["arch"] = ["amd64", "arm64"]
    override = {"eks-karpenter:nodePools": json.dumps(pools)}
    result = run_plan(REPO, "dev", invoke_results={SSM_TOKEN: ssm(missing=(f"arm64-standard-1.35-{PINNED}",))},
                      config_overrides=override)
    assert isinstance(result.error, ConfigError)
    assert f"al2023@{PINNED} has no arm64 AMI for Kubernetes 1.35" in str(result.error)
    # amd64 only: the same answers are fine
    assert run_plan(REPO, "dev", invoke_results={SSM_TOKEN: ssm(missing=(f"arm64-standard-1.35-{PINNED}",))}
                    ).error is None


def test_an_addon_pin_eks_does_not_offer_fails_with_the_nearest_versions() -> None:
    pinned = versions.ADDON_VERSIONS["1.35"]["vpc-cni"]
    result = run_plan(REPO, "dev", invoke_results={
        ADDON_TOKEN: addons({"vpc-cni": ("v1.20.4-eksbuild.1", "v1.21.0-eksbuild.4")})})
    assert isinstance(result.error, ConfigError)
    assert (f"eks-karpenter:cluster.addonVersions.vpc-cni: EKS offers no vpc-cni {pinned} for Kubernetes 1.35: the "
            "newest is v1.21.0-eksbuild.4, the default v1.20.4-eksbuild.1") in str(result.error)


def test_an_addon_pin_between_default_and_newest_is_a_warning() -> None:
    result = run_plan(REPO, "dev", invoke_results={
        ADDON_TOKEN: addons({"coredns": ("v1.12.1-eksbuild.2", "v1.13.0-eksbuild.1")})})
    assert result.error is None
    (warning,) = [w for w in result.document.warnings if "coredns" in w]
    assert "neither EKS's default (v1.12.1-eksbuild.2) nor its newest (v1.13.0-eksbuild.1)" in warning


def test_a_node_group_on_another_ami_release_is_a_warning() -> None:
    result = run_plan(REPO, "dev", invoke_results={SSM_TOKEN: ssm(newest="1.35.2-20261101")})
    assert result.error is None
    warnings = [w for w in result.document.warnings if "gets AMI release" in w]
    assert warnings and all(f"while the EC2NodeClass alias pins {PINNED}" in w for w in warnings)
    # The spot group gets EKS's newest; the system group runs the pin's own release, so is not warned about.
    assert [w.split(" gets")[0] for w in warnings] == ["node group spot-workshop-spot"]


def test_an_adopted_cluster_is_looked_up_for_its_own_minor() -> None:
    doc = plan_stack("brownfield")  # the mock cluster runs 1.33
    names = [i.args["name"] for i in doc.invokes if i.token == SSM_TOKEN]
    assert names and all("/1.33/" in n for n in names)
    assert ADDON_TOKEN not in [i.token for i in doc.invokes]  # its add-ons are not this stack's


# --- ageing ---------------------------------------------------------------------------------------------------------

def test_an_old_ami_pin_is_a_warning_at_the_configured_age() -> None:
    from datetime import date

    from eks_karpenter.platform.cluster.config import ClusterConfig
    from eks_karpenter.platform.nodepool.class_config import NodeClassConfig
    from eks_karpenter.platform.version_rules import ami_age_warnings

    assert ClusterConfig.model_fields["ami_max_age_days"].default == 30
    default = NodeClassConfig.model_validate({"name": "default"})
    (warning,) = ami_age_warnings([default], date(2026, 9, 15), 30)  # 31 days after al2023@v20260815
    assert warning.startswith(f"EC2NodeClass default: AMI {versions.AMI_ALIAS} is 31 days old (cluster."
                              "amiMaxAgeDays: 30)")
    assert ami_age_warnings([default], date(2026, 9, 14), 30) == []
    assert ami_age_warnings([default], date(2026, 11, 13), 90) == []
    assert len(ami_age_warnings([default], date(2026, 11, 14), 90)) == 1
    latest = NodeClassConfig.model_validate({"name": "x", "amiSelectorTerms": [{"alias": "al2023@latest"}]})
    assert ami_age_warnings([latest], date(2030, 1, 1), 30) == []  # unpinned: nothing to age


def test_the_ami_age_warning_says_how_to_move_the_ami_where_the_library_runs() -> None:
    from datetime import timedelta

    from eks_karpenter.platform.nodepool.class_config import NodeClassConfig
    from eks_karpenter.platform.version_rules import ami_age_warnings
    from eks_karpenter.tools.pins import ami_release_date

    released = ami_release_date(versions.AMI_ALIAS)
    assert released is not None
    later = released + timedelta(days=100)
    classes = [NodeClassConfig.model_validate({"name": "default"}),
               NodeClassConfig.model_validate({"name": "gpu", "amiSelectorTerms": [{"alias": "al2023@v20250101"}]})]
    in_repo, own = ami_age_warnings(classes, later, 30, checkout=True)
    assert "move the pin with `eks-karpenter pins --live --write`" in in_repo
    assert own.startswith("EC2NodeClass gpu: AMI al2023@v20250101")
    assert "set `eks-karpenter:nodeClasses[1].amiSelectorTerms` to a newer release, [{alias: al2023@v<YYYYMMDD>}]" \
        in own and "--write" not in own
    installed, own_installed = ami_age_warnings(classes, later, 30, checkout=False)
    assert own_installed == own
    assert "--write" not in installed
    assert (f"upgrade the eks-karpenter library (each release moves its pin {versions.AMI_ALIAS}), or set "
            "`eks-karpenter:nodeClasses[0].amiSelectorTerms` (class default) to a newer release, "
            "[{alias: al2023@v<YYYYMMDD>}]") in installed


def test_a_consumer_plan_names_the_ami_key_in_its_own_namespace(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from datetime import timedelta

    from eks_karpenter.platform import build
    from eks_karpenter.tools.cli import main
    from eks_karpenter.tools.pins import ami_release_date

    from tests.project.test_installed_wheel import fill_template

    released = ami_release_date(versions.AMI_ALIAS)
    assert released is not None
    monkeypatch.setattr(build, "today", lambda: released + timedelta(days=100))
    monkeypatch.setattr(build, "library_checkout", lambda: None)  # as from a wheel in the project's venv
    fill_template(tmp_path / "platform", project="my-platform")
    assert main(["plan", "--stack", "dev", "--program", str(tmp_path / "platform"), "--format", "json"]) == 0
    [warning] = [w for w in json.loads(capsys.readouterr().out)["warnings"] if "amiMaxAgeDays" in w]
    assert "set `my-platform:nodeClasses[0].amiSelectorTerms` (class default)" in warning
    assert "upgrade the eks-karpenter library" in warning and "pins --live --write" not in warning


def test_the_plan_warns_about_an_old_ami_pin_unless_configured_otherwise() -> None:
    from datetime import UTC, datetime

    from eks_karpenter.tools.pins import ami_release_date

    released = ami_release_date(versions.AMI_ALIAS)
    assert released is not None
    age = (datetime.now(UTC).date() - released).days
    warnings = [w for w in plan_stack("dev").warnings if "amiMaxAgeDays" in w]
    assert bool(warnings) == (age > 30)
    cluster = stack_config("dev")["eks-karpenter:cluster"]
    cluster["amiMaxAgeDays"] = 366
    result = run_plan(REPO, "dev", config_overrides={"eks-karpenter:cluster": json.dumps(cluster)})
    assert result.error is None and not [w for w in result.document.warnings if "amiMaxAgeDays" in w]


def test_a_look_up_denied_names_the_permission_it_needs() -> None:
    def denied(args: dict[str, Any]) -> dict[str, Any]:
        raise InvokeFailure("AccessDeniedException: not authorized to perform ssm:GetParameter")

    result = run_plan(REPO, "dev", invoke_results={SSM_TOKEN: denied})
    assert result.error is not None
    assert "needs ssm:GetParameter on parameter/aws/service/*" in str(result.error)
    assert "AccessDeniedException" in str(result.error)

    def eks_denied(args: dict[str, Any]) -> dict[str, Any]:
        raise InvokeFailure("AccessDeniedException", "addonName")

    result = run_plan(REPO, "dev", invoke_results={ADDON_TOKEN: eks_denied})
    assert result.error is not None and "needs eks:DescribeAddonVersions" in str(result.error)


# --- the system node group runs the pin's release ------------------------------------------------------------------

def _groups(doc: Any) -> dict[str, Any]:
    return {r.name: r.inputs for r in doc.by_type("eks:index:ManagedNodeGroup")}


def test_the_system_group_release_is_the_ami_pins_own() -> None:
    doc = plan_stack("dev")
    groups = _groups(doc)
    # <minor>.<patch>-<date>: the pinned release's parameter, answered offline by the mocks.
    assert groups["cluster-system"]["releaseVersion"] == f"1.35.0-{PINNED.removeprefix('v')}"
    assert "releaseVersion" not in groups["cluster-spot-workshop-spot"]  # CAS-era groups: EKS's newest, as before
    asked = [i.args["name"] for i in doc.invokes if i.token == SSM_TOKEN]
    assert (f"{AL2023}/x86_64/standard/amazon-eks-node-al2023-x86_64-standard-1.35-{PINNED}/release_version"
            in asked)


def test_a_pin_without_a_release_for_the_minor_stops_the_preview() -> None:
    result = run_plan(REPO, "dev", invoke_results={SSM_TOKEN: ssm(missing=(f"{PINNED}/release_version",))})
    assert isinstance(result.error, ConfigError) and result.document.resources == []
    text = str(result.error)
    assert f"eks-karpenter:cluster.version: the AMI pin {versions.AMI_ALIAS} has no AL2023_x86_64_STANDARD release "\
           "for Kubernetes 1.35" in text
    assert "the newest is al2023@v20261101" in text and "pins --live --write --kubernetes 1.35" in text


def test_a_system_group_of_another_family_gets_no_pinned_release(tmp_path: Path) -> None:
    config = stack_config("dev")
    config["eks-karpenter:cluster"]["systemNodeGroup"]["amiType"] = "BOTTLEROCKET_x86_64"
    result = plan_config(config, tmp_path)
    assert result.error is None, result.error
    assert "releaseVersion" not in _groups(result.document)["cluster-system"]


def _offered(by_addon: dict[str, list[str]]) -> Any:
    """An answer of the add-on version listing: the versions of each named add-on, every other one's pin."""
    def answer(args: dict[str, Any]) -> dict[str, Any]:
        name, minor = args["addonName"], args["kubernetesVersion"]
        return {"versions": by_addon.get(name, [versions.ADDON_VERSIONS[minor][name]])}
    return answer


def test_a_pin_eks_does_not_list_for_the_minor_is_refused() -> None:
    """Not only a pin newer than the newest: one EKS does not offer for the minor at all (withdrawn, or a build of
    another minor) is refused at preview, from the full list EKS gives (DescribeAddonVersions)."""
    pinned = versions.ADDON_VERSIONS["1.35"]["kube-proxy"]
    listed = ["v1.35.1-eksbuild.3", "v1.35.0-eksbuild.4"]
    assert pinned not in listed
    result = run_plan(REPO, "dev", invoke_results={ADDON_VERSIONS_TOKEN: _offered({"kube-proxy": listed})})
    assert isinstance(result.error, ConfigError)
    assert (f"eks-karpenter:cluster.addonVersions.kube-proxy: EKS offers no kube-proxy {pinned} for Kubernetes "
            "1.35 (it offers v1.35.1-eksbuild.3, v1.35.0-eksbuild.4, ...)") in str(result.error)
    assert not result.document.resources
    assert run_plan(REPO, "dev", invoke_results={ADDON_VERSIONS_TOKEN: _offered({})}).error is None


def test_without_the_list_the_pins_are_held_to_default_and_newest_and_it_says_so() -> None:
    result = run_plan(REPO, "dev", invoke_results={
        ADDON_VERSIONS_TOKEN: {"error": "AccessDeniedException: not authorized"}})
    assert result.error is None
    assert any("could not list EKS's vpc-cni versions" in w and "eks:DescribeAddonVersions" in w
               for w in result.document.warnings)


def test_the_listing_reads_every_page_of_eks_answers() -> None:
    import boto3
    from botocore.stub import Stubber
    from eks_karpenter.platform.preflight.hook import addon_versions

    client = boto3.client("eks", region_name="eu-west-1", aws_access_key_id="x", aws_secret_access_key="y")
    request = {"addonName": "vpc-cni", "kubernetesVersion": "1.35"}
    with Stubber(client) as stub:
        stub.add_response("describe_addon_versions", {"addons": [{"addonName": "vpc-cni", "addonVersions": [
            {"addonVersion": "v1.21.1-eksbuild.1"}]}], "nextToken": "t"}, request)
        stub.add_response("describe_addon_versions", {"addons": [{"addonName": "vpc-cni", "addonVersions": [
            {"addonVersion": "v1.20.4-eksbuild.1"}]}]}, {**request, "nextToken": "t"})
        assert addon_versions({**request, "region": "eu-west-1"}, client) == {
            "versions": ["v1.21.1-eksbuild.1", "v1.20.4-eksbuild.1"]}
    with Stubber(client) as stub:
        stub.add_client_error("describe_addon_versions", "AccessDeniedException", "not authorized")
        assert "AccessDeniedException" in addon_versions({**request, "region": "eu-west-1"}, client)["error"]
