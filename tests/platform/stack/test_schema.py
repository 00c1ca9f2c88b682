"""The committed JSON Schema (for editors) matches the config models, and every stack file satisfies it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml
from eks_karpenter.platform.stack import stack_file_schema

from tests.support import REPO, STACKS

SCHEMA_FILE = REPO / "schema" / "stack.schema.json"


def test_committed_schema_is_in_sync() -> None:
    expected = json.dumps(stack_file_schema(), indent=2, sort_keys=True) + "\n"
    assert SCHEMA_FILE.read_text() == expected, "run: python -m infra schema > schema/stack.schema.json"


@pytest.mark.slow
def test_schema_command_prints_it() -> None:
    out = subprocess.run([sys.executable, "-m", "infra", "schema"], cwd=REPO, check=True, capture_output=True,
                         text=True).stdout
    assert json.loads(out) == json.loads(SCHEMA_FILE.read_text())


@pytest.mark.parametrize("stack", STACKS)
def test_stack_files_validate_against_the_schema(stack: str) -> None:
    body = yaml.safe_load((REPO / "stacks" / f"Pulumi.{stack}.yaml").read_text())
    jsonschema.Draft202012Validator(json.loads(SCHEMA_FILE.read_text())).validate(body)


def test_schema_rejects_typos_and_unknown_keys() -> None:
    validator = jsonschema.Draft202012Validator(stack_file_schema())
    body = yaml.safe_load((REPO / "stacks" / "Pulumi.dev.yaml").read_text())
    body["config"]["eks-karpenter:netwrok"] = {}
    assert not validator.is_valid(body)
    body["config"].pop("eks-karpenter:netwrok")
    body["config"]["eks-karpenter:network"]["natGatways"] = "single"
    assert not validator.is_valid(body)


@pytest.mark.parametrize(("key", "valid"), [
    ("karpenter:nodePools", False), ("aws:regoin", False), ("kubernetes:kubeconfig", False), ("aws:profile", True),
    ("pulumi:disable-default-providers", True), ("tags", True), ("myplatform:slackChannel", True),
    ("datadog:apiKey", True), ("eks_karpenter:nodePools", False)])
def test_schema_knows_which_namespaces_are_read(key: str, valid: bool) -> None:
    validator = jsonschema.Draft202012Validator(stack_file_schema())
    body = yaml.safe_load((REPO / "stacks" / "Pulumi.dev.yaml").read_text())
    body["config"][key] = {"environment": "dev"} if key == "tags" else "x"
    if key == "tags":
        body["config"].pop("eks-karpenter:tags")
    assert validator.is_valid(body) == valid


@pytest.mark.slow
def test_a_project_of_another_name_gets_its_own_namespace_in_the_schema(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: myplatform\nruntime: python\n")
    out = subprocess.run([sys.executable, "-m", "eks_karpenter.tools.cli", "schema", "--program", str(tmp_path)],
                         check=True, capture_output=True, text=True).stdout
    schema = json.loads(out)
    config = schema["properties"]["config"]
    assert "myplatform:nodePools" in config["properties"] and "eks-karpenter:nodePools" not in config["properties"]
    # Descriptions name keys in the project's namespace; RBAC group names and type tokens stay as they are.
    assert re.findall(r"eks-karpenter:(?!team:)", out) == []
    assert "myplatform:cluster" in json.dumps(config["properties"]["myplatform:clusterName"])
    validator = jsonschema.Draft202012Validator(schema)
    body = {"config": {"aws:region": "eu-west-1", "myplatform:clusterName": "x", "datadog:apiKey": "k"}}
    assert validator.is_valid(body)
    body["config"]["eks-karpenter:nodePools"] = []
    assert not validator.is_valid(body)
