"""Every config model and every field is documented: the docstrings are the stack-file schema's descriptions and
the generated docs, so an undocumented field reaches users as a bare key."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from eks_karpenter.config.model import Model, attribute_docstrings
from eks_karpenter.platform.stack import stack_file_schema
from eks_karpenter.tools.smoke.config import SmokeTimeouts

from tests.support import REPO

LIBRARY = REPO / "components" / "eks_karpenter"


def _subclasses(cls: type[Model]) -> Iterator[type[Model]]:
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def config_models() -> list[type[Model]]:
    """Every model of the library: the whole stack's config imports every concern's (and the smoke test's)."""
    return sorted({m for m in _subclasses(Model) if m.__module__.startswith("eks_karpenter.")},
                  key=lambda m: f"{m.__module__}.{m.__qualname__}")


def undocumented(models: list[type[Model]]) -> list[str]:
    found = [f"{m.__module__}.{m.__qualname__}" for m in models if not (m.__doc__ or "").strip()]
    found += [f"{m.__module__}.{m.__qualname__}.{name}" for m in models
              for name, field in m.documented_fields().items() if not (field.description or "").strip()]
    return found


def test_every_config_model_and_field_is_documented() -> None:
    models = config_models()
    names = {m.__name__ for m in models}
    assert len(models) >= 40 and {"NodePoolConfig", "KarpenterConfig", "NthConfig", SmokeTimeouts.__name__} <= names
    assert undocumented(models) == []


def test_every_schema_property_carries_its_description() -> None:
    schema = stack_file_schema()
    bare = [f"{name}.{key}" for name, model in schema["$defs"].items()
            for key, prop in model.get("properties", {}).items() if not prop.get("description")]
    assert len(schema["$defs"]) >= 30 and bare == []


def test_the_check_finds_an_undocumented_field() -> None:
    class Documented(Model):
        """A model."""

        size: int = 1
        """How big."""

    class Bare(Model):
        size: int = 1

    assert undocumented([Documented]) == []
    assert [f.rsplit(".", 2)[-1] for f in undocumented([Bare])] == ["Bare", "size"]


def test_attribute_docstrings_are_read_from_the_class_body() -> None:
    class Sized(Model):
        """A model."""

        size: int = 1
        """How big,
        in units."""
        colour: str = "red"
        plain: int = 0
        """Plain."""

    assert attribute_docstrings(Sized) == {"size": "How big,\nin units.", "plain": "Plain."}
    assert Sized.documented_fields()["size"].description == "How big,\nin units."


def test_the_library_uses_only_public_pydantic_api() -> None:
    private = [f"{path.relative_to(LIBRARY)}:{node.lineno}" for path in sorted(LIBRARY.rglob("*.py"))
               for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
               if isinstance(node, ast.Import | ast.ImportFrom)
               and any("pydantic._internal" in name or "pydantic_core._" in name
                       for name in ([node.module or ""] if isinstance(node, ast.ImportFrom) else
                                    [a.name for a in node.names]))]
    assert private == []
