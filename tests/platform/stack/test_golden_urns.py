"""Refactor safety: every stack's URNs are pinned in tests/golden/<stack>.urns.

A URN is a resource's identity: a change means `pulumi up` deletes the old resource and creates a new one (for
a subnet or a cluster, an outage). If a rename is intended, add `aliases` for the old URN, regenerate the file
with `python -m infra plan --stack <s> --format urns > tests/golden/<s>.urns`, and note it in docs/UPGRADING.md.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from eks_karpenter.tools.engine import PlanDocument, run_plan
from eks_karpenter.tools.engine.diff import diff_plans, render_diff_markdown

from tests.support import REPO, STACKS, plan_stack

GOLDEN = REPO / "tests" / "golden"


def test_every_stack_has_a_golden_file_and_no_more() -> None:
    assert sorted(p.stem for p in GOLDEN.glob("*.urns")) == STACKS


@pytest.mark.slow
@pytest.mark.parametrize("stack", STACKS)
def test_urns_match_the_golden_file(stack: str) -> None:
    expected = (GOLDEN / f"{stack}.urns").read_text().splitlines()
    actual = sorted(r.urn for r in plan_stack(stack).resources)
    gone = sorted(set(expected) - set(actual))
    new = sorted(set(actual) - set(expected))
    assert not gone and not new, (
        f"URNs of stack {stack!r} changed: a real `pulumi up` would DELETE {gone} and CREATE {new}. "
        "If intended, add aliases for the old URNs, regenerate tests/golden/ (see this module's docstring) and "
        "record the rename in docs/UPGRADING.md.")
    assert expected == actual, "keep the golden file sorted and free of duplicates"


PROGRAM = '''
import pulumi
import pulumi_aws as aws

parent = pulumi.ComponentResource("demo:index:Box", "box")
name = pulumi.Config().require("queueName")
aliases = [pulumi.Alias(name="old-queue")] if name != "old-queue" else None
aws.sqs.Queue(name, opts=pulumi.ResourceOptions(parent=parent, aliases=aliases))
'''


def _plan(tmp_path: Path, queue_name: str, program: str = PROGRAM) -> PlanDocument:
    (tmp_path / "stacks").mkdir(exist_ok=True)
    (tmp_path / "Pulumi.yaml").write_text("name: demo\nruntime: python\nmain: prog.py\nstackConfigDir: stacks\n")
    (tmp_path / "prog.py").write_text(program)
    (tmp_path / "stacks" / "Pulumi.s.yaml").write_text(yaml.safe_dump({"config": {"demo:queueName": queue_name}}))
    result = run_plan(tmp_path, "s")
    assert result.error is None, result.error
    return result.document


def test_an_aliased_rename_is_recorded_and_diffs_as_a_rename(tmp_path: Path) -> None:
    old = _plan(tmp_path, "old-queue")
    new = _plan(tmp_path, "new-queue")
    queue = new.get("aws:sqs/queue:Queue", "new-queue")
    assert queue.options["aliases"] == ["urn:pulumi:s::demo::demo:index:Box$aws:sqs/queue:Queue::old-queue"]
    diff = diff_plans(old, new)
    assert diff.changes == ()  # neither a delete nor a create
    assert diff.aliased == (("urn:pulumi:s::demo::demo:index:Box$aws:sqs/queue:Queue::old-queue", queue.urn),)
    assert "kept rather than recreated: `old-queue` → `new-queue`" in render_diff_markdown(diff)


def test_a_rename_without_alias_is_a_delete_and_a_create(tmp_path: Path) -> None:
    old = _plan(tmp_path, "old-queue")
    new = _plan(tmp_path, "new-queue", PROGRAM.replace('if name != "old-queue" else None', "if False else None"))
    assert "aliases" not in new.get("aws:sqs/queue:Queue", "new-queue").options
    assert sorted(c.op for c in diff_plans(old, new).changes) == ["create", "delete"]
