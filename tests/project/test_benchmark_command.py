"""The command benchmark times what a user runs on team-like pools, against a floor that reads the same stack file
and writes the same JSON: these tests check the stack it generates, that the floor does the platform's work, and
that its verdicts and stored result follow from the figures."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from eks_karpenter.config.stackfile import read_stack_file
from eks_karpenter.tools.engine import PlanDocument, plan_program
from eks_karpenter.tools.engine.mocks import PlanMocks

from benchmarks import command
from benchmarks.results import RESULTS
from benchmarks.scale import shape
from tests.support import REPO

EC2_NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"


def test_team_stack_is_the_prod_file_plus_the_pairs() -> None:
    prod = yaml.safe_load((REPO / "stacks" / "Pulumi.prod.yaml").read_text())["config"]
    team = yaml.safe_load(command.team_stack(3))["config"]
    pairs = [command.team_pair(i) for i in range(3)]
    assert team["eks-karpenter:nodeClasses"] == prod["eks-karpenter:nodeClasses"] + [c for c, _ in pairs]
    assert team["eks-karpenter:nodePools"] == prod["eks-karpenter:nodePools"] + [p for _, p in pairs]
    assert {k: v for k, v in team.items() if k not in ("eks-karpenter:nodeClasses", "eks-karpenter:nodePools")} == {
        k: v for k, v in prod.items() if k not in ("eks-karpenter:nodeClasses", "eks-karpenter:nodePools")}
    assert command.team_stack(0) == (REPO / "stacks" / "Pulumi.prod.yaml").read_text()  # N=0 is the prod plan


@pytest.mark.slow
def test_team_stack_reads_cleanly_at_size(tmp_path: Path) -> None:
    path = command.make_project(tmp_path, 1000) / "stacks" / "Pulumi.team.yaml"
    assert 1.5e6 < path.stat().st_size < 2.5e6  # about the size the issue measured (1.7 MB)
    file = read_stack_file(path, "stacks/Pulumi.team.yaml", "eks-karpenter")
    assert not file.issues
    assert len(file.config["eks-karpenter:nodePools"]) == 1003
    assert file.lines[("eks-karpenter:nodePools", 1002, "taints", 0, "key")] > 30_000


@pytest.fixture(scope="module")
def team_plan(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, PlanDocument]:
    project = command.make_project(tmp_path_factory.mktemp("team"), 2)
    return project, plan_program(project, command.STACK)


def _by_name(doc: PlanDocument, type_: str) -> dict[str, dict[str, Any]]:
    return {r.inputs["metadata"]["name"]: r.inputs["spec"] for r in doc.by_type(type_)}


@pytest.mark.slow
def test_each_team_pool_has_its_own_node_class_shaped_like_a_teams(team_plan: tuple[Path, PlanDocument]) -> None:
    classes, pools = _by_name(team_plan[1], EC2_NODE_CLASS), _by_name(team_plan[1], NODE_POOL)
    for team in ("team-0000", "team-0001"):
        node_class, pool = classes[team], pools[team]
        assert [d["deviceName"] for d in node_class["blockDeviceMappings"]] == ["/dev/xvda", "/dev/xvdb"]
        assert node_class["kubelet"]["systemReserved"] == {"cpu": "100m", "memory": "256Mi"}
        assert node_class["tags"]["team"] == team
        assert pool["template"]["spec"]["nodeClassRef"]["name"] == team
        assert pool["template"]["spec"]["taints"] == [{"key": "team", "value": team, "effect": "NoSchedule"}]
        keys = {r["key"] for r in pool["template"]["spec"]["requirements"]}
        assert {"karpenter.k8s.aws/instance-cpu", "topology.kubernetes.io/zone"} <= keys
        assert len(pool["disruption"]["budgets"]) == 2


@pytest.mark.slow
def test_prod_pools_are_unchanged_by_the_pairs(team_plan: tuple[Path, PlanDocument]) -> None:
    prod = plan_program(REPO, "prod")
    assert {k: v for k, v in _by_name(team_plan[1], NODE_POOL).items() if not k.startswith("team-")} == _by_name(
        prod, NODE_POOL)


@pytest.mark.slow
def test_the_floor_command_writes_the_plans_json(tmp_path: Path, team_plan: tuple[Path, PlanDocument]) -> None:
    project, plan = team_plan
    floor = command.make_floor(tmp_path / "floor", plan.to_json())
    out = tmp_path / "floor.json"
    subprocess.run(command.floor_argv(floor, project, out), cwd=REPO, check=True, capture_output=True)
    ours, theirs = json.loads(plan.to_json()), json.loads(out.read_text())
    # The floor makes the same registrations, look-ups and outputs; it has no rules, so no warnings (the pinned
    # AMI's age warning, for one, depends on the day).
    same = ("resources", "warnings")
    assert {k: v for k, v in ours.items() if k not in same} == {k: v for k, v in theirs.items() if k not in same}
    assert ours["outputs"] and ours["invokes"]  # the comparison above is not vacuous
    mine = {r["urn"]: r for r in ours["resources"]}
    floors = {r["urn"]: r for r in theirs["resources"]}
    assert mine.keys() == floors.keys()
    for urn, r in mine.items():
        f = floors[urn]
        assert {**r, "dependencies": None} == {**f, "dependencies": None}, urn
        # Dependencies the plan got from Output-valued inputs are the only ones missing: the floor's are plain.
        assert set(f["dependencies"]) <= set(r["dependencies"]), urn


@pytest.mark.slow
def test_the_floor_makes_its_look_ups_before_any_registration(tmp_path: Path, team_plan: tuple[Path, PlanDocument],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A synchronous look-up runs the event loop over every registration still in flight: made after them, the
    floor's look-ups (which grow with the pairs) made it quadratic in N. The platform's preflight makes its own
    first, and so does the floor."""
    _, plan = team_plan
    floor = command.make_floor(tmp_path / "floor", plan.to_json())
    registered: list[str] = []
    pending_at_invoke: list[int] = []
    new_resource, answer = PlanMocks.new_resource, PlanMocks.answer

    def counting_new_resource(self: PlanMocks, args: Any) -> Any:
        registered.append(args.name)
        return new_resource(self, args)

    def counting_answer(self: PlanMocks, token: str, args: dict[str, Any]) -> dict[str, Any]:
        pending_at_invoke.append(len(registered))
        return answer(self, token, args)

    monkeypatch.setattr(PlanMocks, "new_resource", counting_new_resource)
    monkeypatch.setattr(PlanMocks, "answer", counting_answer)
    doc = plan_program(floor, command.STACK)
    assert len(pending_at_invoke) == len(plan.invokes) > 0 and registered
    assert set(pending_at_invoke) == {0}
    assert len(doc.resources) == len(plan.resources)


def test_the_floor_reads_the_stack_file_without_the_library() -> None:
    assert "yaml.CSafeLoader" in command.FLOOR_COMMAND and "stackfile" not in command.FLOOR_COMMAND
    assert "marshal.loads" in command.FLOOR_PROGRAM_MARSHAL and "plan.json" not in command.FLOOR_PROGRAM_MARSHAL


def _side(seconds: float, rss: float = 100.0) -> dict[str, float]:
    return {"seconds": seconds, "wall": seconds * 1.5, "rss_mb": rss}


def _results(ours: tuple[float, float, float], floor: tuple[float, float, float],
             rss: float = 100.0) -> dict[int, dict[str, dict[str, float]]]:
    return {n: {"ours": _side(o, rss if n == 1000 else 100.0), "floor": _side(f),
                "size": {"stack_kb": n * 1.8, "json_kb": n * 9.0}}
            for n, o, f in zip((0, 300, 1000), ours, floor, strict=True)}


def test_verdicts_are_computed_from_the_figures() -> None:
    good = command.verdict_lines(_results((2.4, 5.4, 12.4), (2.3, 5.0, 11.0)))
    assert good[1].endswith("+0.10 s, met") and good[2].endswith("1.08x, met") and good[3].endswith("1.13x, met")
    assert good[4].endswith("ours x1.00, floor x0.95, met")  # 10 ms a pair both ways; floor 9 then 8.6
    assert good[5].endswith("1.00x (N=0), met")
    bad = command.verdict_lines(_results((2.5, 7.0, 20.0), (2.3, 5.0, 11.0), rss=120.0))
    assert bad[1].endswith("+0.20 s, NOT met") and bad[2].endswith("1.40x, NOT met")
    assert bad[3].endswith("1.82x, NOT met") and bad[4].endswith("NOT met")
    assert bad[5].endswith("1.20x (N=1000), NOT met")


def test_rows_follow_the_figures() -> None:
    rows = command.table_rows(_results((2.4, 5.4, 12.4), (2.3, 5.0, 11.0)))
    assert rows[0].startswith("| 0 | 0 | 0 | 2.30 | 2.40 | 1.04 | 0.10 | - | - |")
    assert rows[2].startswith("| 1000 | 1800 | 9000 | 11.00 | 12.40 | 1.13 | 1.40 | 10.0 | 8.7 |")
def test_stored_result_has_the_shape_of_the_benchmark_output() -> None:
    stored = (RESULTS / "command.md").read_text()
    assert stored.startswith("Refreshed by `python -m benchmarks.command --markdown --write-result` on ")
    block = stored.split("```text", 1)[1].rsplit("```", 1)[0]
    fake = command.render_block("2 cores, Some CPU, Python 3.11.7", {0: 15, 300: 10, 1000: 5},
                                _results((2.4, 5.4, 12.4), (2.3, 5.0, 11.0)))
    assert shape(block) == shape(fake)
