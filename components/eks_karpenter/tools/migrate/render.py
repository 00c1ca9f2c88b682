"""The output: a stack-config snippet or v1 manifests, as YAML a reader can review."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import yaml

from eks_karpenter.platform.nodepool.config import NodePoolConfig
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


def _default(field: str) -> Any:
    info = NodePoolConfig.model_fields[field]
    return info.default_factory() if info.default_factory else info.default  # type: ignore[call-arg]


_SWITCHED_OFF = {
    "instanceCategories": "v1alpha5 added no category here: switches off the library's default "
                          f"({', '.join(_default('instance_categories'))})",
    "minGeneration": f"v1alpha5 added no generation here: switches off the library's default "
                     f"({_default('min_generation')})",
    "terminationGracePeriod": "v1alpha5 had no drain deadline: switches off the library's default "
                              f"({_default('termination_grace_period')})",
}
"""Why a converted pool writes `null`: each switches off a library default the legacy API did not have."""


def render_config(conversion: Conversion, sources: Iterable[str] = (), node_role: str | None = None,
                  project: str = "eks-karpenter", command: str = "eks-karpenter import-legacy",
                  stack_file: str = "Pulumi.<stack>.yaml") -> str:
    """The stack-config snippet in `project`'s namespace: paste its `config:` entries into `stack_file` (the
    project's, as its `stackConfigDir` places it). `command` is how the header names the command that converted
    it, as the user ran it. A `null` it writes carries a comment saying which library default it switches off."""
    names = ", ".join(sources)
    header = (f"# Converted by `{command}` from: {names}\n" if names else "") + \
        f"# Paste these keys under `config:` in {stack_file}.\n"
    lines = dump_yaml({"config": conversion.config(node_role, project)}).splitlines()
    for i, line in enumerate(lines):
        key, _, value = line.strip().partition(": ")
        if value == "null" and key in _SWITCHED_OFF:
            lines[i] = f"{line}  # {_SWITCHED_OFF[key]}"
    return header + "".join(f"{line}\n" for line in lines)


def render_manifests(objects: Iterable[Mapping[str, Any]]) -> str:
    return "".join("---\n" + dump_yaml(dict(obj)) for obj in objects)
