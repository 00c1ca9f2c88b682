"""Shared base for typed config: camelCase keys, typos refused, frozen values, and one error format."""

from __future__ import annotations

import ast
import inspect
import itertools
import textwrap
from typing import Any, Literal, Self, cast, get_args

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel
from pydantic.fields import FieldInfo

RetentionDays = Literal[1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922,
                        3288, 3653]
"""Retention periods CloudWatch Logs accepts (days); never-expiring log groups are not offered."""


class Model(BaseModel):
    """Base of every config model: keys are spelled as upstream spells them (camelCase).

    Field docstrings become descriptions when someone asks for them (`documented_fields`, the JSON Schema), not
    at import: reading them means parsing the models' source, the most expensive part of importing the library
    (which pydantic's `use_attribute_docstrings` would do for every model at class creation)."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        frozen=True,
        validate_default=True,
        # Validators are built on first use, not at import: a stack builds only the models it uses, and `import
        # components` stays cheap.
        defer_build=True,
    )

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """The JSON Schema, with each field's docstring as its description."""
        _document_fields()
        return super().model_json_schema(*args, **kwargs)

    @classmethod
    def documented_fields(cls) -> dict[str, FieldInfo]:
        """The model's fields (as `model_fields`), each with its docstring as its description."""
        if cls not in _documented and cls is not Model:
            _describe(cls)
        return dict(cls.__pydantic_fields__)

    @classmethod
    def defaults(cls) -> Self:
        """The model as a stack file that leaves it out gets it: every field at its default and none marked set,
        built without validation. Defaults are constants of the code, so validating them on every run would
        only build the validators of sections the stack does not use; tests/platform/stack/test_stack_rules.py
        checks that each config model's `defaults()` is what validating it empty gives."""
        required = [name for name, field in cls.__pydantic_fields__.items() if field.is_required()]
        if required:
            raise TypeError(f"{cls.__qualname__} has no defaults for {', '.join(required)}")
        nested = {name: factory.defaults() for name, field in cls.__pydantic_fields__.items()
                  if isinstance(factory := field.default_factory, type) and issubclass(factory, Model)}
        return cast(Self, cls.model_construct(_fields_set=set(), **nested))

    def is_set(self, field: str) -> bool:
        """Whether the user wrote this field (as opposed to taking its default)."""
        return field in self.model_fields_set

    def written(self, field: str) -> Any:
        """A field's value as a stack file spells it (JSON), for the issue that reports it. Called only for a
        problem: a dump builds the model's serializer, which a section left out (its unvalidated defaults) never
        needs otherwise."""
        return self.model_dump(by_alias=True, mode="json", include={field})[aliases(type(self))[field]]

    def dump(self) -> dict[str, Any]:
        """The config as upstream-spelled plain data, unset optional fields left out."""
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


def empty_list() -> list[Any]:
    """`default_factory` of a list field that defaults to empty.

    A Python function rather than the `list` builtin: pydantic inspects every default factory's signature when
    it builds a validator, and a builtin's is parsed from its text signature through the tokenizer, which was a
    sixth of the cost of building the config validators."""
    return []


def empty_dict() -> dict[Any, Any]:
    """`default_factory` of a mapping field that defaults to empty (see `empty_list`)."""
    return {}


def config_models(*annotations: Any) -> list[type[Model]]:
    """Every config model the `annotations` reach, each after the models its fields hold (leaves first)."""
    found: list[type[Model]] = []
    seen: set[type[Model]] = set()

    def visit(node: Any) -> None:
        if isinstance(node, type) and issubclass(node, Model):
            if node in seen or node is Model:
                return
            seen.add(node)
            for field in node.__pydantic_fields__.values():
                visit(field.annotation)
            found.append(node)
            return
        for arg in get_args(node):
            visit(arg)

    for annotation in annotations:
        visit(annotation)
    return found


def build_validators(*annotations: Any) -> None:
    """Build the validators of every config model the `annotations` reach, each model after the models its
    fields hold.

    Validators are built on first use (`defer_build`), and pydantic inlines a model whose own validator is not
    built yet into its parent's schema: a model reached from several sections (`ResourceList`, `Taint`) had its
    schema generated once per section and once more for itself. Built leaves first, every parent reuses its
    children's schemas, and each model's schema is generated once per process.
    """
    for model in config_models(*annotations):
        if not model.__pydantic_complete__:
            model.model_rebuild()


def aliases(model: type[Model]) -> dict[str, str]:
    """Field name -> key as written in a stack file, for rules that name keys (without reading docstrings)."""
    return {name: field.alias or name for name, field in model.__pydantic_fields__.items()}


_documented: set[type[Model]] = set()
_schemas_documented = False


def _subclasses(cls: type[Model]) -> list[type[Model]]:
    found = []
    for sub in cls.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found


def _document_fields() -> None:
    """Every config model's attribute docstrings as its fields' descriptions, as pydantic's
    `use_attribute_docstrings` would set them at import."""
    global _schemas_documented
    if _schemas_documented:
        return
    _schemas_documented = True
    models = [m for m in _subclasses(Model) if "__pydantic_fields__" in m.__dict__]
    for model in models:
        if model not in _documented:
            _describe(model)
    for model in models:  # the descriptions reach the JSON Schema only through a rebuilt core schema
        model.model_rebuild(force=True)


def attribute_docstrings(cls: type) -> dict[str, str]:
    """The docstring written under each annotated attribute of a class's own body (`name: T = ...` followed by a
    string), read from its source; empty when the source is not available."""
    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):
        return {}
    body = next((n.body for n in ast.parse(source).body if isinstance(n, ast.ClassDef)), [])
    docs: dict[str, str] = {}
    for node, after in itertools.pairwise(body):
        if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant) and isinstance(after.value.value, str)):
            docs[node.target.id] = inspect.cleandoc(after.value.value)
    return docs


def _describe(model: type[Model]) -> None:
    _documented.add(model)
    docs: dict[str, str] = {}
    for klass in reversed(model.__mro__):  # inherited fields keep the docstring of the class that declares them
        if isinstance(klass, type) and issubclass(klass, Model) and klass is not Model:
            docs.update(attribute_docstrings(klass))
    for name, field in model.__pydantic_fields__.items():
        if field.description is None and name in docs:
            field.description = docs[name]
