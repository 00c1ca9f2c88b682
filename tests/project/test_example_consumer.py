"""examples/team-batch: another team's project, planned offline against this platform's stack outputs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support import REPO, plan_stack, requires_upstream

EXAMPLE = REPO / "examples" / "team-batch"


def plan(program: Path, stack: str = "dev", fmt: str = "json") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "infra", "plan", "--program", str(program), "--stack", stack,
                           "--format", fmt], cwd=REPO, capture_output=True, text=True)


def resources() -> dict[str, dict[str, Any]]:
    proc = plan(EXAMPLE)
    assert proc.returncode == 0, proc.stderr
    return {r["type"]: r for r in json.loads(proc.stdout)["resources"]}


@pytest.mark.slow
def test_example_builds_its_pool_class_and_pinned_deployment_on_the_platform() -> None:
    by_type = resources()
    platform = plan_stack("dev").outputs
    node_class = by_type["kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"]["inputs"]["spec"]
    assert node_class["role"] == platform["nodeRoleName"]
    assert node_class["subnetSelectorTerms"] == [{"tags": {"karpenter.sh/discovery": platform["clusterName"]}}]
    pool = by_type["kubernetes:karpenter.sh/v1:NodePool"]["inputs"]
    assert pool["spec"]["template"]["spec"]["nodeClassRef"]["name"] == "batch-spot"
    pod = by_type["kubernetes:apps/v1:Deployment"]["inputs"]["spec"]["template"]["spec"]
    assert pod["nodeSelector"]["karpenter.sh/nodepool"] == "batch-spot"
    toleration = {"key": "eks-karpenter/team", "operator": "Equal", "value": "batch", "effect": "NoSchedule"}
    assert toleration in pod["tolerations"]
    provider = by_type["pulumi:providers:kubernetes"]["inputs"]
    assert provider["kubeconfig"] == "[secret]"  # the platform's kubeconfig output is secret


@pytest.mark.slow
@requires_upstream
def test_example_objects_pass_the_crds() -> None:
    from tests.support.crd_validator import validate_object

    for type_, r in resources().items():
        if type_.startswith("kubernetes:karpenter"):
            manifest = {k: r["inputs"][k] for k in ("apiVersion", "kind", "metadata", "spec")}
            assert validate_object(manifest) == [], type_


def _copy(tmp_path: Path) -> Path:
    target = tmp_path / "team-batch"
    shutil.copytree(EXAMPLE, target)
    return target


@pytest.mark.slow
def test_bad_team_config_is_one_clean_error(tmp_path: Path) -> None:
    program = _copy(tmp_path)
    stack_file = program / "stacks" / "Pulumi.dev.yaml"
    body = yaml.safe_load(stack_file.read_text())
    body["config"]["team-batch:nodePool"]["capacityTypes"] = ["spotty"]
    body["config"]["team-batch:workload"]["replicas"] = 0
    (program / "stacks" / "Pulumi.bad.yaml").write_text(yaml.safe_dump(body))
    proc = plan(program, "bad", "tree")
    assert proc.returncode == 1 and proc.stdout == ""
    assert "Traceback" not in proc.stderr
    assert "stacks/Pulumi.bad.yaml: team-batch:nodePool.capacityTypes[0]: " in proc.stderr
    assert "stacks/Pulumi.bad.yaml: team-batch:workload.replicas: " in proc.stderr


@pytest.mark.slow
def test_a_reference_to_an_unknown_stack_is_a_clean_error(tmp_path: Path) -> None:
    program = _copy(tmp_path)
    stack_file = program / "stacks" / "Pulumi.dev.yaml"
    stack_file.write_text(stack_file.read_text().replace("organization/eks-karpenter/dev", "acme/other/dev"))
    proc = plan(program, "dev", "tree")
    assert proc.returncode == 1 and proc.stdout == ""
    assert "no offline outputs for stack reference 'acme/other/dev'" in proc.stderr


@pytest.mark.slow
def test_example_deploys_into_the_namespace_its_access_is_scoped_to() -> None:
    proc = plan(EXAMPLE)
    assert proc.returncode == 0, proc.stderr
    body = json.loads(proc.stdout)
    by_type = {r["type"]: r for r in body["resources"]}
    platform = plan_stack("dev")
    deployment = by_type["kubernetes:apps/v1:Deployment"]["inputs"]["metadata"]
    assert deployment["namespace"] in platform.outputs["teamNamespaces"]["batch"]
    created = {r.inputs["metadata"]["name"] for r in platform.by_type("kubernetes:core/v1:Namespace")}
    assert deployment["namespace"] in created
    # the team's pool and class are deleted within a bounded time (their finalizers wait for the drain)
    for type_ in ("kubernetes:karpenter.sh/v1:NodePool", "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"):
        assert by_type[type_]["options"]["customTimeouts"] == {"delete": "15m"}


@pytest.mark.slow
def test_example_objects_are_admitted_by_the_platforms_team_policy() -> None:
    """The consumer stack runs as the team: the dev platform's admission policy must let its pool and class in."""
    from eks_karpenter.platform.access.plan import team_group

    from tests.support.admission import admit

    policies = {p.inputs["metadata"]["name"]: p.inputs for p in
                plan_stack("dev").by_type("kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy")}
    ours = resources()
    for type_, r in ours.items():
        if type_.startswith("kubernetes:karpenter"):
            manifest = {k: r["inputs"][k] for k in ("apiVersion", "kind", "metadata", "spec")}
            decision = admit(policies["eks-karpenter-team-batch-node-pools"], "CREATE", [team_group("batch")],
                             manifest)
            assert decision.matched and decision.allowed, (type_, decision.denied)
    # Its Deployment's pods, as the ReplicaSet controller creates them in the team's namespace.
    template = ours["kubernetes:apps/v1:Deployment"]["inputs"]["spec"]["template"]
    pod = {"apiVersion": "v1", "kind": "Pod", **template}
    decision = admit(policies["eks-karpenter-team-batch-workloads"], "CREATE", ["system:serviceaccounts"], pod,
                     resource="pods", namespace="batch")
    assert decision.matched and decision.allowed, decision.denied


def test_example_uses_only_the_public_api() -> None:
    """A consumer needs nothing private: every `eks_karpenter` import of the example is a name of `__all__`."""
    import ast

    import eks_karpenter

    tree = ast.parse((EXAMPLE / "__main__.py").read_text())
    modules = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    modules |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    ours = {m for m in modules if m.split(".")[0] == "eks_karpenter"}
    assert ours == {"eks_karpenter"}, ours
    names = {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module == "eks_karpenter"
             for a in n.names}
    assert names <= set(eks_karpenter.__all__), names - set(eks_karpenter.__all__)


@pytest.mark.slow
def test_example_plans_without_access_warnings() -> None:
    proc = plan(EXAMPLE)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["warnings"] == []


@pytest.mark.slow
def test_a_team_or_namespace_the_platform_does_not_grant_is_a_warning_naming_both_keys(tmp_path: Path) -> None:
    program = _copy(tmp_path)
    stack_file = program / "stacks" / "Pulumi.dev.yaml"
    text = stack_file.read_text()
    stack_file.write_text(text.replace("team-batch:namespace: batch", "team-batch:namespace: analytics"))
    proc = plan(program)
    assert proc.returncode == 0, proc.stderr
    [warning] = json.loads(proc.stdout)["warnings"]
    assert "team-batch:namespace 'analytics'" in warning and "eks-karpenter:access teams[batch].namespaces" in warning
    stack_file.write_text(text.replace("team-batch:team: batch", "team-batch:team: ml"))
    proc = plan(program)
    assert proc.returncode == 0, proc.stderr
    [warning] = json.loads(proc.stdout)["warnings"]
    assert "team-batch:team 'ml'" in warning and "eks-karpenter:access teams" in warning


def test_consumer_access_warnings_is_pure() -> None:
    from eks_karpenter import consumer_access_warnings

    granted = {"batch": ["batch"], "web": ["web", "web-canary"]}
    kw = {"team_key": "t:team", "namespace_key": "t:namespace", "platform": "org/p/dev"}
    assert consumer_access_warnings("web", "web-canary", granted, **kw) == []
    [missing_team] = consumer_access_warnings("ml", "ml", granted, **kw)
    assert "t:team 'ml'" in missing_team and "teams it knows: batch, web" in missing_team
    [missing_ns] = consumer_access_warnings("web", "batch", granted, **kw)
    assert "t:namespace 'batch'" in missing_ns and "teams[web].namespaces: web, web-canary" in missing_ns


def test_the_example_pins_the_librarys_current_version_with_the_consumer_extra() -> None:
    """The example checks itself against the platform's admission policies, so it installs the evaluator too."""
    import eks_karpenter

    lines = (EXAMPLE / "requirements.txt").read_text().splitlines()
    pins = [line for line in lines if line.startswith("eks-karpenter")]
    assert pins == [f"eks-karpenter[consumer]=={eks_karpenter.__version__}"]
    assert "-e ../..[consumer]" in lines  # from this repository, so the pin is checked against the checkout's version
