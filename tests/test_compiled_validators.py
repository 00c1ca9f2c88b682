"""The compiled config validators (eks_karpenter/validators): current, and the same as what pydantic builds."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from typing import Any

import pytest
from eks_karpenter import validators
from eks_karpenter.validators import generate

from tests.conftest import REPO, VALIDATE_PROD, run_python


def test_compiled_py_is_what_the_generator_writes() -> None:
    done = subprocess.run([sys.executable, "-m", "eks_karpenter.validators.generate", "--check"], cwd=REPO,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_compiled_py_is_current_for_this_python_pydantic_and_source() -> None:
    from eks_karpenter.validators import compiled

    assert validators.is_current(compiled.VERSIONS, compiled.SOURCES)
    # The models' own modules and what they import are covered; the components, rules and this mechanism are not.
    assert {"cluster/config.py", "nodepool/config.py", "nodepool/fields.py", "_model.py"} <= set(compiled.SOURCES)
    assert not any(p.startswith("validators/") or p.endswith(("component.py", "rules.py")) for p in compiled.SOURCES)


def test_a_changed_source_or_version_makes_it_stale(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from eks_karpenter.validators import compiled

    changed = {**compiled.SOURCES, "nodepool/fields.py": "0" * 32}
    assert not validators.is_current(compiled.VERSIONS, changed)
    assert not validators.is_current({**compiled.VERSIONS, "pydantic": "2.0.0"}, compiled.SOURCES)
    assert not validators.is_current(compiled.VERSIONS, {**compiled.SOURCES, "gone.py": "0" * 32})
    monkeypatch.setattr(validators, "PACKAGE", tmp_path)
    (tmp_path / "a.py").write_text("x = 1\n")
    assert validators.digest("a.py") == validators.digest("a.py") != "" and validators.digest("b.py") == ""


# In a fresh process: every compiled model installed (its first use), its attributes recorded, then rebuilt by
# pydantic (forced, compiled schemas off) and recorded again. Sections: validated both ways over good and bad input.
_COMPARE = '''
import functools, inspect, json, sys
from pathlib import Path
import yaml
from pydantic import TypeAdapter, ValidationError
from eks_karpenter import validators
from eks_karpenter.stack import StackConfig
models, sections = validators.tables()
def canon(node):  # functools.partial compares by identity: by what it calls with what instead
    if isinstance(node, dict):
        return {key: canon(value) for key, value in node.items()}
    if isinstance(node, list):
        return [canon(value) for value in node]
    if isinstance(node, functools.partial):
        return ("partial", node.func, canon(list(node.args)), canon(node.keywords))
    return node
def state(model):
    return (canon(model.__pydantic_core_schema__), str(inspect.signature(model)), model.__pydantic_complete__,
            model.__pydantic_computed_fields__, repr(model.__pydantic_validator__.title))
installed = {}
for model in models:  # some are built at import (cluster/plan.py's taint): installed too
    assert model.__pydantic_complete__ or model.model_rebuild() is True, model
    installed[model] = state(model)
validators.ENABLED = False
differ = [m.__qualname__ for m in models if m.model_rebuild(force=True) is not True or state(m) != installed[m]]
inputs = []
for path in sorted(Path("stacks").glob("Pulumi.*.yaml")):
    config = yaml.safe_load(path.read_text())["config"]
    keys = {name: "eks-karpenter:" + (field.alias or name) for name, field in StackConfig.__pydantic_fields__.items()}
    inputs += [(name, config[key]) for name, key in keys.items() if key in config]
bad = [("cluster", {"name": "x", "version": "1.2", "kmsKeyArn": "nope", "extra": 1}),
       ("node_pools", [{"name": 7, "limits": {"cpus": 1}, "disruption": {"budgets": [{"nodes": "200%"}]}}]),
       ("tags", {"": "x" * 300}), ("protect", "maybe"), ("cluster_name", "Bad Name"),
       ("node_classes", [{"name": "a", "kubelet": {"maxPods": -1}}])]
def outcome(validate, value):
    try:
        return ("ok", repr(validate(value)))
    except ValidationError as err:
        return ("error", json.dumps(err.errors(include_url=False), default=str, sort_keys=True))
results = []
for name, value in inputs + bad:
    validators.ENABLED = True
    ours = outcome(validators.section_validator(name).validate_python, value)
    validators.ENABLED = False
    theirs = outcome(TypeAdapter(StackConfig.__pydantic_fields__[name].annotation).validate_python, value)
    results.append((name, ours == theirs, ours[0]))
print(json.dumps({"models": len(models), "differ": differ, "sections": results}))
'''


@functools.cache
def _comparison() -> dict[str, Any]:
    result: dict[str, Any] = json.loads(run_python(_COMPARE))
    return result


def test_an_installed_model_is_the_model_pydantic_builds() -> None:
    result = _comparison()
    assert result["models"] >= 35
    assert result["differ"] == []


def test_a_section_validates_as_pydantics_own_validator_would() -> None:
    sections = _comparison()["sections"]
    assert len(sections) > 20
    assert [name for name, same, _ in sections if not same] == []
    assert {kind for _, _, kind in sections} == {"ok", "error"}


def test_the_generator_names_only_what_it_can_import() -> None:
    writer = generate._Writer([])
    assert writer.name(generate.source_closure, "x") == "validators_generate.source_closure"
    with pytest.raises(ValueError, match=r"at\.path: .*no importable name"):
        writer.name(lambda: [], "at.path")

    def local() -> None: ...

    with pytest.raises(ValueError, match="no importable name"):
        writer.source({"default_factory": local}, "Model.field", 0, None)
    assert writer.source({"a": [1, None, (True,)], "b": functools.partial(generate.source_closure, [])}, "p", 0,
                         None) == "{'a': [1, None, (True,)], 'b': partial(validators_generate.source_closure, [])}"


def test_patterns_are_ascii() -> None:
    # `\d` and `\w` match any script's digits and letters (in pydantic-core's regex engine as in Python's), which
    # no AWS or Kubernetes name takes; they also cost a Unicode table each to compile.
    compiled = validators.tables()
    assert compiled is not None
    models, sections = compiled
    patterns: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("pattern"), str):
                patterns.append(node["pattern"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for function, _ in [*models.values(), *sections.values()]:
        walk(function())
    assert len(patterns) > 50
    assert [p for p in patterns if any(c in p for c in ("\\d", "\\w", "\\s", "\\b"))] == []


def test_stale_compiled_schemas_leave_the_models_to_pydantic() -> None:
    out = run_python("from eks_karpenter.validators import compiled\n"
                     "compiled.SOURCES['nodepool/fields.py'] = '0' * 32  # as if edited since generation\n"
                     "from eks_karpenter import validators\n"
                     "from eks_karpenter.nodepool.config import NodePoolConfig\n"
                     "from pydantic.plugin import _loader\n"
                     + VALIDATE_PROD +
                     "print(validators.tables() is None, validators.section_validator('node_pools') is None,\n"
                     "      NodePoolConfig.__pydantic_complete__, _loader._plugins is not None, len(cfg.node_pools))")
    assert out == "True True True True 3"
