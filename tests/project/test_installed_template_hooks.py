"""A project made from the template, installed as its requirements.txt says with only what the library declares
(no extra, no `aws` command), runs what `pulumi up`, `preview` and `destroy` run in the program against a
cluster: each destroy hook and the in-cluster look-ups, against the fake API server, with an EKS token minted
in-process."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.project.test_installed_wheel import fill_template
from tests.support.fake_kube import FakeCluster, self_signed
from tests.support.wheel import built_wheel, declared_site

OWN = ["general", "critical"]

SCRIPT = r'''
import json, sys
import pulumi
from eks_karpenter.platform.cluster_access import ClusterAccess
from eks_karpenter.platform.karpenter.teardown import Scope, TeardownRefused
from eks_karpenter.platform.karpenter.teardown_hooks import TeardownHooks
from eks_karpenter.platform.preflight import probe
from eks_karpenter.platform.release_owner import ReleaseOwner
from eks_karpenter.platform.stack_cluster import StackCluster
from eks_karpenter.tools.engine.runner import plan_components

url, ca = sys.argv[1], sys.argv[2]
access = ClusterAccess("prod-karpenter", url, ca, "us-east-1")
made = []

def build():
    # As the program binds them: registered under the (offline) engine, the cluster's access an Output.
    cluster = StackCluster("prod-karpenter", pulumi.Output.from_input(access), url, ca)
    scope = Scope("prod-karpenter", frozenset({"general", "critical"}), created_cluster=True)
    made.append((TeardownHooks(scope, cluster, "5s"), ReleaseOwner(cluster, "acme-platform.dev")))

result = plan_components(build)
assert result.error is None, result.error
[(hooks, owner)] = made
hooks.poll = 0.01
args = pulumi.ResourceHookArgs(urn="urn:x", id="x", name="x", type="t",
                               new_outputs={"namespace": "karpenter", "name": "karpenter"})
out = {}
for name, hook in (("owner", owner.hook), ("check", hooks.check), ("drain", hooks.drain)):
    try:
        hook.callback(args)
        out[name] = "passed"
    except TeardownRefused as refused:
        out[name] = "refused: " + str(refused).splitlines()[0]
request = {"clusterName": "prod-karpenter", "endpoint": url, "certificateAuthority": ca, "region": "us-east-1",
           "releases": ["karpenter"], "deployments": [], "groups": ["monitoring.coreos.com"]}
out["preflight"] = probe.probe(request)
out["crds"] = probe.crds(request)
import importlib.util
out["extras"] = {m: importlib.util.find_spec(m) is not None for m in ("pytest", "jsonschema", "cfn_lint")}
print(json.dumps(out))
'''


def pool(name: str) -> dict[str, Any]:
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name}, "spec": {}}


@pytest.fixture(scope="module")
def template_env(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str], set[str]]:
    """The template filled in and installed with `pip install -r requirements.txt` (the wheel), its dependencies
    those the wheel declares, and an environment with AWS credentials but no `aws` on the PATH."""
    root = tmp_path_factory.mktemp("template")
    venv, project = root / "venv", root / "platform"
    fill_template(project)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PIP_", "AWS_")) and k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["EKS_KARPENTER_SOURCE"] = built_wheel().as_uri()
    proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install",
                           "--no-deps", "--no-index", "--disable-pip-version-check", "-q", "-r", "requirements.txt"],
                          cwd=project, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    site, dists = declared_site(root / "declared")
    env.update(PYTHONPATH=str(site), PYTHONNOUSERSITE="1", VIRTUAL_ENV=str(venv), PATH=str(venv / "bin"),
               AWS_ACCESS_KEY_ID="AKIAIOSFODNN7EXAMPLE", AWS_SECRET_ACCESS_KEY="wJalrXUtnFEMI/K7MDENG/bPxRfiCY",
               AWS_CONFIG_FILE=str(root / "none"), AWS_SHARED_CREDENTIALS_FILE=str(root / "none"),
               AWS_EC2_METADATA_DISABLED="true")
    return project, env, dists


def run_hooks(template_env: tuple[Path, dict[str, str], set[str]], url: str, ca: bytes) -> dict[str, Any]:
    project, env, _ = template_env
    proc = subprocess.run([str(Path(env["VIRTUAL_ENV"]) / "bin" / "python"), "-c", SCRIPT, url,
                           base64.b64encode(ca).decode()],
                          cwd=project, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.slow
def test_the_template_installs_what_its_hooks_need_and_nothing_else(
        template_env: tuple[Path, dict[str, str], set[str]]) -> None:
    _, env, dists = template_env
    assert {"kubernetes", "boto3", "botocore"} <= dists
    assert not dists & {"pytest", "mypy", "ruff", "jsonschema", "cfn-lint"}
    assert env["PATH"] == str(Path(env["VIRTUAL_ENV"]) / "bin") and not (Path(env["PATH"]) / "aws").exists()


@pytest.mark.slow
def test_each_hook_and_look_up_runs_from_the_installed_template(
        template_env: tuple[Path, dict[str, str], set[str]], tmp_path: Path) -> None:
    tls = self_signed(tmp_path)
    if tls is None:
        pytest.skip("needs the openssl command to make the fake API server's TLS certificate")
    cluster = FakeCluster([pool("general"), pool("critical")])
    cluster.secrets = [helm_secret("karpenter", "karpenter", 1)]
    cluster.add_claim("general-a", "general")
    cluster.add_service("web", "frontend", type_="LoadBalancer")
    with cluster.serving(tls) as url:
        refused = run_hooks(template_env, url, tls.ca_pem)
        assert refused["check"].startswith("refused") and refused["drain"].startswith("refused")
        assert not cluster.deleted_pools  # the drain refused before deleting a pool
        cluster.services.clear()
        done = run_hooks(template_env, url, tls.ca_pem)
    assert done["owner"] == done["check"] == done["drain"] == "passed"
    assert cluster.secrets[0]["metadata"]["labels"]["eks-karpenter.io/stack"] == "acme-platform.dev"
    assert cluster.deleted_pools == set(OWN) and not cluster.nodeclaims
    assert done["preflight"]["reachable"] is True and "error" not in done["preflight"]
    assert done["crds"] == {"reachable": True, "crds": []}
    assert not any(done["extras"].values())
    # Every call carried an EKS token minted in the process: no `aws` command was there to run.
    assert cluster.authorizations and all(a.startswith("Bearer k8s-aws-v1.") for a in cluster.authorizations)


def helm_secret(namespace: str, name: str, revision: int) -> dict[str, Any]:
    """A release revision as Helm v3 stores it (labels only: the hooks read no more)."""
    return {"metadata": {"namespace": namespace, "name": f"sh.helm.release.v1.{name}.v{revision}",
                         "labels": {"owner": "helm", "name": name, "status": "deployed", "version": str(revision)}},
            "data": {}}
