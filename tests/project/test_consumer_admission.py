"""A consumer stack meets the platform's admission policies at plan time: the policies the platform exports
(`teamPolicies`, the objects it applies) evaluated on what the consumer sends, each refusal with the policy's own
message and the consumer's key; the example project fails its preview before anything reaches the cluster."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from eks_karpenter import consumer_admission, render_node_class, render_node_pool, run_plan, scheduling_for
from eks_karpenter.platform.nodepool.config import NodeClassConfig, NodePoolConfig

from tests.support import REPO, plan_stack

EXAMPLE = REPO / "examples" / "team-batch"
PLATFORM = "organization/eks-karpenter/dev"
TAINT = {"key": "eks-karpenter/team", "value": "batch", "effect": "NoSchedule"}
POOL = {"name": "batch-spot", "nodeClass": "batch-spot", "limits": {"cpu": "200", "memory": "400Gi"},
        "labels": {"eks-karpenter/team": "batch"}, "taints": [TAINT]}


def exported() -> dict[str, Any]:
    """The dev platform's `teamPolicies` output, as a consumer's StackReference reads it."""
    return copy.deepcopy(plan_stack("dev").outputs["teamPolicies"])


def message(policy: str, fragment: str) -> str:
    """The one validation message of the exported `policy` that contains `fragment`."""
    [found] = [v["message"] for p in exported()["batch"] if p["metadata"]["name"] == policy
               for v in p["spec"]["validations"] if fragment in v["message"]]
    return str(found)


def pool(**changes: Any) -> dict[str, Any]:
    manifest: dict[str, Any] = render_node_pool(NodePoolConfig.model_validate({**POOL, **changes}))
    return manifest


def node_class(**changes: Any) -> dict[str, Any]:
    platform = plan_stack("dev").outputs
    manifest: dict[str, Any] = render_node_class(NodeClassConfig.model_validate({"name": "batch-spot"}),
                                                 platform["clusterName"],
                                 platform["nodeRoleName"], {"team": "batch"})
    manifest["spec"].update(changes)
    return manifest


def deployment(**pod: Any) -> dict[str, Any]:
    template = {"metadata": {"labels": {"app": "r"}},
                "spec": {**scheduling_for(NodePoolConfig.model_validate(POOL)), **pod,
                         "containers": [{"name": "r", "image": "python:3.13-slim"}]}}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "r", "namespace": "batch"},
            "spec": {"selector": {"matchLabels": {"app": "r"}}, "template": template}}


def denials(key: str, obj: dict[str, Any]) -> list[str]:
    checked = consumer_admission("batch", "batch", exported(), [(key, obj)], platform=PLATFORM)
    assert checked.warnings == ()
    return list(checked.denials)


NODE_POOLS, WORKLOADS = "eks-karpenter-team-batch-node-pools", "eks-karpenter-team-batch-workloads"


@pytest.mark.parametrize(("key", "obj", "policy", "fragment", "what"), [
    ("t:nodePool", pool(name="other-spot"), NODE_POOLS, "may only create", "NodePool 'other-spot'"),
    ("t:nodePool", pool(limits={"cpu": "201", "memory": "400Gi"}), NODE_POOLS, "must set limits", "NodePool"),
    ("t:nodePool", pool(limits={"cpu": "200", "memory": "401Gi"}), NODE_POOLS, "must set limits", "NodePool"),
    ("t:nodePool", pool(taints=[]), NODE_POOLS, "carries the taint", "NodePool"),
    ("t:nodePool", pool(labels={}), NODE_POOLS, "carries the label", "NodePool"),
    ("t:nodeClass", node_class(userData="#!/bin/sh"), NODE_POOLS, "userData", "EC2NodeClass 'batch-spot'"),
    ("t:workload", deployment(tolerations=[{"operator": "Exists"}]), WORKLOADS, "names a taint key",
     "a Pod of Deployment 'r' in namespace 'batch'"),
])
def test_each_refusal_is_the_policys_own_message_at_the_consumers_key(key: str, obj: dict[str, Any], policy: str,
                                                                       fragment: str, what: str) -> None:
    [denial] = denials(key, obj)
    assert denial.startswith(f"{key}: {what}")
    # A pod that keeps its spec on update is not held again (the pod rules hold what a request sets); a pod's spec
    # is set when it is created, which every rollout does.
    when = "create" if policy == WORKLOADS else "create and update"
    assert f"admission policy {policy} on {when}: {message(policy, fragment)}" in denial
    assert denial.endswith(message(policy, fragment))


def test_a_compliant_consumer_is_admitted() -> None:
    objects = [("t:nodeClass", node_class()), ("t:nodePool", pool()), ("t:workload", deployment())]
    checked = consumer_admission("batch", "batch", exported(), objects, platform=PLATFORM)
    assert checked.denials == () and checked.warnings == ()


def test_a_platform_without_the_output_is_one_warning_that_nothing_was_checked() -> None:
    checked = consumer_admission("batch", "batch", None, [("t:nodePool", pool(name="other"))], platform=PLATFORM)
    assert checked.denials == ()
    [warning] = checked.warnings
    assert PLATFORM in warning and "teamPolicies" in warning and "not checked" in warning


def test_without_the_consumer_extra_nothing_is_checked_and_the_warning_says_how_to_install_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "cel_expr_python", None)  # `import cel_expr_python` now fails
    refused = [("t:nodePool", pool(name="other", limits={"cpu": "900"}))]
    checked = consumer_admission("batch", "batch", exported(), refused, platform=PLATFORM)
    assert checked.denials == ()
    [warning] = checked.warnings
    assert PLATFORM in warning and "not checked" in warning and "cel-expr-python" in warning
    assert "pip install 'eks-karpenter[consumer]'" in warning


@pytest.mark.slow  # starts a Python process
def test_the_platform_plans_without_the_evaluator_and_never_imports_it() -> None:
    """The platform's own runs (its program, the plan) import nothing of cel-expr-python, and plan with it
    uninstalled: only a consumer's check needs the `consumer` extra."""
    script = (
        "import sys, runpy\n"
        "import eks_karpenter, eks_karpenter.platform.build\n"
        "from eks_karpenter import consumer_admission, build_platform\n"
        "assert not [m for m in sys.modules if m.startswith('cel_expr_python')], 'imported'\n"
        "sys.modules['cel_expr_python'] = None\n"
        "sys.argv = ['infra', 'plan', '--stack', 'dev', '--format', 'urns']\n"
        "runpy.run_module('infra', run_name='__main__')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "components"), str(REPO)])}
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (REPO / "tests" / "golden" / "dev.urns").read_text()


def test_a_policy_the_evaluator_cannot_model_is_a_warning_not_a_guess() -> None:
    policies = exported()
    policies["batch"][0]["spec"]["matchConstraints"]["objectSelector"] = {"matchLabels": {"a": "b"}}
    checked = consumer_admission("batch", "batch", policies, [("t:nodePool", pool())], platform=PLATFORM)
    [warning] = checked.warnings
    assert warning.startswith("t:nodePool: NodePool 'batch-spot'") and "objectSelector" in warning


def test_the_exported_policies_are_the_objects_the_platform_applies() -> None:
    doc = plan_stack("dev")
    applied = [r.inputs for r in doc.by_type("kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy")]
    flat = [p for policies in doc.outputs["teamPolicies"].values() for p in policies]

    def canonical(objs: list[dict[str, Any]]) -> list[str]:
        return sorted(json.dumps(o, sort_keys=True) for o in objs)

    assert canonical(flat) == canonical(applied) and len(flat) == 2
    assert {t: [p["metadata"]["name"] for p in ps] for t, ps in doc.outputs["teamPolicies"].items()} == \
        {"batch": [NODE_POOLS, WORKLOADS]}


# --- the example project: planned under the mock runtime, in process ---------------------------------------------

def _example(tmp_path: Path, **changes: Any) -> Path:
    """A copy of examples/team-batch whose stack file's `team-batch:<key>` values are updated by `changes`."""
    target = tmp_path / "team-batch"
    shutil.copytree(EXAMPLE, target)
    stack_file = target / "stacks" / "Pulumi.dev.yaml"
    body = yaml.safe_load(stack_file.read_text())
    for key, update in changes.items():
        body["config"][f"team-batch:{key}"].update(update)
    stack_file.write_text(yaml.safe_dump(body))
    return target


def _plan(program: Path, outputs: dict[str, Any] | None = None) -> Any:
    return run_plan(program, "dev", stack_outputs={PLATFORM: outputs or plan_stack("dev").outputs})


def test_a_refused_pool_fails_the_consumers_plan_before_anything_reaches_the_cluster(tmp_path: Path) -> None:
    result = _plan(_example(tmp_path, nodePool={"name": "other-spot", "limits": {"cpu": "900", "memory": "1Ti"}}))
    assert result.error is not None
    text = str(result.error)
    assert text.startswith("invalid stack config, 2 problems:")
    for fragment in ("may only create", "must set limits"):
        assert (f"stacks/Pulumi.dev.yaml: team-batch:nodePool: NodePool 'other-spot' is refused by the platform's "
                f"({PLATFORM}) admission policy {NODE_POOLS} on create and update: {message(NODE_POOLS, fragment)}"
                in text), text
    assert "eks-karpenter:" not in text.replace(NODE_POOLS, "")
    # The provider never got its kubeconfig: nothing was sent to the cluster.
    assert [r.type for r in result.document.resources if r.type.startswith(("kubernetes:", "pulumi:providers"))] == []


def test_the_example_is_admitted_and_says_nothing(tmp_path: Path) -> None:
    result = _plan(_example(tmp_path))
    assert result.error is None, result.error
    assert result.document.warnings == []
    assert len(result.document.by_type("kubernetes:karpenter.sh/v1:NodePool")) == 1


def test_an_older_platform_without_the_output_plans_with_one_warning(tmp_path: Path) -> None:
    outputs = {k: v for k, v in plan_stack("dev").outputs.items() if k != "teamPolicies"}
    result = _plan(_example(tmp_path, nodePool={"name": "other-spot"}), outputs)
    assert result.error is None, result.error
    [warning] = result.document.warnings
    assert "exports no teamPolicies" in warning and PLATFORM in warning
