"""The admission evaluator follows the API server's rules for a ValidatingAdmissionPolicy: what matches, how
conditions, variables and errors decide, and Kubernetes' quantity functions."""

from __future__ import annotations

from typing import Any

import pytest
from eks_karpenter.platform.access.admission import Request, UnsupportedPolicy, admit, resource_of

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": []}}


def policy(validations: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    rules = [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}]
    return {"metadata": {"name": "p"}, "spec": {"matchConstraints": {"resourceRules": rules},
                                                "validations": validations, **spec}}


def check(expression: str, message: str = "no") -> dict[str, str]:
    return {"expression": expression, "message": message}


def create(obj: dict[str, Any] = POD, namespace: str | None = "team", groups: tuple[str, ...] = ("g",)) -> Request:
    return Request("CREATE", groups, obj, None, namespace)


def test_resource_rules_match_by_group_version_operation_and_resource_with_wildcards() -> None:
    p = policy([check("false")])
    assert admit(p, create()).denied == ["no"]
    assert not admit(p, Request("UPDATE", ("g",), POD, POD, "team")).matched
    assert not admit(p, create({**POD, "kind": "Service"})).matched
    p["spec"]["matchConstraints"]["resourceRules"][0].update(operations=["*"], apiVersions=["*"])
    assert admit(p, Request("DELETE", ("g",), None, POD, "team")).matched


def test_the_namespace_selector_selects_by_name_and_never_skips_cluster_scoped_objects() -> None:
    selector = {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["team"]}]}
    p = policy([check("false")], matchConstraints={**policy([])["spec"]["matchConstraints"],
                                                   "namespaceSelector": selector})
    assert admit(p, create(namespace="team")).matched
    assert not admit(p, create(namespace="other")).matched
    assert admit(p, create(namespace=None)).matched
    selector["matchExpressions"][0]["key"] = "team"
    with pytest.raises(UnsupportedPolicy, match="namespaceSelector"):
        admit(p, create())


def test_match_conditions_skip_when_false_and_deny_when_they_error() -> None:
    p = policy([check("false")], matchConditions=[{"name": "m", "expression": "'x' in request.userInfo.groups"}])
    assert not admit(p, create()).matched
    assert admit(p, create(groups=("x",))).denied == ["no"]
    p["spec"]["matchConditions"] = [{"name": "m", "expression": "object.nope == 1"}]
    decision = admit(p, create())
    assert decision.matched and decision.denied and decision.errors


def test_a_variables_error_fails_only_what_reads_it() -> None:
    p = policy([check("variables.ok", "ok"), check("variables.bad == 1", "bad"), check("true")],
               variables=[{"name": "ok", "expression": "object.kind == 'Pod'"},
                          {"name": "bad", "expression": "object.spec.nope"}])
    assert admit(p, create()).denied == ["bad"]


def test_errors_deny_under_fail_and_are_ignored_under_ignore() -> None:
    p = policy([check("object.spec.nope.all(x, x)")])
    assert admit(p, create()).denied == ["no"]
    p["spec"]["failurePolicy"] = "Ignore"
    decision = admit(p, create())
    assert decision.allowed and decision.errors


def test_message_expression_then_message_then_the_expression() -> None:
    p = policy([{"expression": "false", "messageExpression": "'pod ' + object.metadata.name", "message": "m"},
                {"expression": "false", "messageExpression": "''", "message": "m"}, {"expression": "1 == 2"}])
    assert admit(p, create()).denied == ["pod p", "m", "failed expression: 1 == 2"]


def test_null_fields_are_absent_as_in_a_stored_object() -> None:
    p = policy([check("!has(object.spec.nodeName)")])
    assert admit(p, create({**POD, "spec": {"nodeName": None}})).allowed


@pytest.mark.parametrize(("expression", "allowed"), [
    ("quantity('1Gi').isGreaterThan(quantity('1000Mi'))", True),
    ("quantity('500m').isLessThan(quantity('1'))", True),
    ("quantity('2').compareTo(quantity('2000m')) == 0", True),
    ("isQuantity('1Gi') && !isQuantity('lots')", True),
    ("quantity('lots').isGreaterThan(quantity('1'))", False),  # a malformed quantity is an error
])
def test_kubernetes_quantities(expression: str, allowed: bool) -> None:
    assert admit(policy([check(expression)]), create()).allowed is allowed


def test_kinds_map_to_resources_as_kubernetes_guesses_them() -> None:
    assert [resource_of(k) for k in ("NodePool", "EC2NodeClass", "Ingress", "NetworkPolicy", "Gateway")] == \
        ["nodepools", "ec2nodeclasses", "ingresses", "networkpolicies", "gateways"]


def test_what_it_does_not_model_is_refused_rather_than_guessed() -> None:
    p = policy([check("true")], paramKind={"apiVersion": "v1", "kind": "ConfigMap"})
    with pytest.raises(UnsupportedPolicy, match="paramKind"):
        admit(p, create())
