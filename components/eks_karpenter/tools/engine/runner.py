"""Run a Pulumi program under the mock runtime with a stack file's config, and collect the plan."""

from __future__ import annotations

import asyncio
import logging
import os
import re
import runpy
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pulumi
from pulumi.runtime import resource as _sdk_resource
from pulumi.runtime import settings as _settings
from pulumi.runtime import stack as _stack
from pulumi.runtime.sync_await import _sync_await

from eks_karpenter.config.running import ProjectFileError, PulumiProject, read_project
from eks_karpenter.config.stackfile import StackFile
from eks_karpenter.config.stackfile import read_stack_file as _read_stack_file
from eks_karpenter.tools.engine.document import PlanDocument
from eks_karpenter.tools.engine.mocks import CapturingMonitor, PlanMocks, plan_caller

DEFAULT_REGION = "us-east-1"


class PlanError(Exception):
    """The program could not be planned; the message is meant for the user as it is."""


class ProgramProject(PulumiProject):
    """A project the command line works on: `Pulumi.yaml` read by `config.running.read_project`, its problems
    raised as `PlanError` (one clean error)."""

    @staticmethod
    def load(root: Path) -> ProgramProject:
        try:
            found = read_project(root)
        except ProjectFileError as exc:
            raise PlanError(str(exc)) from None
        return ProgramProject(found.root, found.name, found.main, found.stack_config_dir)


def no_stack_file(path: Path) -> PlanError:
    """The error for a stack file that is not there, naming the stacks whose files are (a newcomer's first typo)."""
    folder = path.parent
    stacks = sorted(p.name[len("Pulumi."):-len(".yaml")] for p in folder.glob("Pulumi.*.yaml") if p.is_file()) \
        if folder.is_dir() else []
    there = f"the stacks there: {', '.join(stacks)}" if stacks else f"{folder} has no Pulumi.<stack>.yaml files"
    return PlanError(f"{path}: no such stack file ({there})")


def read_stack_file(project: ProgramProject, stack: str) -> StackFile:
    """A stack's file, read as the Pulumi CLI reads it (eks_karpenter/config/stackfile.py)."""
    path = project.stack_file(stack)
    if not path.is_file():
        raise no_stack_file(path)
    return _read_stack_file(path, project.shown(path), project.name)


def flat_config(project: ProgramProject, stack: str) -> dict[str, str]:
    """A stack's config as Pulumi hands it to the program (see `read_flat_config`), its file named as the user
    names it; raises `ConfigError` for what the Pulumi CLI itself refuses."""
    file = read_stack_file(project, stack)
    if file.issues:
        raise file.error()
    return file.flat()


def read_flat_config(path: Path, project: str) -> dict[str, str]:
    """Stack-file config as Pulumi hands it to a program: namespaced keys, objects as JSON text.

    Raises `ConfigError` for what the Pulumi CLI itself refuses (invalid YAML, duplicate keys, ...)."""
    if not path.is_file():
        raise no_stack_file(path)
    file = _read_stack_file(path, path.name, project)
    if file.issues:
        raise file.error()
    return file.flat()


@contextmanager
def _program_environment(root: Path) -> Iterator[None]:
    saved_cwd, saved_path = os.getcwd(), list(sys.path)
    os.chdir(root)
    try:
        yield
    finally:
        os.chdir(saved_cwd)
        sys.path[:] = saved_path


class _WarningCollector(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@dataclass(frozen=True)
class PlanResult:
    """What a run registered, and the error that stopped it (None when it completed)."""

    document: PlanDocument
    error: BaseException | None


def plan_program(
    root: Path,
    stack: str,
    invoke_results: dict[str, Any] | None = None,
    config_overrides: dict[str, str] | None = None,
    stack_outputs: dict[str, dict[str, Any]] | None = None,
) -> PlanDocument:
    """Run the program at `root` for `stack` under mocks and return what it registered.

    Errors the program raises (a `pulumi.RunError` for bad config) propagate unchanged, after the runtime
    has been shut down, so callers can print them as they are.
    """
    result = run_plan(root, stack, invoke_results, config_overrides, stack_outputs)
    if result.error is not None:
        raise result.error
    return result.document


def run_plan(
    root: Path,
    stack: str,
    invoke_results: dict[str, Any] | None = None,
    config_overrides: dict[str, str] | None = None,
    stack_outputs: dict[str, dict[str, Any]] | None = None,
    preview: bool = False,
) -> PlanResult:
    """Like `plan_program`, but returns the error with whatever was registered before it. `preview`: run as
    `pulumi preview` does (`pulumi.runtime.is_dry_run()`), not as `pulumi up`."""
    project = ProgramProject.load(root.resolve())
    file = read_stack_file(project, stack)
    if file.issues:  # the Pulumi CLI refuses such a file before the program starts: nothing is registered
        return PlanResult(PlanDocument(project=project.name, stack=stack, resources=[], outputs={}, invokes=[],
                                       warnings=[]), file.error())
    config = file.flat()
    config.update(config_overrides or {})

    def program() -> None:
        runpy.run_path(str(project.main), run_name="__main__")

    with _program_environment(project.root):
        return _run_mocked(program, project.name, stack, config, invoke_results, stack_outputs, preview)


def plan_components(build: Callable[[], object], region: str = DEFAULT_REGION, project: str = "eks-karpenter",
                    stack: str = "test", config: dict[str, str] | None = None) -> PlanResult:
    """Run `build` (code that constructs components) under the same mocks as a whole program.

    For unit tests of one component: what it registers, its stack of warnings, and any error it raised.
    """
    def run() -> object:
        result = build()
        # An Output the build returns is awaited, so errors inside its applies fail the run.
        return result.future() if isinstance(result, pulumi.Output) else result

    return _run_mocked(run, project, stack, {"aws:region": region, **(config or {})}, None, None)


def _run_mocked(func: Callable[[], object], project: str, stack: str, config: dict[str, str],
                invoke_results: dict[str, Any] | None, stack_outputs: dict[str, dict[str, Any]] | None,
                preview: bool = False) -> PlanResult:
    region = config.get("aws:region", DEFAULT_REGION)
    mocks = PlanMocks(region=region, invoke_results=invoke_results, stack_outputs=stack_outputs,
                      caller_arn=plan_caller(config, project))
    monitor = CapturingMonitor(mocks)
    real_resolve = _sdk_resource._resolve_depends_on_urns  # type: ignore[attr-defined]

    async def resolve_and_record(depends_on: Any, from_resource: pulumi.Resource | None = None) -> set[str]:
        # The SDK merges a resource's `depends_on` (expanded as the engine sees it) into `dependencies`; recorded
        # here so the plan can show the explicit edges apart from those its inputs imply.
        urns: set[str] = await real_resolve(depends_on, from_resource=from_resource)
        if from_resource is not None:
            monitor.record_depends_on(from_resource._type, from_resource._name, urns)
        return urns

    logger = logging.getLogger(f"eks-karpenter.plan.{stack}")
    logger.propagate = False
    collector = _WarningCollector()
    logger.handlers[:] = [collector]

    _settings.ROOT.set(None)
    # The organization a self-managed backend (`pulumi login s3://...`) reports, as a real run there sees it.
    pulumi.runtime.set_mocks(mocks, project=project, stack=stack, preview=preview, monitor=monitor, logger=logger,
                             organization="organization")
    _settings.ROOT.set(None)  # set_mocks made a root; the run makes its own, as `pulumi up` does
    # A run that failed inside an apply leaves its pending outputs behind, bound to its closed event loop;
    # the next run in this process would wait on them.
    with _settings.SETTINGS.lock:
        _settings.SETTINGS.outputs.clear()
    pulumi.runtime.set_all_config(config)

    error: BaseException | None = None
    _sdk_resource._resolve_depends_on_urns = resolve_and_record  # type: ignore[attr-defined]
    # The preflight's in-cluster look-up goes to the mocks too, as an invoke: offline, no API server is asked.
    from eks_karpenter.platform.preflight.hook import set_in_cluster_lookup

    real_in_cluster = set_in_cluster_lookup(mocks.answer)
    try:
        _sync_await(_stack.run_pulumi_func(lambda: _stack.run_in_stack(func)))  # type: ignore[arg-type]
    except Exception as exc:
        error = exc
    finally:
        _sdk_resource._resolve_depends_on_urns = real_resolve  # type: ignore[attr-defined]
        set_in_cluster_lookup(real_in_cluster)
        _close_event_loop()

    document = PlanDocument(
        project=project,
        stack=stack,
        # Registration order depends on task scheduling; URN order does not.
        resources=sorted(monitor.planned, key=lambda r: r.urn),
        outputs=monitor.stack_outputs,
        invokes=sorted(mocks.invokes, key=lambda i: i.sort_key()),
        warnings=collector.messages,
    )
    return PlanResult(document, error)


def _close_event_loop() -> None:
    # The SDK leaves its loop open; closing it here avoids a noisy close at interpreter exit.
    loop = asyncio.get_event_loop_policy().get_event_loop()
    if not loop.is_running() and not loop.is_closed():
        loop.close()
    asyncio.set_event_loop(asyncio.new_event_loop())


STACK_REFERENCE = re.compile(r"^[A-Za-z0-9_.-]+/(?P<project>[A-Za-z0-9_.-]+)/(?P<stack>[A-Za-z0-9_.-]+)$")


def referenced_stacks(root: Path, stack: str, project_name: str) -> list[tuple[str, str]]:
    """Config values of a stack file that name a stack of `project_name` (`<org>/<project>/<stack>`)."""
    project = ProgramProject.load(root.resolve())
    file = read_stack_file(project, stack)
    if file.issues:
        raise file.error()
    found = []
    for value in file.flat().values():
        match = STACK_REFERENCE.match(value)
        if match and match["project"] == project_name:
            found.append((value, match["stack"]))
    return found


def plan_with_references(root: Path, stack: str, platform_root: Path | None = None,
                         stack_outputs: dict[str, dict[str, Any]] | None = None,
                         invoke_results: dict[str, Any] | None = None) -> PlanDocument:
    """Plan a program, answering its StackReferences like the Pulumi service would, but offline.

    `stack_outputs` (name -> outputs) answers references as given. Any other reference to a stack of the
    platform project at `platform_root` is answered by planning that platform stack first (offline too), so a
    consumer's plan shows what it would build against the platform as committed. A reference neither answers
    fails the plan with a message naming both options. `invoke_results` answers invokes of the planned stack
    (`infra plan --live`: the pin look-ups, from AWS).
    """
    outputs = dict(stack_outputs or {})
    if platform_root is not None:
        platform = ProgramProject.load(platform_root.resolve())
        for ref, platform_stack in referenced_stacks(root, stack, platform.name):
            if ref not in outputs:
                outputs[ref] = plan_program(platform.root, platform_stack).outputs
    return plan_program(root, stack, invoke_results=invoke_results, stack_outputs=outputs)


def stack_region(root: Path, stack: str) -> str:
    """The stack file's `aws:region` (the default region when it sets none)."""
    return str(read_stack_file(ProgramProject.load(root.resolve()), stack).flat().get("aws:region", DEFAULT_REGION))
