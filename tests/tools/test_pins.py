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
PINNED_RELEASE = f"{MINOR}.1-{versions.AMI_ALIAS.partition('@v')[2]}"


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


def checkout_copy(root: Path) -> tuple[Path, Path]:
    """A copy of the repository's layout around the pins: versions.py and docs/UPGRADING.md."""
    versions_file = root / "components" / "eks_karpenter" / "versions.py"
    versions_file.parent.mkdir(parents=True)
    shutil.copy(Path(versions.__file__), versions_file)
    (root / "docs").mkdir()
    shutil.copy(REPO / "docs" / "UPGRADING.md", root / "docs" / "UPGRADING.md")
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    return versions_file, root / "docs" / "UPGRADING.md"


def test_write_moves_versions_py_and_notes_upgrading(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    versions_file, upgrading = checkout_copy(tmp_path)
    addon_answers = {**ADDONS_CURRENT, "kube-proxy": [PINNED["kube-proxy"], f"v{MINOR}.3-eksbuild.1"]}
    eks, ssm, _ = clients(addon_answers, {
        f"{AL2023}/recommended/release_version": NEWEST_AMI,
        f"{AL2023}/amazon-eks-node-al2023-x86_64-standard-{MINOR}-{versions.AMI_ALIAS.partition('@')[2]}/image_id":
            "ami-0123456789abcdef0",
    })
    code = pins.run(args("--live", "--write", "--versions-file", str(versions_file)), clients=(eks, ssm), get=Registry({
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


def test_write_refuses_an_installed_library_and_says_how_to_get_newer_pins(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    installed = tmp_path / "venv" / "lib" / "python3.11" / "site-packages" / "eks_karpenter" / "versions.py"
    installed.parent.mkdir(parents=True)
    shutil.copy(Path(versions.__file__), installed)
    before = installed.read_text()
    code = pins.run(args("--live", "--write", "--versions-file", str(installed)),
                    clients=(Raising(AssertionError("EKS is not asked")), Raising(AssertionError("nor SSM"))),
                    get=REGISTRY, today=TODAY)
    assert code == 1 and installed.read_text() == before
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.splitlines()
    assert line.startswith(f"error: --write moves the pins in eks-karpenter's own repository; {installed} belongs to "
                           "an installed package")
    assert "upgrade the library for newer pins" in line and "nodeClasses[].amiSelectorTerms" in line


def test_the_library_knows_whether_it_runs_from_its_repository(tmp_path: Path) -> None:
    from eks_karpenter.checkout import library_checkout

    assert library_checkout() == REPO
    versions_file, upgrading = checkout_copy(tmp_path / "clone")
    assert library_checkout(versions_file) == tmp_path / "clone"
    upgrading.unlink()  # a wheel's tree, unpacked: no docs
    assert library_checkout(versions_file) is None
    note = pins.ami_age_note("al2023@v20260815", TODAY, 30, checkout=False)
    assert "upgrade the eks-karpenter library" in note and "--write" not in note


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
    newest release when it is missing; else the system group's pinned release, then the spot group's newest."""
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
    if not missing_alias:  # the system group's release: the pinned release's own parameter
        pinned = image.removesuffix("/image_id") + "/release_version"
        ssm_stub.add_response("get_parameter", {"Parameter": {"Name": pinned, "Value": PINNED_RELEASE}},
                              {"Name": pinned})
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
    [system] = [r for r in result.document.by_type("eks:index:ManagedNodeGroup") if r.name == "cluster-system"]
    assert system.inputs["releaseVersion"] == PINNED_RELEASE
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


# --- `--live` without a region, credentials, rights or network: the fix, not a traceback -------------------------

class Raising:
    """An EKS or SSM client whose every call fails with `error` (what botocore raises offline, or without a
    region or credentials)."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def __getattr__(self, name: str) -> Any:
        def call(**kwargs: Any) -> Any:
            raise self.error
        return call


def _live_error(capsys: pytest.CaptureFixture[str], clients: tuple[Any, Any], get: Any = REGISTRY) -> str:
    assert pins.run(args("--live"), clients=clients, get=get, today=TODAY) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and "Traceback" not in captured.err
    (line,) = captured.err.splitlines()
    assert line.startswith("error: --live")
    return line


def test_live_without_a_region_names_the_flag_and_the_variable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_DEFAULT_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    assert cli.main(["pins", "--live"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert "error: --live needs an AWS region: pass --region REGION, or set AWS_REGION" in err


def test_live_without_network_says_the_network_is_needed(capsys: pytest.CaptureFixture[str]) -> None:
    from botocore.exceptions import EndpointConnectionError

    down = Raising(EndpointConnectionError(endpoint_url="https://eks.eu-west-1.amazonaws.com/"))
    line = _live_error(capsys, (down, down))
    assert "needs the network" in line and "eks.eu-west-1.amazonaws.com" in line and "drop --live" in line


def test_live_without_the_registry_says_the_network_is_needed(capsys: pytest.CaptureFixture[str]) -> None:
    import urllib.error

    eks, ssm, _ = clients(ADDONS_CURRENT, {
        f"{AL2023}/recommended/release_version": NEWEST_AMI,
        f"{AL2023}/amazon-eks-node-al2023-x86_64-standard-{MINOR}-{versions.AMI_ALIAS.partition('@')[2]}/image_id":
            "ami-0123456789abcdef0"})

    def offline(url: str, headers: Mapping[str, str]) -> bytes:
        raise urllib.error.URLError("[Errno -3] Temporary failure in name resolution")

    line = _live_error(capsys, (eks, ssm), get=offline)
    assert "OCI registries are out of reach" in line and "public.ecr.aws" in line


def test_live_without_credentials_names_them(capsys: pytest.CaptureFixture[str]) -> None:
    from botocore.exceptions import NoCredentialsError

    line = _live_error(capsys, (Raising(NoCredentialsError()), Raising(NoCredentialsError())))
    assert "needs AWS credentials" in line and "AWS_PROFILE" in line


def test_live_without_rights_names_the_permissions(capsys: pytest.CaptureFixture[str]) -> None:
    session = boto3.Session(region_name="eu-west-1", aws_access_key_id="x", aws_secret_access_key="x")
    ssm = session.client("ssm")
    stub = Stubber(ssm)
    stub.add_client_error("get_parameter", service_error_code="AccessDeniedException", http_status_code=403)
    stub.activate()
    line = _live_error(capsys, (Raising(AssertionError("EKS is not reached")), ssm))
    assert "GetParameter with AccessDeniedException" in line and "ssm:GetParameter" in line
    assert "eks:DescribeAddonVersions" in line


# --- stacks that name their own AMI alias ------------------------------------------------------------------------

def test_the_shipped_stacks_follow_the_library_ami_pin() -> None:
    assert pins.override_notes(REPO) == []
    for stack in ("dev", "prod", "brownfield"):
        assert "alias:" not in (REPO / "stacks" / f"Pulumi.{stack}.yaml").read_text(), stack


def test_a_stack_naming_its_own_alias_is_noted_as_not_moved(tmp_path: Path) -> None:
    (tmp_path / "stacks").mkdir()
    (tmp_path / "Pulumi.yaml").write_text("name: platform\nruntime: python\nstackConfigDir: stacks\n")
    (tmp_path / "stacks" / "Pulumi.qa.yaml").write_text(
        "config:\n  platform:nodeClasses:\n    - name: default\n      amiSelectorTerms: [{alias: al2023@v20250101}]\n")
    (tmp_path / "stacks" / "Pulumi.dev.yaml").write_text("config:\n  platform:nodeClasses: [{name: default}]\n")
    (note,) = pins.override_notes(tmp_path)
    assert note.startswith("stacks/Pulumi.qa.yaml: EC2NodeClass 'default' names its own AMI alias (al2023@v20250101)")
    assert f"does not follow versions.AMI_ALIAS ({versions.AMI_ALIAS})" in note


# --- `plan --live` and `cost --live` without credentials: the same one line --------------------------------------

def _expired() -> Exception:
    from botocore.exceptions import ClientError

    return ClientError({"Error": {"Code": "ExpiredTokenException",
                                  "Message": "The security token included in the request is expired"}},
                       "DescribeAddonVersions")


def _no_credentials() -> Exception:
    from botocore.exceptions import NoCredentialsError

    return NoCredentialsError()


def _sso_expired() -> Exception:
    from botocore.exceptions import UnauthorizedSSOTokenError

    return UnauthorizedSSOTokenError()


def _failing_session(monkeypatch: pytest.MonkeyPatch, error: Exception) -> None:
    class Session:
        def __init__(self, region_name: str | None = None) -> None:
            self.region_name = region_name

        def client(self, name: str, region_name: str | None = None) -> Any:
            return Raising(error)

        def get_credentials(self) -> Any:
            return None if isinstance(error, type(_no_credentials())) else object()

    monkeypatch.setattr(boto3, "Session", Session)


@pytest.mark.parametrize(("error", "says"), [
    (_no_credentials, "--live needs AWS credentials and found none: set AWS_PROFILE"),
    (_expired, "--live: the AWS credentials are expired or not valid: renew them (`aws sso login`"),
    (_sso_expired, "--live: the AWS credentials are expired or not valid: renew them (`aws sso login`"),
])
def test_plan_live_without_valid_credentials_says_what_to_do_in_one_line(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], error: Any, says: str) -> None:
    _failing_session(monkeypatch, error())
    assert cli.main(["plan", "--stack", "dev", "--live"]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and "Traceback" not in captured.err
    (line,) = captured.err.splitlines()
    assert line.startswith(f"error: {says}") and line.endswith("drop --live for the offline plan"), line


def test_pins_live_with_expired_credentials_says_renew_them(capsys: pytest.CaptureFixture[str]) -> None:
    line = _live_error(capsys, (Raising(_expired()), Raising(_expired())))
    assert "expired or not valid" in line and line.endswith("drop --live for the offline list")


def test_cost_live_in_a_consumer_project_asks_aws_only_for_prices(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A template project's cost is priced from its offline plan: `--live` fetches prices and leaves the pin
    look-ups offline, so without credentials the one line is the price fetch's."""
    from tests.project.test_installed_wheel import fill_template

    fill_template(tmp_path / "platform")
    _failing_session(monkeypatch, _no_credentials())
    assert cli.main(["cost", "--stack", "dev", "--live", "--program", str(tmp_path / "platform")]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and "Traceback" not in captured.err
    (line,) = captured.err.splitlines()
    assert line.startswith("error: --live needs AWS credentials") and "pricing:GetProducts" in line, line
