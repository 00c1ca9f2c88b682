"""Importing the library stays cheap: names load on first use, config models build when first validated."""

from __future__ import annotations

import pytest

from tests.support import VALIDATE_PROD, config_models, run_python


@pytest.mark.slow
def test_import_eks_karpenter_loads_no_concern_until_used() -> None:
    out = run_python("import sys, eks_karpenter;"
                     "print(sorted(m for m in sys.modules if m.startswith('eks_karpenter.')));"
                     "eks_karpenter.NodePool; print('eks_karpenter.platform.nodepool' in sys.modules)")
    loaded, used = out.splitlines()
    assert loaded == "[]" and used == "True"


@pytest.mark.slow
def test_importing_the_platform_builds_no_validator_and_reads_no_migration_code() -> None:
    out = run_python("import sys, eks_karpenter.platform.build; from eks_karpenter.platform.stack import StackConfig;"
                     "from eks_karpenter.platform.nodepool.config import NodePoolConfig;"
                     "print(StackConfig.__pydantic_complete__, NodePoolConfig.__pydantic_complete__,"
                     " 'eks_karpenter.tools.migrate' in sys.modules, 'jsonschema' in sys.modules)")
    assert out == "False False False False"


def test_field_descriptions_are_there_when_asked() -> None:
    from eks_karpenter.platform.nodepool.config import NodePoolConfig

    assert all(field.description for field in NodePoolConfig.documented_fields().values())
    schema = NodePoolConfig.model_json_schema(by_alias=True)
    assert schema["properties"]["capacityTypes"]["description"]


def _count_schemas() -> str:
    """Code that validates the prod stack and prints how many model schemas
    pydantic generated (and which more than once), whether it discovered plugins, and which of the sections prod
    leaves out it built."""
    return (
        "import collections, sys\n"
        "from pydantic._internal import _generate_schema as g\n"
        "from pydantic._internal._mock_val_ser import MockCoreSchema\n"
        "seen = collections.Counter(); real = g.GenerateSchema._model_schema\n"
        "def counting(self, cls):\n"
        "    if isinstance(cls.__dict__.get('__pydantic_core_schema__'), (MockCoreSchema, type(None))):\n"
        "        seen[f'{cls.__module__}.{cls.__qualname__}'] += 1\n"
        "    return real(self, cls)\n"
        "g.GenerateSchema._model_schema = counting\n"
        + VALIDATE_PROD +
        "from pydantic.plugin import _loader\n"
        "print(len(seen), sorted(n for n, c in seen.items() if c > 1), _loader._plugins is not None)\n"
        "print(sorted(n.rsplit('.', 1)[1] for n in seen if n.rsplit('.', 1)[1] in ('KarpenterConfig', "
        "'NodeRoleConfig', 'InterruptionConfig', 'NthConfig')))")


@pytest.mark.slow
def test_validating_a_stack_generates_each_model_schema_once() -> None:
    # Models reached from several sections (ResourceList, Taint) would be generated inline once per section and
    # once more for themselves; built leaves first, each model's schema is generated once per process.
    first, left_out = run_python(_count_schemas()).splitlines()
    count, repeated = first.split(" ", 1)
    assert int(count) >= 25 and repeated == "[] True"
    # prod leaves out the karpenter, interruption and nodeTerminationHandler sections: their defaults need no
    # validator (`Model.defaults`), so none is built for them.
    assert left_out == "[]"


def test_no_config_field_takes_a_builtin_as_default_factory() -> None:
    # pydantic inspects each default factory's signature while building a validator; a builtin's (`list`, `dict`)
    # is parsed from its text signature through the tokenizer, a sixth of what building the config validators cost.
    builtin = [f"{m.__qualname__}.{name}" for m in config_models() for name, field in m.__pydantic_fields__.items()
               if isinstance(field.default_factory, type) and field.default_factory.__module__ == "builtins"]
    assert len(config_models()) > 30
    assert builtin == [], "use empty_list / empty_dict from eks_karpenter.config.model"
