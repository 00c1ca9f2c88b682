"""The library's config namespace and how messages name it in a project of another name.

A stack file's keys go under the Pulumi project's name (`my-platform:nodePools`); the library's own messages are
written with its default namespace and put in the project's as they are shown, so a consumer never reads a key
its stack file could not have.
"""

from __future__ import annotations

import re

PROJECT = "eks-karpenter"
"""The library's default config namespace (this repository's project name)."""

_OUR_KEY = re.compile(rf"\b{re.escape(PROJECT)}:(?!team:|index:|preflight:)(?=[A-Za-z])")
"""A stack-file key of the library's default namespace in prose (`eks-karpenter:nodeClasses`), not an RBAC group
(`eks-karpenter:team:<name>`), a component type token (`eks-karpenter:index:Cluster`) or an invoke token."""


def in_namespace(text: str, project: str) -> str:
    """`text` with the library's stack-file keys in `project`'s namespace: messages and the schema name the keys
    as the project's stack file spells them."""
    return text if project == PROJECT else _OUR_KEY.sub(f"{project}:", text)
