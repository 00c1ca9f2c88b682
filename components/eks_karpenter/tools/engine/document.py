"""The plan document: what a program registered, as plain, deterministic data."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class PlannedResource:
    """One resource registration as the engine would receive it."""

    urn: str
    type: str
    name: str
    parent: str
    custom: bool
    inputs: dict[str, Any]
    dependencies: list[str] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def layer(self) -> str:
        """The top-level component this resource belongs to (its own name for a top-level resource)."""
        chain = self.urn.split("::")[2]
        return chain.split("$")[0]


@dataclass(frozen=True)
class PlannedInvoke:
    """One provider look-up (invoke) the program made: its token and its arguments."""

    token: str
    args: dict[str, Any] = field(default_factory=dict)

    def sort_key(self) -> tuple[str, str]:
        return self.token, json.dumps(self.args, sort_keys=True)


PLAN_FORMAT = 2
"""The version of the JSON plan document this engine writes. Raise it when a field is added, renamed or changes
meaning, so a diff of two sides planned by different engines can say their documents differ. Documents written
before the field existed are format 1."""


@dataclass(frozen=True)
class PlanDocument:
    """Everything a plan produced: registered resources, stack outputs, invokes and warnings."""

    project: str
    stack: str
    resources: list[PlannedResource]
    outputs: dict[str, Any] = field(default_factory=dict)
    invokes: list[PlannedInvoke] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    format: int = PLAN_FORMAT
    """The document format the engine that wrote it used (`PLAN_FORMAT`)."""

    def to_json(self) -> str:
        """Serialise with sorted keys so the same config gives byte-identical output."""
        body = {
            "format": self.format,
            "project": self.project,
            "stack": self.stack,
            "resources": [_resource_json(r) for r in self.resources],
            "outputs": self.outputs,
            # Invokes run concurrently: sorted, so the same config gives the same list.
            "invokes": [asdict(i) for i in sorted(self.invokes, key=PlannedInvoke.sort_key)],
            "warnings": self.warnings,
        }
        return json.dumps(body, indent=2, sort_keys=True) + "\n"

    @staticmethod
    def from_json(text: str) -> PlanDocument:
        body = json.loads(text)
        return PlanDocument(
            project=body["project"],
            stack=body["stack"],
            resources=[
                PlannedResource(
                    urn=r["urn"],
                    type=r["type"],
                    name=r["name"],
                    parent=r["parent"],
                    custom=r["custom"],
                    inputs=r["inputs"],
                    dependencies=r.get("dependencies", []),
                    options=r.get("options", {}),
                )
                for r in body["resources"]
            ],
            outputs=body.get("outputs", {}),
            invokes=[PlannedInvoke(i["token"], i.get("args", {})) for i in body.get("invokes", [])],
            warnings=body.get("warnings", []),
            format=body.get("format", 1),
        )

    def by_type(self, type_: str) -> list[PlannedResource]:
        return [r for r in self.resources if r.type == type_]

    def get(self, type_: str, name: str) -> PlannedResource:
        """The one resource of this type and name; KeyError names what was missing."""
        for r in self.resources:
            if r.type == type_ and r.name == name:
                return r
        raise KeyError(f"no {type_} named {name!r} in the plan")

    def children(self, urn: str) -> list[PlannedResource]:
        return [r for r in self.resources if r.parent == urn]


def _resource_json(r: PlannedResource) -> dict[str, Any]:
    # The fields as they are: `asdict` would deep-copy every input, a third of writing a large plan.
    body = {"urn": r.urn, "type": r.type, "name": r.name, "parent": r.parent, "custom": r.custom,
            "inputs": r.inputs, "dependencies": r.dependencies}
    if r.options:
        body["options"] = r.options
    return body


def input_at(inputs: Mapping[str, Any], dotted: str) -> Any:
    """The value at `dotted` (`spec.template.spec.requirements`) in a resource's inputs; None where a part of the
    path is missing or not a mapping."""
    value: Any = inputs
    for part in dotted.split("."):
        if not isinstance(value, Mapping):
            return None
        value = value.get(part)
    return value
