"""The config models' validators, compiled ahead of time.

Pydantic builds a model's validator in two steps: it generates the model's core schema (Python walking every
field's annotations, about 0.1 ms a field: 30 ms for the prod stack's sections, the largest fixed cost of a plan),
then builds the validator and serializer from that schema in Rust (pydantic-core). The first step depends on
nothing but the models' source and the versions of Python, pydantic and pydantic-core, so `generate.py` runs it
once and writes the result to `compiled.py`: each config model's core schema, and each stack-file section's, as
Python literals, the models and their validator and default functions referred to by name.

A model's first use (`Model.model_rebuild`, which pydantic calls when a deferred model is first validated or
dumped) then only builds its validator and serializer from the compiled schema (`install`), and a section is
validated by a validator built from its compiled schema (`section_validator`). Both go straight to pydantic-core,
so pydantic's plugin hooks (an experimental way to observe validations, whose discovery scans every installed
distribution, 8 ms) are not involved in config validation.

The compiled schemas are used only while `compiled.py` is current: generated with this Python, pydantic and
pydantic-core, and every source file the models are made from (`SOURCES`: the modules defining them and what they
import from this package) unchanged, by content. Otherwise pydantic builds everything as it always does: a stale
`compiled.py` costs time, never a wrong validator. tests/test_compiled_validators.py checks that it is current
and that an installed model is what pydantic builds.
"""

from __future__ import annotations

import functools
import hashlib
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from pydantic_core import SchemaSerializer, SchemaValidator

PACKAGE = Path(__file__).resolve().parent.parent
"""The `eks_karpenter` package folder: `SOURCES` paths are relative to it."""

ENABLED = True
"""Off while generating: the generator must see what pydantic itself builds."""

Compiled = tuple[Callable[[], Any], Mapping[str, Any]]
"""A schema's function (a fresh copy per call: a schema in use is pydantic's) and its core config."""


def versions() -> dict[str, str]:
    """What the schemas depend on besides the models' source."""
    import pydantic
    import pydantic_core

    return {"python": f"{sys.version_info.major}.{sys.version_info.minor}", "pydantic": pydantic.VERSION,
            "pydantic-core": pydantic_core.__version__}


def digest(path: str) -> str:
    """Content hash of a source file, `path` relative to the package ('' for a file that cannot be read)."""
    try:
        data = (PACKAGE / path).read_bytes()
    except OSError:
        return ""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def is_current(recorded_versions: Mapping[str, str], sources: Mapping[str, str]) -> bool:
    """Whether schemas generated with these versions from these sources are what pydantic would generate now."""
    return dict(recorded_versions) == versions() and all(digest(path) == known for path, known in sources.items())


class Tables(NamedTuple):
    """What `compiled.py` holds."""

    models: Mapping[type, Compiled]
    sections: Mapping[str, Compiled]
    """Per `StackConfig` field."""


@functools.cache
def _tables() -> Tables | None:
    from eks_karpenter.validators import compiled

    if not is_current(compiled.VERSIONS, compiled.SOURCES):
        return None
    return Tables(*compiled.schemas())


def tables() -> Tables | None:
    """The compiled schemas, or None when they are not current (or switched off)."""
    return _tables() if ENABLED else None


def install(model: type) -> bool:
    """Complete a config model from its compiled schema, as pydantic completes a model it builds (core schema,
    validator, serializer, signature); False when there is none or `compiled.py` is not current."""
    compiled = tables()
    found = compiled.models.get(model) if compiled is not None else None
    if found is None:
        return False
    # What pydantic's own completion sets besides the three core attributes (pinned by VERSIONS).
    from pydantic._internal._config import ConfigWrapper
    from pydantic._internal._signature import generate_pydantic_signature
    from pydantic._internal._utils import LazyClassAttribute

    function, config = found
    schema = function()
    wrapper = ConfigWrapper(model.model_config, check=False)  # type: ignore[attr-defined]
    signature = functools.partial(generate_pydantic_signature, init=model.__init__,  # type: ignore[misc]
                                  fields=model.__pydantic_fields__,  # type: ignore[attr-defined]
                                  validate_by_alias=wrapper.validate_by_alias, extra=wrapper.extra)
    model.__pydantic_core_schema__ = schema  # type: ignore[attr-defined]
    model.__pydantic_validator__ = SchemaValidator(schema, config)  # type: ignore[attr-defined,arg-type]
    model.__pydantic_serializer__ = SchemaSerializer(schema, config)  # type: ignore[attr-defined,arg-type]
    model.__signature__ = LazyClassAttribute("__signature__", signature)  # type: ignore[attr-defined]
    model.__pydantic_complete__ = True  # type: ignore[attr-defined]
    model.__pydantic_on_complete__()  # type: ignore[attr-defined]
    return True


def section_validator(name: str) -> SchemaValidator | None:
    """A validator for a stack-file section (a `StackConfig` field), built from its compiled schema; None when
    there is none or `compiled.py` is not current."""
    compiled = tables()
    found = compiled.sections.get(name) if compiled is not None else None
    if found is None:
        return None
    function, config = found
    return SchemaValidator(function(), config)  # type: ignore[arg-type]
