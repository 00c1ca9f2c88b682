"""`eks-karpenter pins`: every pin with source and age; `--live` against recorded API answers (botocore
Stubber for EKS and SSM, a fake OCI registry); `--write` moves versions.py and notes it in UPGRADING."""

from __future__ import annotations

import argparse
import json
import re
import shutil
from collections.abc import Mapping
from datetime import date
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from eks_karpenter import versions
from eks_karpenter.tools import cli, pins

from tests.support import REPO

TODAY = date(2026, 11, 26)
MINOR = versions.KUBERNETES_VERSION
PINNED = versions.ADDON_VERSIONS[MINOR]
AL2023 = f"/aws/service/eks/optimized-ami/{MINOR}/amazon-linux-2023/x86_64/standard"


def args(*argv: str) -> argparse.Namespace:
    return cli._parser().parse_args(["pins", *argv])


class Registry:
    """public.ecr.aws answering the token and tags/list calls, checking the bearer token."""

    def __init__(self, tags: dict[str, list[str]]) -> None:
        self.tags = tags

    def __call__(self, url: str, headers: Mapping[str, str]) -> bytes:
        token = re.fullmatch(r"https://public\.ecr\.aws/token/\?scope=repository:(.+):pull", url)
        if token:
            return json.dumps({"token": f"tok-{token[1]}"}).encode()
        listing = re.fullmatch(r"https://public\.ecr\.aws/v2/(.+)/tags/list", url)
        assert listing and headers["Authorization"] == f"Bearer tok-{listing[1]}", url
        return json.dumps({"name": listing[1], "tags": self.tags[listing[1]]}).encode()


REGISTRY = Registry({"karpenter/karpenter": ["1.12.2", "1.13.1", "1.14.1", "1.15.0-rc.1", "latest"],
                     "aws-ec2/helm/aws-node-termination-handler": ["0.27.5", "0.27.6", "0.28.0"]})


def clients(addon_answers: dict[str, list[str]], ssm_answers: dict[str, str | None]) -> tuple[Any, Any, list[Any]]:
    """Stubbed EKS and SSM clients answering in the order the command asks (recorded API answers)."""
    session = boto3.Session(region_name="eu-west-1", aws_access_key_id="x", aws_secret_access_key="x")
    eks, ssm = session.client("eks"), session.client("ssm")
    eks_stub, ssm_stub = Stubber(eks), Stubber(ssm)
    for name, offered in addon_answers.items():
        # two pages, as DescribeAddonVersions may answer
        half = len(offered) // 2
        eks_stub.add_response("describe_addon_versions", {
            "addons": [{"addonName": name, "addonVersions": [{"addonVersion": v} for v in offered[:half]]}],
            "nextToken": "page2"}, {"addonName": name, "kubernetesVersion": MINOR})
        eks_stub.add_response("describe_addon_versions", {
            "addons": [{"addonName": name, "addonVersions": [{"addonVersion": v} for v in offered[half:]]}]},
            {"addonName": name, "kubernetesVersion": MINOR, "nextToken": "page2"})
    for name, value in ssm_answers.items():
        if value is None:
            ssm_stub.add_client_error("get_parameter", service_error_code="ParameterNotFound",
                                      expected_params={"Name": name})
        else:
            ssm_stub.add_response("get_parameter", {"Parameter": {"Name": name, "Value": value, "Type": "String"}},
                                  {"Name": name})
    eks_stub.activate()
    ssm_stub.activate()
    return eks, ssm, [eks_stub, ssm_stub]


ADDONS_CURRENT = {name: ["v0.0.1-eksbuild.1", pin] for name, pin in sorted(PINNED.items())}
NEWEST_AMI = f"{MINOR}.2-20261120"


def test_offline_lists_every_pin_with_source_and_age(capsys: pytest.CaptureFixture[str]) -> None:
    assert pins.run(args(), today=TODAY) == 0
    out = capsys.readouterr().out
    names = [line.split()[0] for line in out.splitlines()[1:]]
    assert names == ["karpenter", "nth", "kubernetes", "ami", *(f"addon:{n}" for n in sorted(PINNED))]
    assert re.search(r"^karpenter +1\.14\.1 +97d since released +oci://public\.ecr\.aws/karpenter/karpenter", out, re.M)
    assert re.search(r"^nth +0\.27\.6 +4d since pinned +oci://public\.ecr\.aws/aws-ec2/helm/aws-node-termination-handler",
                     out, re.M)
    assert f"AMI release is {(TODAY - date(2026, 8, 15)).days} days old (over 30)" in out


def test_the_ami_age_threshold_is_configurable(capsys: pytest.CaptureFixture[str]) -> None:
    assert pins.run(args("--max-ami-age", "200"), today=TODAY) == 0
    assert "days old" not in capsys.readouterr().out
    assert pins.ami_age_note("al2023@v20261120", TODAY, 30) == ""
    assert pins.ami_age_note("al2023@latest", TODAY, 30) == ""


def test_live_reports_the_newest_values_from_recorded_answers(capsys: pytest.CaptureFixture[str]) -> None:
    addon_answers = {**ADDONS_CURRENT, "vpc-cni": ["v1.20.4-eksbuild.1", PINNED["vpc-cni"], "v1.21.2-eksbuild.1"]}
    eks, ssm, stubs = clients(addon_answers, {
        f"{AL2023}/recommended/release_version": NEWEST_AMI,
        f"{AL2023}/amazon-eks-node-al2023-x86_64-standard-{MINOR}-{versions.AMI_ALIAS.partition('@')[2]}/image_id":
            "ami-0123456789abcdef0",
    })
    assert pins.run(args("--live"), clients=(eks, ssm), get=REGISTRY, today=TODAY) == 0
    for stub in stubs:
        stub.assert_no_pending_responses()
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()[1:]}
    assert "al2023@v20261120" in rows["ami"]
    assert "v1.21.2-eksbuild.1" in rows["addon:vpc-cni"]
    assert "0.28.0" in rows["nth"]
    assert re.search(r" 1\.14\.1 .* 1\.14\.1$", rows["karpenter"])  # 1.15.0-rc.1 and `latest` are not releases


def test_live_names_a_missing_pin_with_the_nearest_versions(capsys: pytest.CaptureFixture[str]) -> None:
    addon_answers = {**ADDONS_CURRENT, "coredns": ["v1.12.1-eksbuild.2", "v1.12.3-eksbuild.1", "v1.13.0-eksbuild.1"]}
    eks, ssm, _ = clients(addon_answers, {
        f"{AL2023}/recommended/release_version": NEWEST_AMI,
        f"{AL2023}/amazon-eks-node-al2023-x86_64-standard-{MINOR}-{versions.AMI_ALIAS.partition('@')[2]}/image_id":
            None,
    })
    assert pins.run(args("--live"), clients=(eks, ssm), get=Registry({
        "karpenter/karpenter": ["1.14.1", "1.15.0"], "aws-ec2/helm/aws-node-termination-handler": ["0.27.6"]}),
        today=TODAY) == 3
    out, err = capsys.readouterr()
    assert f"error: pinned but not offered for Kubernetes {MINOR}: ami, addon:coredns" in err
    rows = {line.split()[0]: line for line in out.splitlines()[1:]}
    assert (f"not offered for Kubernetes {MINOR}; nearest: v1.12.3-eksbuild.1, v1.13.0-eksbuild.1"
            in rows["addon:coredns"])
    assert f"does not resolve for Kubernetes {MINOR}; newest: al2023@v20261120" in rows["ami"]
    assert "1.15.0 is not in versions.KARPENTER_RELEASES" in rows["karpenter"]


def test_write_moves_versions_py_and_notes_upgrading(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    versions_file = tmp_path / "versions.py"
    shutil.copy(Path(versions.__file__), versions_file)
    upgrading = tmp_path / "UPGRADING.md"
    shutil.copy(REPO / "docs" / "UPGRADING.md", upgrading)
    addon_answers = {**ADDONS_CURRENT, "kube-proxy": [PINNED["kube-proxy"], f"v{MINOR}.3-eksbuild.1"]}
    eks, ssm, _ = clients(addon_answers, {
        f"{AL2023}/recommended/release_version": NEWEST_AMI,
        f"{AL2023}/amazon-eks-node-al2023-x86_64-standard-{MINOR}-{versions.AMI_ALIAS.partition('@')[2]}/image_id":
            "ami-0123456789abcdef0",
    })
    code = pins.run(args("--live", "--write", "--versions-file", str(versions_file), "--upgrading-file",
                         str(upgrading)), clients=(eks, ssm), get=Registry({
                             "karpenter/karpenter": ["1.14.1", "1.15.0"],
                             "aws-ec2/helm/aws-node-termination-handler": ["0.27.6", "0.28.0"]}), today=TODAY)
    assert code == 0
    text = versions_file.read_text()
    assert 'AMI_ALIAS = "al2023@v20261120"' in text
    assert 'NTH_VERSION = "0.28.0"' in text and "NTH_VERSION_PINNED = date(2026, 11, 26)" in text
    assert 'KARPENTER_VERSION = "1.14.1"' in text  # 1.15.0 is not supported: reported, never written
    assert f'"kube-proxy": "v{MINOR}.3-eksbuild.1"' in text and "ADDON_VERSIONS_PINNED = date(2026, 11, 26)" in text
    other_minor = next(m for m in versions.ADDON_VERSIONS if m != MINOR)
    assert f'"kube-proxy": "{versions.ADDON_VERSIONS[other_minor]["kube-proxy"]}"' in text  # other minors untouched
    compile(text, str(versions_file), "exec")
    notes = upgrading.read_text()
    top = notes.index("- **Other**:")
    assert notes.index("  - **Pins (2026-11-26)**: AMI alias al2023@v20260815 -> al2023@v20261120") > top
    assert "  - **Pins (2026-11-26)**: aws-node-termination-handler chart 0.27.6 -> 0.28.0." in notes
    assert notes.count("**Pins (2026-11-26)**") == 3
    assert "wrote: EKS add-on kube-proxy" in capsys.readouterr().err


def test_write_needs_live_and_unknown_minor_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert pins.run(args("--write"), today=TODAY) == 1
    assert "--write needs --live" in capsys.readouterr().err
    assert pins.run(args("--kubernetes", "1.20"), today=TODAY) == 1
    assert "no pins for Kubernetes 1.20" in capsys.readouterr().err


def test_the_command_is_on_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["pins", "--max-ami-age", "100000"]) == 0
    assert capsys.readouterr().out.startswith("pin ")


def _plan_live_clients(missing_alias: bool) -> tuple[Any, Any]:
    """Recorded answers in the order the dev plan asks: each add-on (default, then newest), the alias's AMI, the
    newest release when it is missing, then the node groups' releases."""
    session = boto3.Session(region_name="eu-west-1", aws_access_key_id="x", aws_secret_access_key="x")
    eks, ssm = session.client("eks"), session.client("ssm")
    eks_stub, ssm_stub = Stubber(eks), Stubber(ssm)
    for name, pin in sorted(PINNED.items()):
        for _ in range(2):
            eks_stub.add_response("describe_addon_versions", {"addons": [{"addonName": name, "addonVersions": [
                {"addonVersion": pin, "compatibilities": [{"defaultVersion": True}]},
                {"addonVersion": "v0.0.1-eksbuild.1", "compatibilities": [{"defaultVersion": False}]}]}]},
                {"addonName": name, "kubernetesVersion": MINOR})
    image = f"{AL2023}/amazon-eks-node-al2023-x86_64-standard-{MINOR}-{versions.AMI_ALIAS.partition('@')[2]}/image_id"
    if missing_alias:
        ssm_stub.add_client_error("get_parameter", service_error_code="ParameterNotFound",
                                  expected_params={"Name": image})
    else:
        ssm_stub.add_response("get_parameter", {"Parameter": {"Name": image, "Value": "ami-0123456789abcdef0"}},
                              {"Name": image})
    release = f"{AL2023}/recommended/release_version"
    for _ in range(1 if missing_alias else 2):
        ssm_stub.add_response("get_parameter", {"Parameter": {"Name": release, "Value": NEWEST_AMI}},
                              {"Name": release})
    eks_stub.activate()
    ssm_stub.activate()
    return eks, ssm


def test_plan_live_answers_the_pin_look_ups_from_aws() -> None:
    from eks_karpenter.config.errors import ConfigError
    from eks_karpenter.tools.engine import run_plan

    eks, ssm = _plan_live_clients(missing_alias=False)
    result = run_plan(REPO, "dev", invoke_results=pins.live_invoke_results(eks, ssm))
    assert result.error is None
    assert any("gets AMI release" in w and NEWEST_AMI in w for w in result.document.warnings)
    eks, ssm = _plan_live_clients(missing_alias=True)
    result = run_plan(REPO, "dev", invoke_results=pins.live_invoke_results(eks, ssm))
    assert isinstance(result.error, ConfigError)
    assert "has no amd64 AMI for Kubernetes 1.35" in str(result.error) and "newest is al2023@v20261120" in str(
        result.error)


def test_the_pins_page_is_true_to_the_table_and_the_cli() -> None:
    page = (REPO / "docs" / "pins-and-upgrades.md").read_text()
    for version, release in versions.KARPENTER_RELEASES.items():
        low, high = release.kubernetes
        assert re.search(rf"^\| {re.escape(version)} \| {re.escape(low)} to {re.escape(high)} \|", page, re.M), version
    assert "Supported releases: **" + ", ".join(versions.KARPENTER_VERSIONS) + "**" in page
    assert versions.NTH_CHART in page
    for match in re.finditer(r"python -m infra ([^\n#`]+)", page):
        command = match[1].split("|")[0].strip()
        if "<" not in command:
            cli._parser().parse_args(command.split())  # SystemExit (a failure) if not a real command


def test_infra_plan_live_uses_the_stacks_region(monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    eks, ssm = _plan_live_clients(missing_alias=True)
    regions: list[str | None] = []

    class Session:
        def __init__(self, region_name: str | None = None) -> None:
            regions.append(region_name)

        def client(self, name: str) -> Any:
            return {"eks": eks, "ssm": ssm}[name]

    monkeypatch.setattr(boto3, "Session", Session)
    assert cli.main(["plan", "--stack", "dev", "--live"]) == 1
    err = capsys.readouterr().err
    assert "has no amd64 AMI for Kubernetes 1.35" in err and "newest is al2023@v20261120" in err
    assert regions == [stack_region("dev")]


def stack_region(stack: str) -> str:
    import yaml

    return str(yaml.safe_load((REPO / "stacks" / f"Pulumi.{stack}.yaml").read_text())["config"]["aws:region"])
