""".github/workflows/pins.yml: the scheduled pin update runs the real `pins` command, checks the
result as a PR would, and opens a pull request whose body is each stack's plan diff; AWS access is OIDC only."""

from __future__ import annotations

import re
import shlex

from eks_karpenter.tools.cli import _parser

from tests.project.test_workflows import INFRA, WORKFLOWS, jobs, load, readme_commands, steps
from tests.support import FETCH_UPSTREAM, NO_SKIPS, STACKS

NAME = "pins.yml"


def runs() -> list[str]:
    return [str(s.get("run", "")).strip() for s in steps(jobs(NAME)["pins"])]


def test_it_is_scheduled_and_can_be_run_by_hand() -> None:
    body = load(NAME)
    triggers = body.get("on", body.get(True))
    assert triggers["schedule"][0]["cron"] and "workflow_dispatch" in triggers
    assert body["permissions"] == {"contents": "read"}


def test_infra_commands_are_real_and_the_pins_move_with_live_answers() -> None:
    parsed = [_parser().parse_args(shlex.split(m["args"])) for run in runs() for m in INFRA.finditer(run)]
    assert {p.command for p in parsed} == {"pins", "diff"}
    (pins,) = [p for p in parsed if p.command == "pins"]
    assert pins.live and pins.write


def test_the_pull_request_shows_every_stacks_plan_diff() -> None:
    (diff,) = [r for r in runs() if "python -m infra diff" in r]
    loop = re.search(r"for stack in ([a-z ]+); do", diff)
    assert loop and set(loop[1].split()) == set(STACKS)
    assert '--base origin/main --stack "$stack"' in diff and "> pr-body.md" in diff
    (open_pr,) = [r for r in runs() if "gh pr create" in r]
    assert "--body-file pr-body.md" in open_pr
    assert "git add components/eks_karpenter/versions.py docs/UPGRADING.md" in open_pr


def test_moved_pins_pass_the_readme_checks_before_the_pull_request() -> None:
    setup, checks = readme_commands()
    order = runs()
    assert order.index(setup) < order.index(FETCH_UPSTREAM) < order.index(checks)
    test_step = steps(jobs(NAME)["pins"])[order.index(checks)]
    assert test_step["env"][NO_SKIPS] == "1"
    assert order.index(checks) < next(i for i, r in enumerate(order) if "gh pr create" in r)


def test_aws_access_is_oidc_only_and_read_only_role() -> None:
    text = (WORKFLOWS / NAME).read_text()
    assert "aws-access-key-id" not in text and "AWS_SECRET_ACCESS_KEY" not in text
    job = jobs(NAME)["pins"]
    assert job["permissions"]["id-token"] == "write"
    (aws,) = [s for s in steps(job) if str(s.get("uses", "")).startswith("aws-actions/configure-aws-credentials@")]
    assert aws["with"]["role-to-assume"] == "${{ vars.AWS_PINS_ROLE_ARN }}" and "aws-region" in aws["with"]
