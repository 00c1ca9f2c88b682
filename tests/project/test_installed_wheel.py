"""The built wheel installed in a fresh venv outside the repository: it imports as `eks_karpenter` alone, and its
`eks-karpenter` command plans the Pulumi template and the team-batch example from their own folders.

The venv gets only the wheel (`--no-deps`); the dependencies come from the dev venv's site-packages as a plain
PYTHONPATH entry, whose `.pth` files (the editable install of this checkout among them) are never processed."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import eks_karpenter
import pytest
import yaml

from tests.support import REPO
from tests.support.wheel import built_wheel, copy_project, dev_site_packages, install_wheel

TEMPLATE = REPO / "templates" / "eks-karpenter"
PROJECT = "acme-platform"
ANSWERS = {"deployerArn": "arn:aws:iam::123456789012:role/Admin"}
"""What a user types at the prompts that have no default."""


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    venv = tmp_path_factory.mktemp("consumer") / "venv"
    return venv, install_wheel(venv)


def fill_template(dest: Path, project: str = PROJECT, stack: str = "dev") -> dict[str, str]:
    """What `pulumi new <url>/templates/eks-karpenter` does: copy, substitute ${PROJECT} and ${DESCRIPTION} in
    every file, and write the prompted config (here: each prompt's default) into `Pulumi.<stack>.yaml` under the
    project's namespace (keys without one) as flat strings."""
    copy_project(TEMPLATE, dest)
    for path in dest.rglob("*"):
        if path.is_file():
            text = path.read_text()
            path.write_text(text.replace("${PROJECT}", project).replace("${DESCRIPTION}", "Our EKS platform"))
    prompts = yaml.safe_load((dest / "Pulumi.yaml").read_text())["template"]["config"]
    config = {(key if ":" in key else f"{project}:{key}"): str(prompt.get("default", ANSWERS.get(key)))
              for key, prompt in prompts.items()}
    (dest / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump({"config": config}))
    return config


def plan(command: list[str], cwd: Path, env: dict[str, str] | None = None, warnings: int = 0) -> dict[str, Any]:
    proc = subprocess.run([*command, "--format", "json"], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    document: dict[str, Any] = json.loads(proc.stdout)
    # The AMI pin's age warning depends on the day the tests run (the weekly pins PR keeps the pin fresh).
    rest = [w for w in document["warnings"] if "amiMaxAgeDays" not in w]
    assert len(rest) == warnings, document["warnings"]
    return document


TEMPLATE_WARNINGS = 1
"""The template's default `deployerCidr` is 0.0.0.0/0: a laptop reaches the endpoint, and every plan says it is
open until the user gives their address."""


def names(document: dict[str, Any], type_: str) -> set[str]:
    return {r["urn"].rsplit("::", 1)[1] for r in document["resources"] if r["type"] == type_}


def test_the_template_is_a_pulumi_new_template() -> None:
    project = yaml.safe_load((TEMPLATE / "Pulumi.yaml").read_text())
    assert project["name"] == "${PROJECT}" and project["description"] == "${DESCRIPTION}"
    assert project["runtime"] == {"name": "python", "options": {"toolchain": "pip", "virtualenv": "venv"}}
    assert project["template"]["description"]
    prompts = project["template"]["config"]
    assert set(prompts) == {"aws:region", "clusterName", "deployerArn", "deployerCidr", "network", "nodePools"}
    assert all(p["description"] for p in prompts.values())
    # No default deployer: only the user knows who they deploy as (a made-up ARN would be an entry for nobody).
    assert {k for k, p in prompts.items() if "default" not in p} == set(ANSWERS) == {"deployerArn"}
    # Not on PyPI: the library comes from a git URL pinned to a commit, a clone or a wheel (see the next test).
    assert re.search(r"^eks-karpenter @ \$\{EKS_KARPENTER_SOURCE\}$", (TEMPLATE / "requirements.txt").read_text(),
                     re.M)
    assert "venv/" in (TEMPLATE / ".gitignore").read_text()
    main = (TEMPLATE / "__main__.py").read_text()
    assert "from eks_karpenter import build_platform, read_stack_config" in main


def test_the_docs_say_which_python_and_to_commit_a_literal_library_source() -> None:
    """The Python the package requires is stated beside the first commands; after `pulumi new` the variable's line
    is replaced by the literal pinned source and committed, so teammates, CI and upgrades see the same library."""
    import tomllib

    required = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["requires-python"]
    assert required == ">=3.11"
    readme, library, requirements = (" ".join(path.read_text().split()) for path in (
        REPO / "README.md", REPO / "docs" / "library.md", TEMPLATE / "requirements.txt"))
    assert "Python 3.11 or newer" in readme[readme.index("## Two commands"):readme.index("```bash")]
    assert "Python 3.11 or newer" in readme[readme.index("## Use it in your own project"):]
    assert "Python 3.11 or newer" in library[:library.index("```bash")]
    for text in (readme, library, requirements):
        assert re.search(r"Right after `pulumi new`, replace the .*? with .*?git\+https://github\.com/<org>/"
                         r"eks-karpenter@<commit>.*? and commit it", text), text[:200]


def test_the_templates_defaults_fit_a_first_cluster_and_the_plan_says_so(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """One NAT gateway for all zones, and one pool whose ceiling is a figure a newcomer expects (16 vCPUs), both
    in the plan's first lines with what the ceiling costs."""
    from eks_karpenter.tools.cli import main

    project = tmp_path / "platform"
    fill_template(project)
    assert main(["plan", "--stack", "dev", "--program", str(project)]) == 0
    head = capsys.readouterr().out.splitlines()[:3]
    assert head[1] == "  NAT gateways: 1, one for all zones (network.natGateways: single)"
    assert re.fullmatch(r"  NodePool ceilings: default cpu 16, memory 64Gi \(up to \$[\d,]+/month at the cpu "
                        r"limit, on-demand\)", head[2])
    assert int(re.sub(r"\D", "", head[2].split("$")[1].split("/")[0])) < 2_500


@pytest.mark.slow
def test_the_templates_requirements_install_the_local_wheel_and_plan(tmp_path: Path) -> None:
    """As the template's requirements.txt says: EKS_KARPENTER_SOURCE names a wheel built from a clone, and
    `pip install -r requirements.txt` in a fresh venv installs it; its `eks-karpenter` then plans the template."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    project = tmp_path / "platform"
    fill_template(project)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_") and k != "PYTHONPATH"}
    env["EKS_KARPENTER_SOURCE"] = built_wheel().as_uri()
    # Dependencies come from the dev venv (offline); only what requirements.txt names is installed here.
    proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install",
                           "--no-deps", "--no-index", "--disable-pip-version-check", "-q", "-r", "requirements.txt"],
                          cwd=project, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    site = next((venv / "lib").glob("python3*/site-packages"))
    [dist] = site.glob("eks_karpenter-*.dist-info")
    assert dist.name == f"eks_karpenter-{eks_karpenter.__version__}.dist-info"
    run_env = {**env, "PYTHONPATH": str(dev_site_packages()), "PYTHONNOUSERSITE": "1", "VIRTUAL_ENV": str(venv)}
    _assert_platform(plan([str(venv / "bin" / "eks-karpenter"), "plan", "--stack", "dev"], project, run_env,
                          warnings=TEMPLATE_WARNINGS))


@pytest.mark.slow
def test_the_wheel_alone_is_importable_outside_the_repo(installed: tuple[Path, dict[str, str]],
                                                        tmp_path: Path) -> None:
    venv, env = installed
    probe = ("import importlib.util, json, eks_karpenter, pulumi; print(json.dumps({'file': eks_karpenter.__file__,"
             " 'pulumi': pulumi.__file__, 'components': importlib.util.find_spec('components') is not None,"
             " 'infra': importlib.util.find_spec('infra') is not None, 'api': sorted(eks_karpenter.__all__)}))")
    proc = subprocess.run([str(venv / "bin" / "python"), "-c", probe], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    assert Path(found["file"]).is_relative_to(venv), found["file"]
    assert not Path(found["pulumi"]).is_relative_to(REPO / "components")
    assert found["components"] is False and found["infra"] is False
    assert {"build_platform", "read_stack_config", "StackConfig", "plan_program"} <= set(found["api"])
    site = next((venv / "lib").glob("python3*/site-packages"))
    assert not (site / "components").exists() and not (site / "infra").exists()
    assert (venv / "bin" / "eks-karpenter").is_file()


def _assert_platform(document: dict[str, Any]) -> None:
    assert document["project"] == PROJECT and document["stack"] == "dev"
    assert names(document, "eks:index:Cluster") == {"cluster-eks"}
    assert names(document, "eks-karpenter:index:Karpenter") == {"karpenter"}
    assert {"karpenter-crd", "karpenter-controller"} <= names(document, "kubernetes:helm.sh/v3:Release")
    assert names(document, "kubernetes:karpenter.sh/v1:NodePool") == {"nodepool-default"}
    assert names(document, "aws:ec2/vpc:Vpc") == {"network-vpc"}
    # A laptop `pulumi up` reaches the API server as the declared deployer.
    [cluster] = [r for r in document["resources"] if r["type"] == "eks:index:Cluster"]
    assert cluster["inputs"]["endpointPublicAccess"] is True and cluster["inputs"]["publicAccessCidrs"] == ["0.0.0.0/0"]
    [entry] = [r for r in document["resources"] if r["type"] == "aws:eks/accessEntry:AccessEntry"
               and r["urn"].endswith("::cluster-entry-123456789012-role-admin")]
    assert entry["inputs"]["principalArn"] == ANSWERS["deployerArn"]
    assert any("open to the internet" in w for w in document["warnings"])


@pytest.mark.slow
def test_the_installed_cli_plans_the_template_from_its_folder(installed: tuple[Path, dict[str, str]],
                                                              tmp_path: Path) -> None:
    venv, env = installed
    project = tmp_path / "platform"
    config = fill_template(project)
    document = plan([str(venv / "bin" / "eks-karpenter"), "plan", "--stack", "dev"], project, env, TEMPLATE_WARNINGS)
    _assert_platform(document)
    assert document["outputs"]["clusterName"] == config[f"{PROJECT}:clusterName"]
    region = config["aws:region"]
    assert names(document, "aws:ec2/subnet:Subnet") == {f"network-{kind}-{region}{z}" for kind in ("private", "public")
                                                        for z in "abc"}


@pytest.mark.slow
def test_python_m_eks_karpenter_cli_plans_the_template(tmp_path: Path) -> None:
    project = tmp_path / "platform"
    fill_template(project)
    _assert_platform(plan([sys.executable, "-m", "eks_karpenter.tools.cli", "plan", "--stack", "dev"], project,
                          warnings=TEMPLATE_WARNINGS))


def _team_batch(document: dict[str, Any]) -> None:
    assert document["project"] == "team-batch"
    assert names(document, "kubernetes:karpenter.sh/v1:NodePool") == {"batch-pool"}
    assert names(document, "kubernetes:apps/v1:Deployment") == {"report-builder"}


@pytest.mark.slow
def test_the_installed_cli_plans_team_batch_with_the_platform(installed: tuple[Path, dict[str, str]],
                                                              tmp_path: Path) -> None:
    venv, env = installed
    project = copy_project(REPO / "examples" / "team-batch", tmp_path / "team-batch")
    document = plan([str(venv / "bin" / "eks-karpenter"), "plan", "--stack", "dev", "--platform", str(REPO)],
                    project, env)
    _team_batch(document)


@pytest.mark.slow
def test_the_installed_cli_plans_team_batch_with_an_outputs_file(installed: tuple[Path, dict[str, str]],
                                                                 tmp_path: Path) -> None:
    venv, env = installed
    project = copy_project(REPO / "examples" / "team-batch", tmp_path / "team-batch")
    outputs = tmp_path / "outputs.json"
    outputs.write_text(json.dumps({"organization/eks-karpenter/dev": {
        "kubeconfig": "{\"apiVersion\": \"v1\", \"kind\": \"Config\"}", "clusterName": "from-file",
        "nodeRoleName": "from-file-node-role"}}))
    # Outputs without `teamPolicies`, as from a platform before the output: one warning that nothing was checked.
    document = plan([str(venv / "bin" / "eks-karpenter"), "plan", "--stack", "dev", "--stack-outputs",
                     str(outputs)], project, env, warnings=1)
    assert any("exports no teamPolicies" in w for w in document["warnings"])
    _team_batch(document)
    [node_class] = [r for r in document["resources"] if r["type"] == "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"]
    assert node_class["inputs"]["spec"]["role"] == "from-file-node-role"


@pytest.mark.slow
def test_the_installed_policy_pack_command_writes_the_shipped_pack(installed: tuple[Path, dict[str, str]],
                                                                   tmp_path: Path) -> None:
    venv, env = installed
    proc = subprocess.run([str(venv / "bin" / "eks-karpenter"), "policy-pack", "--out", str(tmp_path / "pack")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    for name in ("guardrails.py", "__main__.py", "requirements.txt"):
        assert (tmp_path / "pack" / name).read_bytes() == (REPO / "policy" / name).read_bytes()
    assert "pulumi preview --policy-pack" in proc.stderr
