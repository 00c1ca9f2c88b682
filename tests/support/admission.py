"""Test support: evaluate a rendered ValidatingAdmissionPolicy as the apiserver does, with cel-expr-python.

A request matches when its resource is in the policy's `resourceRules` and every `matchCondition` holds; then
the policy's `variables` are evaluated in order (each may read the earlier ones) and every `validation` must be
true. An evaluation error denies, as with `failurePolicy: Fail`. Kubernetes' CEL quantity library is modelled
by `quantity(string)` (the value as a number, parsed as Kubernetes parses quantities) and its comparison methods.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from cel_expr_python import cel
from cel_expr_python.ext import ext_strings
from eks_karpenter.quantities import quantity_value

GROUPS = {"nodepools": "karpenter.sh", "ec2nodeclasses": "karpenter.k8s.aws", "pods": "", "services": ""}


def _quantity(text: str) -> float:
    return float(quantity_value(text))


@functools.cache
def _env() -> Any:
    t = cel.Type
    functions = [
        cel.FunctionDecl("quantity", [cel.Overload("quantity_string", return_type=t.DOUBLE,
                                                   parameters=[t.STRING], impl=_quantity)]),
        cel.FunctionDecl("isGreaterThan", [cel.Overload("quantity_gt", return_type=t.BOOL, is_member=True,
                                                        parameters=[t.DOUBLE, t.DOUBLE],
                                                        impl=lambda a, b: a > b)]),
        cel.FunctionDecl("isLessThan", [cel.Overload("quantity_lt", return_type=t.BOOL, is_member=True,
                                                     parameters=[t.DOUBLE, t.DOUBLE], impl=lambda a, b: a < b)]),
    ]
    return cel.NewEnv(variables={k: t.DYN for k in ("object", "oldObject", "request", "variables", "params")},
                      extensions=[ext_strings.ExtStrings()], functions=functions)


@functools.cache
def _compile(expression: str) -> Any:
    return _env().compile(expression)


def _eval(expression: str, data: dict[str, Any]) -> Any:
    result = _compile(expression).eval(data=data)
    if result.type() == cel.Type.ERROR:
        raise ValueError(f"{expression}: {result.plain_value()}")
    return result.plain_value()


@dataclass
class Decision:
    matched: bool
    denied: list[str] = field(default_factory=list)
    """Messages of the validations that failed (or errored)."""

    @property
    def allowed(self) -> bool:
        return not self.denied


def admit(policy: dict[str, Any], operation: str, groups: list[str], obj: dict[str, Any] | None,
          old: dict[str, Any] | None = None, resource: str | None = None, namespace: str | None = None) -> Decision:
    """The policy's decision on one request by a user in `groups`; `resource` (default: from the object's kind,
    a NodePool or EC2NodeClass) and `namespace` for namespaced objects. A `namespaceSelector` is modelled for its
    `kubernetes.io/metadata.name In [...]` form only."""
    target = obj if obj is not None else old
    assert target is not None
    resource = resource or {"NodePool": "nodepools", "EC2NodeClass": "ec2nodeclasses"}[target["kind"]]
    spec = policy["spec"]
    if not any(GROUPS[resource] in r["apiGroups"] and resource in r["resources"] and operation in r["operations"]
               for r in spec["matchConstraints"]["resourceRules"]):
        return Decision(False)
    selector = spec["matchConstraints"].get("namespaceSelector")
    if selector is not None:
        [expression] = selector["matchExpressions"]
        assert (expression["key"], expression["operator"]) == ("kubernetes.io/metadata.name", "In"), selector
        if namespace not in expression["values"]:
            return Decision(False)
    request = {"operation": operation, "userInfo": {"username": "someone", "groups": groups},
               "resource": {"group": GROUPS[resource], "version": "v1", "resource": resource}}
    data: dict[str, Any] = {"object": obj, "oldObject": old, "request": request, "params": None, "variables": {}}
    for condition in spec.get("matchConditions", []):
        if _eval(condition["expression"], data) is not True:
            return Decision(False)
    variables: dict[str, Any] = {}
    for variable in spec.get("variables", []):
        variables[variable["name"]] = _eval(variable["expression"], {**data, "variables": variables})
    data["variables"] = variables
    denied = []
    for validation in spec["validations"]:
        try:
            ok = _eval(validation["expression"], data) is True
        except ValueError:
            ok = False
        if not ok:
            denied.append(validation["message"])
    return Decision(True, denied)
