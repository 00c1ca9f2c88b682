"""Importing the library stays cheap: names load on first use, config models build when first validated."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO


def _run(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True, capture_output=True,
                          text=True).stdout.strip()


def test_import_eks_karpenter_loads_no_concern_until_used() -> None:
    out = _run("import sys, eks_karpenter; print(sorted(m for m in sys.modules if m.startswith('eks_karpenter.')));"
               "eks_karpenter.NodePool; print('eks_karpenter.nodepool' in sys.modules)")
    loaded, used = out.splitlines()
    assert loaded == "[]" and used == "True"


def test_importing_the_platform_builds_no_validator_and_reads_no_migration_code() -> None:
    out = _run("import sys, eks_karpenter.platform; from eks_karpenter.stack import StackConfig;"
               "from eks_karpenter.nodepool.config import NodePoolConfig;"
               "print(StackConfig.__pydantic_complete__, NodePoolConfig.__pydantic_complete__,"
               " 'eks_karpenter.migrate' in sys.modules, 'jsonschema' in sys.modules)")
    assert out == "False False False False"


def test_field_descriptions_are_there_when_asked() -> None:
    from eks_karpenter.nodepool.config import NodePoolConfig

    assert all(field.description for field in NodePoolConfig.model_fields.values())
    schema = NodePoolConfig.model_json_schema(by_alias=True)
    assert schema["properties"]["capacityTypes"]["description"]
