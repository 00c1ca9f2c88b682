"""The GitHub workflows stay true to this repository: real stacks, real `python -m infra` commands, the README's
set-up and test commands, and the pulumi/actions inputs a DIY backend needs."""

from __future__ import annotations

import re
import shlex
from typing import Any

import pytest
import yaml
from eks_karpenter.tools.cli import _parser

from tests.support import FETCH_UPSTREAM, INSTALL_PROMTOOL, NO_SKIPS, REPO, STACKS, UPSTREAM_CACHE, UPSTREAM_LOCK

WORKFLOWS = REPO / ".github" / "workflows"
FILES = ("pr.yml", "deploy.yml")
"""The workflows that run the README's checks."""
CLOUD_FILES = (*FILES, "drift.yml")
"""Every workflow that works on the stacks (drift.yml only previews them)."""
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
INFRA = re.compile(r"python -m infra\b(?P<args>[^\n;&|>]*)")


def load(name: str) -> dict[str, Any]:
    body = yaml.safe_load((WORKFLOWS / name).read_text())
    assert isinstance(body, dict), name
    return body


def jobs(name: str) -> dict[str, dict[str, Any]]:
    return load(name)["jobs"]


def matrix_stacks(job: dict[str, Any]) -> list[str]:
    return list(job.get("strategy", {}).get("matrix", {}).get("stack", []))


def expand(text: str, job: dict[str, Any], env: dict[str, str] | None = None) -> list[str]:
    """`text` once per matrix stack, with `${{ matrix.stack }}` filled in (other expressions become `X`), and the
    step's `env` variables (`${NAME}`) replaced by their values for that stack."""
    out = []
    for stack in matrix_stacks(job) or [""]:
        def fill(value: str, stack: str = stack) -> str:
            return EXPRESSION.sub(lambda m: stack if m.group(1) == "matrix.stack" else "X", value)

        filled = fill(text)
        for name, value in (env or {}).items():
            filled = filled.replace("${" + name + "}", fill(str(value)))
        out.append(filled)
    return out


def steps(job: dict[str, Any]) -> list[dict[str, Any]]:
    return list(job.get("steps", []))


def pulumi_steps(name: str) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    return [(job_id, job, step) for job_id, job in jobs(name).items() for step in steps(job)
            if str(step.get("uses", "")).startswith("pulumi/actions@")]


def assumed_roles(job: dict[str, Any]) -> list[str]:
    return [str(s["with"]["role-to-assume"]) for s in steps(job)
            if str(s.get("uses", "")).startswith("aws-actions/configure-aws-credentials@")]


def preview_job(job: dict[str, Any]) -> bool:
    """A job that assumes the preview role (PR previews, the drift check)."""
    return "${{ vars.AWS_PREVIEW_ROLE_ARN }}" in assumed_roles(job)


def cloud_job(job: dict[str, Any]) -> bool:
    """A job that assumes an AWS role (and so may reach a cluster)."""
    return any(str(s.get("uses", "")).startswith("aws-actions/configure-aws-credentials@") for s in steps(job))


def job_stacks(job: dict[str, Any]) -> list[str]:
    """The stacks a job works on: its matrix, or the stack-name of its pulumi step."""
    named = matrix_stacks(job)
    for step in steps(job):
        if str(step.get("uses", "")).startswith("pulumi/actions@") and not named:
            named = expand(step["with"]["stack-name"], job)
    return named


def readme_commands() -> tuple[str, str]:
    """The README's set-up (without its trailing plan) and test commands."""
    blocks = re.findall(r"```bash\n(.*?)\n```", (REPO / "README.md").read_text(), re.S)
    setup = blocks[0].split(" && .venv/bin/python -m infra plan")[0]
    return setup, blocks[1]


@pytest.mark.parametrize("name", CLOUD_FILES)
def test_workflow_parses(name: str) -> None:
    body = load(name)
    triggers = body.get("on", body.get(True))  # YAML 1.1 reads a bare `on` as true
    assert triggers and body["jobs"]
    for job_id, job in body["jobs"].items():
        assert steps(job), job_id
        if not cloud_job(job):  # PR code without cloud access stays on GitHub-hosted runners
            assert job.get("runs-on") == "ubuntu-latest", job_id


@pytest.mark.parametrize("name", CLOUD_FILES)
def test_every_named_stack_exists(name: str) -> None:
    named: set[str] = set()
    for job in jobs(name).values():
        named |= set(matrix_stacks(job))
        for step in steps(job):
            stack = step.get("with", {}).get("stack-name")
            if stack:
                named |= set(expand(stack, job))
            for run in expand(step.get("run", ""), job, step.get("env")):
                named |= set(re.findall(r"--stack\s+\"?([A-Za-z0-9_.-]+)", run))
    named.discard("")
    assert named, f"{name} names no stack"
    assert named <= set(STACKS), f"{name} names stacks that are not in stacks/: {sorted(named - set(STACKS))}"


def test_pr_diffs_every_stack() -> None:
    assert set(matrix_stacks(jobs("pr.yml")["plan-diff"])) == set(STACKS)


@pytest.mark.parametrize("name", CLOUD_FILES)
def test_infra_commands_are_real_subcommands(name: str) -> None:
    commands = set()
    for job in jobs(name).values():
        for step in steps(job):
            for run in expand(step.get("run", ""), job, step.get("env")):
                for match in INFRA.finditer(run):
                    parsed = _parser().parse_args(shlex.split(match["args"]))  # SystemExit (a failure) if invalid
                    commands.add(parsed.command)
                    if getattr(parsed, "stack", None):
                        assert parsed.stack in STACKS, run
    if name == "pr.yml":
        assert commands == {"diff"}


def test_pr_diff_uses_the_base_branch_with_full_history() -> None:
    job = jobs("pr.yml")["plan-diff"]
    checkout = next(s for s in steps(job) if str(s.get("uses", "")).startswith("actions/checkout@"))
    assert checkout["with"]["fetch-depth"] == 0
    run = next(s for s in steps(job) if "python -m infra diff" in s.get("run", ""))
    assert '--base "origin/${BASE_REF}"' in run["run"] and run["env"]["BASE_REF"] == "${{ github.base_ref }}"
    assert "--stack" in run["run"] and run["env"]["STACK"] == "${{ matrix.stack }}"
    comment = next(s for s in steps(job) if str(s.get("uses", "")).startswith("actions/github-script@"))
    assert "head.repo.full_name == github.repository" in comment["if"]


def test_a_refused_change_is_still_posted_then_fails_the_job() -> None:
    # `diff` exits 3 on a change `pulumi up` cannot carry out: the comment must reach the PR before the job fails,
    # and any other failure must still stop the step.
    job = jobs("pr.yml")["plan-diff"]
    names = [s.get("name", s.get("uses", "")) for s in steps(job)]
    run = next(s for s in steps(job) if "python -m infra diff" in s.get("run", ""))
    assert "|| status=$?" in run["run"] and 'echo "status=${status}" >> "$GITHUB_OUTPUT"' in run["run"]
    assert '[ "${status}" != 3 ]' in run["run"] and 'exit "${status}"' in run["run"]
    fail = next(s for s in steps(job) if s.get("name") == "Fail on a change that cannot be applied")
    assert fail["if"] == f"steps.{run['id']}.outputs.status == '3'" and "exit 3" in fail["run"]
    comment = next(i for i, n in enumerate(names) if n == "Comment on the PR (same-repository PRs)")
    assert names.index("Fail on a change that cannot be applied") > comment


@pytest.mark.parametrize("name", FILES)
def test_set_up_and_checks_are_the_readme_commands(name: str) -> None:
    setup, checks = readme_commands()
    for job_id, job in jobs(name).items():
        python = [s for s in steps(job) if str(s.get("uses", "")).startswith("actions/setup-python@")]
        assert python and str(python[0]["with"]["python-version"]) == "3.11", job_id
        runs = [s.get("run", "").strip() for s in steps(job)]
        assert setup in runs, f"{name}:{job_id} does not set up as the README does"
    assert checks in [s.get("run", "").strip() for s in steps(jobs(name)["checks"])]


def test_preview_needs_a_backend_and_uses_pulumi_actions() -> None:
    found = pulumi_steps("pr.yml")
    assert found
    for job_id, job, step in found:
        assert "vars.PULUMI_BACKEND_URL != ''" in job["if"], job_id
        assert job["permissions"]["id-token"] == "write"
        assert str(step["uses"]) == "pulumi/actions@v7"
        inputs = step["with"]
        assert inputs["command"] == "preview"
        assert inputs["comment-on-pr"] is True and inputs["diff"] is True
        assert inputs["cloud-url"] == "${{ vars.PULUMI_BACKEND_URL }}"
        assert inputs["policyPacks"] == "policy" and (REPO / inputs["policyPacks"] / "PulumiPolicy.yaml").is_file()
        assert inputs["stack-name"]
        assert any(str(s.get("uses", "")).startswith("aws-actions/configure-aws-credentials@") for s in steps(job))


def test_deploy_runs_up_per_stack_serialised_per_stack() -> None:
    found = pulumi_steps("deploy.yml")
    stacks = set()
    for job_id, job, step in found:
        inputs = step["with"]
        assert str(step["uses"]) == "pulumi/actions@v7" and inputs["command"] == "up", job_id
        assert inputs["cloud-url"] == "${{ vars.PULUMI_BACKEND_URL }}" and inputs["policyPacks"] == "policy"
        (stack,) = expand(inputs["stack-name"], job)
        stacks.add(stack)
        assert job["concurrency"]["group"] == f"pulumi-{stack}", job_id
        assert job["concurrency"]["cancel-in-progress"] is False, "a cancelled `up` leaves a lock behind"
        assert "vars.PULUMI_BACKEND_URL != ''" in job["if"]
        assert "checks" in _needs_closure("deploy.yml", job_id)
    assert stacks == set(STACKS)


def test_prod_waits_for_dev_and_an_approval() -> None:
    ((job_id, job),) = [(j, job) for j, job, step in pulumi_steps("deploy.yml") if step["with"]["stack-name"] == "prod"]
    assert job["environment"] == "production"
    dev_job = next(j for j, _, s in pulumi_steps("deploy.yml") if s["with"]["stack-name"] == "dev")
    assert dev_job in _needs_closure("deploy.yml", job_id)
    assert load("deploy.yml").get("on", load("deploy.yml").get(True)) == {"push": {"branches": ["main"]}}


def _needs_closure(name: str, job_id: str) -> set[str]:
    all_jobs, seen, todo = jobs(name), set(), [job_id]
    while todo:
        needs = all_jobs[todo.pop()].get("needs", [])
        for need in [needs] if isinstance(needs, str) else needs:
            if need not in seen:
                seen.add(need)
                todo.append(need)
    return seen



def test_ci_script_runs_the_readme_commands_verbatim() -> None:
    setup, test = readme_commands()
    script = (REPO / ".ci" / "run").read_text().splitlines()
    assert setup in script
    assert test in script


@pytest.mark.parametrize("name", FILES)
def test_tests_run_after_fetching_upstream_files_and_may_not_skip_them(name: str) -> None:
    _, checks = readme_commands()
    runners = [(job_id, job) for job_id, job in jobs(name).items()
               if checks in [s.get("run", "").strip() for s in steps(job)]]
    assert runners, f"{name} never runs the README's test command"
    for job_id, job in runners:
        order = steps(job)
        runs = [s.get("run", "").strip() for s in order]
        test_at, fetch_at = runs.index(checks), runs.index(FETCH_UPSTREAM)  # ValueError (a failure) if absent
        setup_at = runs.index(readme_commands()[0])
        assert setup_at < fetch_at < test_at, f"{name}:{job_id}: set up, fetch upstream files, then test"
        assert order[test_at].get("env", {}).get(NO_SKIPS) == "1", f"{name}:{job_id}: upstream skips must fail here"
        (cache_at,) = [i for i, s in enumerate(order) if str(s.get("uses", "")).startswith("actions/cache@")]
        cache = order[cache_at]["with"]
        assert cache_at < fetch_at, f"{name}:{job_id}: restore the cache before fetching"
        assert cache["path"] == str(UPSTREAM_CACHE.relative_to(REPO))
        lock = str(UPSTREAM_LOCK.relative_to(REPO))
        assert f"hashFiles('{lock}')" in cache["key"], "a new lock file must not reuse an old cache"


def test_ci_and_the_readme_install_promtool_with_the_same_command() -> None:
    blocks = re.findall(r"```bash\n(.*?)\n```", (REPO / "README.md").read_text(), re.S)
    assert INSTALL_PROMTOOL in blocks, "the README's promtool install is its own command"
    assert INSTALL_PROMTOOL not in readme_commands()[0], "the set-up must work for a user without root"
    script = (REPO / ".ci" / "run").read_text().splitlines()
    assert script.index(INSTALL_PROMTOOL) < script.index(readme_commands()[1])


@pytest.mark.parametrize("name", FILES)
def test_runs_that_may_not_skip_install_promtool_first(name: str) -> None:
    _, checks = readme_commands()
    for job_id, job in jobs(name).items():
        order = steps(job)
        runs = [s.get("run", "").strip() for s in order]
        for at, step in enumerate(order):
            if runs[at] == checks and step.get("env", {}).get(NO_SKIPS) == "1":
                installs = [i for i, r in enumerate(runs[:at]) if INSTALL_PROMTOOL in r]
                assert installs, f"{name}:{job_id}: the alert rule tests need promtool"
                assert order[installs[-1]].get("if") == step.get("if"), f"{name}:{job_id}: installed when tested"


def test_the_readme_names_the_fetch_command() -> None:
    readme = (REPO / "README.md").read_text()
    assert f"`{FETCH_UPSTREAM}`" in readme
    assert NO_SKIPS in readme

# --- AWS access and runners ------------------------------------------------------------------

@pytest.mark.parametrize("name", CLOUD_FILES)
def test_aws_access_is_oidc_only(name: str) -> None:
    text = (WORKFLOWS / name).read_text()
    for key in ("aws-access-key-id", "aws-secret-access-key", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        assert key not in text, f"{name}: long-lived AWS keys ({key})"
    found = 0
    for job_id, job in jobs(name).items():
        for step in steps(job):
            if str(step.get("uses", "")).startswith("aws-actions/configure-aws-credentials@"):
                found += 1
                assert job["permissions"]["id-token"] == "write", job_id
                assert re.fullmatch(r"\$\{\{ vars\.AWS_[A-Z_]+_ROLE_ARN \}\}", step["with"]["role-to-assume"])
                assert "aws-region" in step["with"]
    assert found


@pytest.mark.parametrize("name", CLOUD_FILES)
def test_jobs_that_reach_a_cluster_run_on_the_runner_a_repository_variable_names(name: str) -> None:
    cloud = {job_id: job for job_id, job in jobs(name).items() if cloud_job(job)}
    assert cloud
    for job_id, job in cloud.items():
        runs_on = str(job["runs-on"])
        # A deploy (main's reviewed code) may fall back to a shared runner; a preview never: unreviewed code of one
        # stack would run on another's runner (prod's, inside prod's network).
        tail = " || 'ubuntu-latest' }}" if preview_job(job) else " || vars.PULUMI_RUNNER || 'ubuntu-latest' }}"
        assert runs_on.startswith("${{ ") and runs_on.endswith(tail), job_id
        if preview_job(job):
            assert not re.search(r"vars\.PULUMI_RUNNER\b(?!_)", runs_on), f"{name}:{job_id}: a shared runner"
        stacks = job_stacks(job)
        assert stacks, job_id
        for stack in stacks:
            var = f"vars.PULUMI_RUNNER_{stack.upper()}"
            assert var in runs_on, f"{name}:{job_id} has no runner variable for {stack}"
            if matrix_stacks(job):
                assert f"matrix.stack == '{stack}' && {var}" in runs_on, job_id


def test_fork_code_never_reaches_a_self_hosted_runner() -> None:
    for job_id, job in jobs("pr.yml").items():
        if str(job.get("runs-on")) != "ubuntu-latest":
            assert "head.repo.full_name == github.repository" in job["if"], job_id


def test_prod_pull_request_previews_never_run_on_prods_deploy_runner() -> None:
    # pull_request runs the PR's own workflow file, so no reviewer gate keeps PR code off a runner: prod's deploy
    # runner admits only main's deploy.yml and drift.yml (its runner group), and the PR preview asks for another.
    ((job_id, job, _),) = pulumi_steps("pr.yml")
    runs_on = str(job["runs-on"])
    assert "matrix.stack == 'prod' && vars.PULUMI_RUNNER_PROD_PREVIEW" in runs_on, job_id
    prods_runner = re.compile(r"vars\.PULUMI_RUNNER_PROD\b(?!_)")
    assert not prods_runner.search(runs_on), job_id
    for name in ("deploy.yml", "drift.yml"):
        assert any(prods_runner.search(str(j["runs-on"])) for j in jobs(name).values()), name


def test_readme_documents_the_runner_variables() -> None:
    readme = (REPO / "docs" / "review-flow.md").read_text()
    for var in ("PULUMI_RUNNER", "PULUMI_RUNNER_PROD", "PULUMI_RUNNER_PROD_PREVIEW", "AWS_DEPLOY_ROLE_ARN",
                "AWS_PREVIEW_ROLE_ARN"):
        assert f"`{var}`" in readme, var

# --- PR code never holds deploy credentials, and prod's preview waits for a reviewer ----------

def test_previews_assume_the_read_only_preview_role_never_the_deploy_role() -> None:
    text = (WORKFLOWS / "pr.yml").read_text()
    assert "AWS_DEPLOY_ROLE_ARN" not in text, "PR code must never get the deploy role"
    for job_id, job, _step in pulumi_steps("pr.yml"):
        roles = [s["with"]["role-to-assume"] for s in steps(job)
                 if str(s.get("uses", "")).startswith("aws-actions/configure-aws-credentials@")]
        assert roles == ["${{ vars.AWS_PREVIEW_ROLE_ARN }}"], job_id


def test_prod_preview_runs_only_behind_a_reviewed_environment() -> None:
    for job_id, job, _step in pulumi_steps("pr.yml"):
        env = str(job.get("environment", ""))
        assert env, f"{job_id}: no environment: prod's preview would run unreviewed PR code on prod's runner"
        for stack in job_stacks(job):
            chosen = EXPRESSION.sub(lambda m, s=stack: repr(_pick(m.group(1), s)), env)
            assert (chosen == "'preview-production'") == (stack == "prod"), (stack, chosen)
    # The deploy workflow's prod job is gated as before, and never shares the preview's environment.
    ((_, prod, _),) = [x for x in pulumi_steps("deploy.yml") if x[2]["with"]["stack-name"] == "prod"]
    assert prod["environment"] == "production"


def _pick(expression: str, stack: str) -> str:
    """`matrix.stack == 'prod' && 'a' || 'b'` (or `|| format('b-{0}', matrix.stack)`) for one stack: the only
    expression shapes the test accepts."""
    match = re.fullmatch(r"matrix\.stack == '(\w+)' && '([\w-]+)' \|\| "
                         r"(?:'([\w-]+)'|format\('([\w-]*)\{0\}', matrix\.stack\))", expression)
    assert match, expression
    if stack == match[1]:
        return match[2]
    return match[3] if match[3] is not None else f"{match[4]}{stack}"


def test_each_stack_previews_in_its_own_environment_with_its_own_passphrase() -> None:
    """An unreviewed preview sees only the passphrase of the stack it previews: each stack's preview job runs in an
    environment of its own, where the passphrase is an environment secret."""
    for job_id, job, step in pulumi_steps("pr.yml"):
        chosen = {stack: EXPRESSION.sub(lambda m, s=stack: repr(_pick(m.group(1), s)), str(job["environment"]))
                  for stack in job_stacks(job)}
        assert len(set(chosen.values())) == len(chosen), (job_id, chosen)
        assert step["env"]["PULUMI_CONFIG_PASSPHRASE"] == "${{ secrets.PULUMI_CONFIG_PASSPHRASE }}", job_id


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_created_clusters_declare_a_read_only_preview_deployer(stack: str) -> None:
    # The identity behind AWS_PREVIEW_ROLE_ARN must be able to read the cluster, and only read it.
    deployers = yaml.safe_load((REPO / "stacks" / f"Pulumi.{stack}.yaml").read_text())["config"][
        "eks-karpenter:access"]["deployers"]
    previews = [d for d in deployers if d.get("role") == "preview"]
    assert len(previews) == 1 and previews[0]["name"] == "preview"


# --- drift: a scheduled refresh-preview of every stack ------------------------------------------------------------

def test_drift_previews_every_stack_with_refresh_and_expects_no_changes() -> None:
    body = load("drift.yml")
    triggers = body.get("on", body.get(True))
    assert set(triggers) == {"schedule", "workflow_dispatch"} and triggers["schedule"][0]["cron"]
    ((job_id, job, step),) = pulumi_steps("drift.yml")
    assert set(matrix_stacks(job)) == set(STACKS) and job["strategy"]["fail-fast"] is False
    assert "vars.PULUMI_BACKEND_URL != ''" in job["if"], job_id
    inputs = step["with"]
    assert str(step["uses"]) == "pulumi/actions@v7" and inputs["command"] == "preview"
    assert inputs["refresh"] is True and inputs["expect-no-changes"] is True
    assert inputs["stack-name"] == "${{ matrix.stack }}" and inputs["cloud-url"] == "${{ vars.PULUMI_BACKEND_URL }}"
    assert inputs["policyPacks"] == "policy" and step["env"]["PULUMI_CONFIG_PASSPHRASE"]
    setup, _ = readme_commands()
    assert setup in [s.get("run", "").strip() for s in steps(job)]


def test_drift_uses_the_preview_jobs_credentials_model() -> None:
    ((_, preview, _),) = pulumi_steps("pr.yml")
    ((_, drift, _),) = pulumi_steps("drift.yml")
    # The read-only preview role through OIDC, the same environments (so prod's own role variable and its
    # reviewers apply) and the same per-stack runners; no write token, no deploy role.
    assert "AWS_DEPLOY_ROLE_ARN" not in (WORKFLOWS / "drift.yml").read_text()
    for job in (preview, drift):
        roles = [s["with"]["role-to-assume"] for s in steps(job)
                 if str(s.get("uses", "")).startswith("aws-actions/configure-aws-credentials@")]
        assert roles == ["${{ vars.AWS_PREVIEW_ROLE_ARN }}"]
    # The same environments but prod's, whose drift check runs unattended (`drift-production`, main only, no
    # reviewers); the same runners but prod's: drift runs main's code on prod's deploy runner, a PR's preview never.
    assert drift["environment"] == preview["environment"].replace("'preview-production'", "'drift-production'")
    assert drift["runs-on"] == preview["runs-on"].replace("vars.PULUMI_RUNNER_PROD_PREVIEW", "vars.PULUMI_RUNNER_PROD")
    assert drift["permissions"] == {"contents": "read", "id-token": "write"}
    assert load("drift.yml")["permissions"] == {"contents": "read"}


# --- credentials live in one environment per stack -------------------------------------------------------------

DEPLOY_ENVIRONMENTS = {"dev": "dev", "brownfield": "brownfield", "prod": "production"}
"""The deploy job's environment per stack (docs/deploy.md, "CI")."""
PREVIEW_ENVIRONMENTS = {"dev": "preview-dev", "brownfield": "preview-brownfield", "prod": "preview-production"}
"""The preview's environment per stack."""
DRIFT_ENVIRONMENTS = {**PREVIEW_ENVIRONMENTS, "prod": "drift-production"}
"""The drift check's environment per stack: prod's is its own, unreviewed but limited to main, since the check is
scheduled and nobody is there to approve it; the others share the preview's."""
ALL_FILES = tuple(sorted(p.name for p in WORKFLOWS.glob("*.yml")))


def environments(job: dict[str, Any]) -> dict[str, str]:
    """The job's environment per stack it works on (`_pick` resolves the matrix expression)."""
    env = str(job.get("environment", ""))

    def resolve(stack: str) -> str:
        return EXPRESSION.sub(lambda m: _pick(m.group(1), stack), env)

    return {stack: resolve(stack) for stack in job_stacks(job)}


def holds_stack_credentials(job: dict[str, Any]) -> bool:
    text = yaml.safe_dump(job)
    return "secrets.PULUMI_CONFIG_PASSPHRASE" in text or any(
        role in ("${{ vars.AWS_DEPLOY_ROLE_ARN }}", "${{ vars.AWS_PREVIEW_ROLE_ARN }}") for role in assumed_roles(job))


@pytest.mark.parametrize("name", ALL_FILES)
def test_every_job_with_a_passphrase_or_a_stack_role_runs_in_an_environment(name: str) -> None:
    for job_id, job in jobs(name).items():
        if holds_stack_credentials(job):
            assert job.get("environment"), f"{name}:{job_id}: would need a repository-level secret or role"
            assert job_stacks(job), f"{name}:{job_id}"
        else:  # no other secret than the workflow's own token
            assert set(re.findall(r"secrets\.(\w+)", yaml.safe_dump(job))) <= {"GITHUB_TOKEN"}, (name, job_id)


def test_deploy_jobs_run_in_one_environment_per_stack() -> None:
    seen = {}
    for job_id, job, _step in pulumi_steps("deploy.yml"):
        for stack, env in environments(job).items():
            seen[stack] = env
            assert assumed_roles(job) == ["${{ vars.AWS_DEPLOY_ROLE_ARN }}"], job_id
    assert seen == DEPLOY_ENVIRONMENTS


@pytest.mark.parametrize(("name", "expected"), [("pr.yml", PREVIEW_ENVIRONMENTS), ("drift.yml", DRIFT_ENVIRONMENTS)])
def test_previews_run_in_their_stacks_preview_environment_with_its_role(name: str, expected: dict[str, str]) -> None:
    ((job_id, job, step),) = pulumi_steps(name)
    assert environments(job) == expected, job_id
    assert assumed_roles(job) == ["${{ vars.AWS_PREVIEW_ROLE_ARN }}"]
    assert step["env"]["PULUMI_CONFIG_PASSPHRASE"] == "${{ secrets.PULUMI_CONFIG_PASSPHRASE }}"
    assert not set(expected.values()) & set(DEPLOY_ENVIRONMENTS.values())


def _environment_rows() -> dict[str, str]:
    """docs/deploy.md's environment table: each environment named in a row's first cell -> its protection."""
    rows = {}
    for line in (REPO / "docs" / "deploy.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) == 4:
            for env in re.findall(r"`([\w-]+)`", cells[0]):
                rows[env] = cells[3]
    return rows


def test_prods_scheduled_drift_check_waits_for_no_reviewer_and_runs_only_main() -> None:
    rows = _environment_rows()
    assert "required reviewers" in rows["preview-production"]
    protection = rows[DRIFT_ENVIRONMENTS["prod"]]
    assert "`main` only" in protection and "reviewer" not in protection.replace("no reviewers", ""), protection
    assert set(DRIFT_ENVIRONMENTS.values()) | set(PREVIEW_ENVIRONMENTS.values()) | set(
        DEPLOY_ENVIRONMENTS.values()) <= set(rows)


def test_the_docs_state_each_roles_trust_subject_and_state_access() -> None:
    deploy = (REPO / "docs" / "deploy.md").read_text()
    for env in (*DEPLOY_ENVIRONMENTS.values(), *PREVIEW_ENVIRONMENTS.values(), *DRIFT_ENVIRONMENTS.values()):
        assert f"repo:<owner>/<repo>:environment:{env}" in deploy, env
    assert '"token.actions.githubusercontent.com:aud": "sts.amazonaws.com"' in deploy
    # Each preview role reads its own stack's state object, no other's.
    assert "arn:aws:s3:::<state-bucket>/.pulumi/stacks/eks-karpenter/<stack>.*" in deploy
    flow = (REPO / "docs" / "review-flow.md").read_text()
    for env in (*PREVIEW_ENVIRONMENTS.values(), *DRIFT_ENVIRONMENTS.values()):
        assert f"`{env}`" in flow, env


def test_each_stack_names_a_preview_role_of_its_own() -> None:
    previews: dict[str, str] = {}
    for stack in STACKS:
        deployers = yaml.safe_load((REPO / "stacks" / f"Pulumi.{stack}.yaml").read_text())["config"].get(
            "eks-karpenter:access", {}).get("deployers", [])
        for d in deployers:
            if d.get("role") == "preview":
                assert d["principalArn"] not in previews.values(), f"{stack} shares a preview role"
                assert d["principalArn"] not in {x["principalArn"] for x in deployers if x is not d}
                previews[stack] = d["principalArn"]
    assert {"dev", "prod"} <= set(previews)
