"""A ValidatingAdmissionPolicy evaluated on one request the way the API server does, with cel-expr-python.

So a plan can know what the platform's policies (`guardrails.py`) will refuse at `pulumi up` from the policies
themselves: one definition of each rule, their CEL, evaluated in both places.

A request matches when its resource is in the policy's `resourceRules` (`*` a wildcard) and, for a namespaced
object, its namespace is selected by `namespaceSelector` (the namespace's name label only:
`kubernetes.io/metadata.name` with `In`, `NotIn`, `Exists`, `DoesNotExist` or `matchLabels`; a cluster-scoped
object is never skipped by it), and every `matchCondition` holds. Then the `variables` are evaluated in order
(each may read the earlier ones) and every `validation` must be true. An evaluation error denies under
`failurePolicy: Fail` (the default) and is ignored under `Ignore`; a variable's error only fails the expressions
that read it (the API server evaluates variables lazily). Objects are evaluated as stored: `null` fields dropped;
defaults (the CRD's, the Pod's) are not applied. Kubernetes' CEL quantity library is modelled by
`quantity(string)` (the amount as a number, parsed as Kubernetes parses quantities: an error for a malformed
one), `isQuantity` and the comparisons `isGreaterThan`, `isLessThan`, `compareTo`. A policy using anything
else the API server offers (object selectors, params, excluded rules) raises `UnsupportedPolicy`.

cel-expr-python is the `consumer` extra, imported on first evaluation only: it has wheels for Linux (glibc >= 2.27
x86_64, 2.26 aarch64), macOS and Windows but none for musl nor an sdist, and the platform's own runs never
evaluate (`evaluator_installed` says whether a consumer's check can run).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from eks_karpenter.quantities import quantity_value

NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
"""The label the API server sets on every namespace to its name, which a `namespaceSelector` can select."""

_UNSUPPORTED = ("paramKind", "auditAnnotations")
_UNSUPPORTED_MATCH = ("objectSelector", "excludeResourceRules")


INSTALL_COMMAND = "pip install 'eks-karpenter[consumer]'"
"""What installs the evaluator beside the library (in a requirements.txt: `eks-karpenter[consumer] @ <source>`)."""


class EvaluatorMissing(ImportError):
    """cel-expr-python (the `consumer` extra) is not installed, so no policy can be evaluated."""


def _cel() -> Any:
    try:
        from cel_expr_python import cel
    except ImportError as err:
        raise EvaluatorMissing(f"admission policies are evaluated with cel-expr-python, the `consumer` extra, "
                               f"which is not installed: {INSTALL_COMMAND}") from err
    return cel


def evaluator_installed() -> bool:
    """Whether cel-expr-python (the `consumer` extra) can be imported, so policies can be evaluated here."""
    try:
        _cel()
    except EvaluatorMissing:
        return False
    return True


class UnsupportedPolicy(ValueError):
    """The policy uses what this evaluator does not model, so its decision cannot be known before the API server."""


def _quantity(text: str) -> float:
    return float(quantity_value(text))


def _is_quantity(text: str) -> bool:
    try:
        quantity_value(text)
    except ValueError:
        return False
    return True


@functools.cache
def _env() -> Any:
    cel = _cel()
    from cel_expr_python.ext import ext_strings

    t = cel.Type

    def member(name: str, return_type: Any, impl: Any) -> Any:
        return cel.FunctionDecl(name, [cel.Overload(f"quantity_{name}", return_type=return_type, is_member=True,
                                                    parameters=[t.DOUBLE, t.DOUBLE], impl=impl)])

    functions = [
        cel.FunctionDecl("quantity", [cel.Overload("quantity_string", return_type=t.DOUBLE, parameters=[t.STRING],
                                                   impl=_quantity)]),
        cel.FunctionDecl("isQuantity", [cel.Overload("is_quantity_string", return_type=t.BOOL,
                                                     parameters=[t.STRING], impl=_is_quantity)]),
        member("isGreaterThan", t.BOOL, lambda a, b: a > b),
        member("isLessThan", t.BOOL, lambda a, b: a < b),
        member("compareTo", t.INT, lambda a, b: (a > b) - (a < b)),
    ]
    return cel.NewEnv(variables={k: t.DYN for k in ("object", "oldObject", "request", "variables", "params",
                                                    "namespaceObject")},
                      extensions=[ext_strings.ExtStrings()], functions=functions)


class _EvalError(Exception):
    pass


@functools.cache
def _compile(expression: str) -> Any:
    try:
        return _env().compile(expression)
    except RuntimeError as err:  # a syntax or type error: the API server would not run it either
        raise _EvalError(f"{expression}: {err}") from None


def _eval(expression: str, data: Mapping[str, Any]) -> Any:
    result = _compile(expression).eval(data=data)
    if result.type() == _cel().Type.ERROR:
        raise _EvalError(f"{expression}: {result.plain_value()}")
    return result.plain_value()


def _stored(value: Any) -> Any:
    """The object as the API server stores it: `null` map values dropped."""
    if isinstance(value, Mapping):
        return {k: _stored(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_stored(v) for v in value]
    return value


def resource_of(kind: str) -> str:
    """The resource (plural, lower case) of a kind, as Kubernetes guesses it (`meta.UnsafeGuessKindToResource`):
    `NodePool` -> `nodepools`, `Ingress` -> `ingresses`, `NetworkPolicy` -> `networkpolicies`."""
    lower = kind.lower()
    if lower.endswith(("s", "x", "z", "ch", "sh")):
        return lower + "es"
    if lower.endswith("y") and len(lower) > 1 and lower[-2] not in "aeiou":
        return lower[:-1] + "ies"
    return lower + "s"


@dataclass(frozen=True)
class Request:
    """One admission request: `operation` (CREATE, UPDATE, DELETE) by a user in `groups` on `object` (None for a
    DELETE) replacing `old_object` (None for a CREATE), in `namespace` (None: a cluster-scoped object)."""

    operation: str
    groups: tuple[str, ...]
    object: Mapping[str, Any] | None
    old_object: Mapping[str, Any] | None = None
    namespace: str | None = None
    username: str = "someone"

    @property
    def target(self) -> Mapping[str, Any]:
        target = self.object if self.object is not None else self.old_object
        if target is None:
            raise ValueError("a request needs an object or an old object")
        return target

    @property
    def group_version(self) -> tuple[str, str]:
        group, _, version = str(self.target["apiVersion"]).rpartition("/")
        return group, version

    @property
    def resource(self) -> str:
        return resource_of(str(self.target["kind"]))

    def cel(self) -> dict[str, Any]:
        """`request` as CEL sees it (the AdmissionRequest's fields the policies read)."""
        group, version = self.group_version
        return {"operation": self.operation, "userInfo": {"username": self.username, "groups": list(self.groups)},
                "resource": {"group": group, "version": version, "resource": self.resource},
                "kind": {"group": group, "version": version, "kind": self.target["kind"]},
                "name": self.target.get("metadata", {}).get("name", ""), "namespace": self.namespace or "",
                "dryRun": False}


@dataclass
class Decision:
    """The policy's answer: `matched` (it applies to the request) and the messages of the validations that
    failed or errored (`denied`); the errors themselves in `errors`."""

    matched: bool
    denied: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def allowed(self) -> bool:
        return not self.denied


def _check_supported(spec: Mapping[str, Any], name: str) -> None:
    match = spec.get("matchConstraints") or {}
    used = [k for k in _UNSUPPORTED if spec.get(k)] + [f"matchConstraints.{k}" for k in _UNSUPPORTED_MATCH
                                                       if match.get(k)]
    selector = match.get("namespaceSelector") or {}
    if any(k != NAMESPACE_NAME_LABEL for k in selector.get("matchLabels", {})) or any(
            e.get("key") != NAMESPACE_NAME_LABEL for e in selector.get("matchExpressions", [])):
        used.append(f"a namespaceSelector on labels other than {NAMESPACE_NAME_LABEL}")
    if used:
        raise UnsupportedPolicy(f"policy {name}: {', '.join(used)} cannot be evaluated before the API server")


def _rule_matches(rule: Mapping[str, Any], request: Request) -> bool:
    group, version = request.group_version

    def has(key: str, value: str) -> bool:
        values = rule.get(key, [])
        return "*" in values or value in values

    return (has("apiGroups", group) and has("apiVersions", version) and has("operations", request.operation)
            and has("resources", request.resource))


def _namespace_selected(selector: Mapping[str, Any] | None, namespace: str | None) -> bool:
    if selector is None or namespace is None:  # cluster-scoped objects are never skipped by it
        return True
    labels = {NAMESPACE_NAME_LABEL: namespace}
    if any(labels.get(k) != v for k, v in selector.get("matchLabels", {}).items()):
        return False
    for expression in selector.get("matchExpressions", []):
        value, operator, values = labels.get(expression["key"]), expression["operator"], expression.get("values", [])
        ok = {"In": value in values, "NotIn": value not in values, "Exists": value is not None,
              "DoesNotExist": value is None}.get(operator)
        if ok is None:
            raise UnsupportedPolicy(f"namespaceSelector operator {operator!r}")
        if not ok:
            return False
    return True


def admit(policy: Mapping[str, Any], request: Request) -> Decision:
    """The policy's decision on `request`. Raises `UnsupportedPolicy` for a policy it cannot evaluate."""
    spec = policy["spec"]
    _check_supported(spec, str(policy.get("metadata", {}).get("name", "")))
    match = spec.get("matchConstraints") or {}
    if not any(_rule_matches(r, request) for r in match.get("resourceRules", [])):
        return Decision(False)
    if not _namespace_selected(match.get("namespaceSelector"), request.namespace):
        return Decision(False)
    fail = spec.get("failurePolicy", "Fail") == "Fail"
    data: dict[str, Any] = {"object": _stored(request.object), "oldObject": _stored(request.old_object),
                            "request": request.cel(), "params": None, "namespaceObject": None, "variables": {}}
    condition_errors = []
    for condition in spec.get("matchConditions", []):
        try:
            if _eval(condition["expression"], data) is not True:
                return Decision(False)  # a false condition skips the policy, whatever errored
        except _EvalError as err:
            condition_errors.append(str(err))
    if condition_errors:
        return Decision(True, [f"match condition failed: {e}" for e in condition_errors] if fail else [],
                        condition_errors)
    variables: dict[str, Any] = {}
    broken: dict[str, str] = {}
    for variable in spec.get("variables", []):
        name, expression = variable["name"], variable["expression"]
        try:
            if failed := _reads(expression, broken):
                raise _EvalError(broken[failed])
            variables[name] = _eval(expression, {**data, "variables": variables})
        except _EvalError as err:
            broken[name] = str(err)
    data["variables"] = variables
    decision = Decision(True)
    for validation in spec.get("validations", []):
        try:
            if failed := _reads(validation["expression"], broken):
                raise _EvalError(broken[failed])
            if _eval(validation["expression"], data) is True:
                continue
        except _EvalError as err:
            decision.errors.append(str(err))
            if not fail:
                continue
        decision.denied.append(_message(validation, data))
    return decision


def _reads(expression: str, broken: Mapping[str, str]) -> str | None:
    """The first errored variable `expression` reads, if any."""
    return next((n for n in broken if re.search(rf"\bvariables\.{re.escape(n)}\b", expression)), None)


def _message(validation: Mapping[str, Any], data: Mapping[str, Any]) -> str:
    """The validation's `messageExpression` when it evaluates to a non-empty string, else its `message`, else
    the API server's default (the expression)."""
    if expression := validation.get("messageExpression"):
        try:
            text = _eval(expression, data)
            if isinstance(text, str) and text.strip():
                return text
        except _EvalError:
            pass
    return str(validation.get("message") or f"failed expression: {validation['expression']}")


def admit_all(policies: Sequence[Mapping[str, Any]], request: Request) -> list[tuple[str, str]]:
    """(policy name, message) for each denial of `request` by any of `policies`, in order."""
    return [(str(p["metadata"]["name"]), message) for p in policies for message in admit(p, request).denied]
