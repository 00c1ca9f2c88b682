"""The output: a stack-config snippet or v1 manifests, as YAML a reader can review."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import yaml

from eks_karpenter.tools.migrate.model import Conversion


class _Dumper(yaml.SafeDumper):
    """Block style, multi-line strings (userData) as literal blocks, keys in the order written."""


def _str_representer(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if "\n" in value:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


def _list_representer(dumper: yaml.SafeDumper, value: list[Any]) -> yaml.SequenceNode:
    # Short lists of scalars (requirement values, clusterDNS) read best inline: `values: [spot, on-demand]`.
    flat = bool(value) and all(isinstance(v, str | int | float) and "\n" not in str(v) for v in value)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=flat)


_Dumper.add_representer(str, _str_representer)
_Dumper.add_representer(list, _list_representer)


def dump_yaml(data: Any) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, default_flow_style=False, allow_unicode=True, width=120)


def render_config(conversion: Conversion, sources: Iterable[str] = (), node_role: str | None = None,
                  project: str = "eks-karpenter", command: str = "eks-karpenter import-legacy") -> str:
    """The stack-config snippet in `project`'s namespace: paste its `config:` entries into the stack file.
    `command` is how the header names the command that converted it, as the user ran it."""
    names = ", ".join(sources)
    header = (f"# Converted by `{command}` from: {names}\n" if names else "") + \
        "# Paste these keys under `config:` in stacks/Pulumi.<stack>.yaml.\n"
    return header + dump_yaml({"config": conversion.config(node_role, project)})


def render_manifests(objects: Iterable[Mapping[str, Any]]) -> str:
    return "".join("---\n" + dump_yaml(dict(obj)) for obj in objects)
