"""Config namespaces: the library's own (`eks-karpenter`, or the name of the project that uses it), and how its
keys are named in messages and recognised when misspelt. Below every concern: it knows no section."""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping
from typing import Any

from eks_karpenter.config.errors import Issue, suggest
from eks_karpenter.config.stackfile import provider_config_keys

PROJECT = "eks-karpenter"
"""The library's default config namespace (a project of another name uses its own: `my-platform:nodePools`)."""


def _canonical(namespace: str) -> str:
    return namespace.lower().replace("_", "-").replace(".", "-")


_OUR_KEY = re.compile(rf"\b{re.escape(PROJECT)}:(?!team:|index:)(?=[A-Za-z])")
"""A stack-file key of the library's default namespace in prose (`eks-karpenter:nodeClasses`), not an RBAC group
(`eks-karpenter:team:<name>`) or a component type token (`eks-karpenter:index:Cluster`)."""


def in_namespace(text: str, project: str) -> str:
    """`text` with the library's stack-file keys in `project`'s namespace: messages and the schema name the keys
    as the project's stack file spells them."""
    return text if project == PROJECT else _OUR_KEY.sub(f"{project}:", text)


def near_miss_namespace(namespace: str, project: str = PROJECT) -> bool:
    """Whether `namespace` (not `project` itself) reads as a misspelling of `project`'s config namespace: the
    same up to case and `-`/`_`, close by edit ratio, one of its words (`karpenter` in `eks-karpenter`), or the
    library's default namespace (and its near misses) in a project of another name."""
    if namespace == project:
        return False
    ours, theirs = _canonical(project), _canonical(namespace)
    if theirs == ours or difflib.SequenceMatcher(None, theirs, ours).ratio() >= 0.8:
        return True
    if len(theirs) >= 4 and theirs in ours.split("-"):
        return True
    return namespace == PROJECT or (project != PROJECT and near_miss_namespace(namespace, PROJECT))


# Namespaces: this project's own (every key checked, misspellings refused with the closest key), the AWS
# provider's (the program uses the default AWS provider: its keys are checked too), the engine's `pulumi:` keys,
# and everything else, which belongs to another provider or to the user's own program (`myplatform:slackChannel`,
# `datadog:apiKey`): accepted untouched, for that program to read. Two namespaces are refused because this
# program configures them elsewhere, and a namespace that is a near miss of this project's (`karpenter:`,
# `eks_karpenter:`, or the library's default `eks-karpenter:` in a project of another name) is a typo whose keys
# would silently be read by nothing.
AWS_NAMESPACE, ENGINE_NAMESPACE = "aws", "pulumi"
UNREAD_NAMESPACES = {
    "kubernetes": "the Kubernetes objects of this program use the cluster's own provider (built from the cluster "
                  "this stack creates or adopts), never the default one these keys configure",
    "eks": "pulumi-eks has no provider configuration; cluster settings go under {project}:cluster",
}


def namespace_issues(config: Mapping[str, str], known: list[str], region_key: str,
                     project: str = PROJECT) -> list[Issue]:
    """Keys that would be read by nothing: unknown keys of this project (`known`: its keys) or of `aws:`, keys of
    a near miss of this project's namespace, and `kubernetes:`/`eks:` keys. Other namespaces are accepted (another
    provider's, the user's own). Each refusal names the closest valid key (`karpenter:nodePools` ->
    `eks-karpenter:nodePools`)."""
    aws = sorted(f"{AWS_NAMESPACE}:{k}" for k in provider_config_keys("pulumi_aws")) or [region_key]
    issues: list[Issue] = []
    for key in sorted(config):
        namespace, _, name = key.partition(":")
        if namespace == ENGINE_NAMESPACE or key in known or key in aws:
            continue
        if namespace == project:
            message = f"unknown key{suggest(key, known)}; known keys: {', '.join(sorted(known))}"
        elif namespace == AWS_NAMESPACE:
            message = f"the AWS provider has no such config key{suggest(key, aws)}"
        elif namespace in UNREAD_NAMESPACES or near_miss_namespace(namespace, project):
            same_name = [k for k in known if k.endswith(f":{name}")]
            hint = f": did you mean `{same_name[0]}`?" if same_name else suggest(key, known + aws)
            why = UNREAD_NAMESPACES.get(namespace, f"this project's config namespace is `{project}:`, and nothing "
                                         f"reads `{namespace}:`").format(project=project)
            message = f"key is read by nothing{hint} ({why})"
        else:
            continue  # another provider's or the user's own namespace: theirs to read
        issues.append(Issue((key,), message, decoded(config[key])))
    return issues


def decoded(text: str) -> Any:
    """A flat config value as the program reads it: JSON when it parses, else the string itself."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text
