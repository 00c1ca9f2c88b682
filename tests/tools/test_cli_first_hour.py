"""What a newcomer meets in the first hour: `--version`, a help that lists every command, a missing stack file that
lists the stacks there are, did-you-mean for nested keys and instance types, and messages in their project's
namespace."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from eks_karpenter import __version__
from eks_karpenter.config.errors import ConfigError
from eks_karpenter.platform.stack import load_stack_config
from eks_karpenter.tools.cli import COMMANDS, main
from eks_karpenter.tools.engine.runner import read_flat_config

from tests.support import REPO, STACKS

DEV = (REPO / "stacks" / "Pulumi.dev.yaml").read_text()


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_version_prints_the_librarys_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0 and capsys.readouterr().out == f"eks-karpenter {__version__}\n"


def test_the_top_level_help_lists_every_command_with_what_it_does(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    listing = out[out.index("commands:"):]
    for command in COMMANDS:
        match = re.search(rf"^    {re.escape(command)}\s*(\n\s+)?(\S.*)$", listing, re.MULTILINE)
        assert match, f"{command} is not listed with a description:\n{listing}"
    summary = re.sub(r"[|`\s]+", " ", out.split("\n\n")[1])  # the description's first paragraph
    assert all(f" {command} " in summary for command in COMMANDS), summary


def test_a_missing_stack_file_lists_the_stacks_there_are(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "plan", "--stack", "staging")
    assert (code, out) == (1, "")
    assert err.rstrip().endswith(f"Pulumi.staging.yaml: no such stack file (the stacks there: {', '.join(STACKS)})")
    (tmp_path / "Pulumi.yaml").write_text("name: my-platform\nruntime: python\n")
    code, _, err = _run(capsys, "cost", "--stack", "dev", "--program", str(tmp_path))
    assert code == 1 and f"{tmp_path} has no Pulumi.<stack>.yaml files" in err


def _problems(text: str, project: str = "eks-karpenter") -> list[str]:
    path = Path(f"/tmp/first-hour-{project}/Pulumi.dev.yaml")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.replace("eks-karpenter:", f"{project}:"))
    try:
        with pytest.raises(ConfigError) as err:
            load_stack_config(read_flat_config(path, project), "stacks/Pulumi.dev.yaml", project=project)
    finally:
        shutil.rmtree(path.parent)
    return str(err.value).splitlines()[1:]


def test_nested_key_typos_get_the_closest_key() -> None:
    problems = _problems(DEV.replace("endpointPublicAccess", "endpointPublicAcess")
                         .replace("      instanceCategories:", "      instanceCategorys:"))
    assert any("eks-karpenter:cluster.endpointPublicAcess: unknown key: did you mean `endpointPublicAccess`?"
               in p for p in problems), problems
    assert any("eks-karpenter:nodePools[0].instanceCategorys: unknown key: did you mean `instanceCategories`?"
               in p for p in problems), problems


def test_a_requirements_typo_inside_a_pool_gets_the_closest_key() -> None:
    text = DEV.replace("      instanceCategories: [c, m, r]\n",
                       "      requirments:\n        - {key: karpenter.k8s.aws/instance-category, operator: In, "
                       "values: [c, m]}\n")
    assert "requirments" in text
    problems = _problems(text)
    assert any("nodePools[0].requirments: unknown key: did you mean `requirements`?" in p for p in problems), \
        problems


def test_instance_type_typos_get_the_closest_type() -> None:
    problems = _problems(DEV.replace("[m5.large, m5a.large", "[m5.larg, m5a.large").replace(
        "m5n.large, m4.large]", "m5n.large, c7dg.xlarge]"))
    assert any("m5 has no size 'larg': did you mean `m5.large`?" in p for p in problems), problems
    assert any("no EC2 instance type has this name: did you mean `c7g.xlarge`?" in p for p in problems), problems


def test_messages_name_keys_in_the_projects_own_namespace() -> None:
    text = DEV.replace("endpointPublicAccess", "endpointPublicAcess")
    problems = _problems(text, "my-platform")
    assert problems and all("eks-karpenter:" not in p for p in problems), problems
    assert any("my-platform:cluster.endpointPublicAcess: unknown key" in p for p in problems)


def test_no_message_names_this_repositorys_wrapper_command() -> None:
    """`python -m infra` exists in this repository only: a consumer runs `eks-karpenter`, and commands name
    themselves by the program name they were run as."""
    import ast

    found = []
    for path in sorted((REPO / "components" / "eks_karpenter").rglob("*.py")):
        tree = ast.parse(path.read_text())
        # docstrings, of modules, classes, functions and attributes: a string standing alone as a statement
        docstrings = {id(node.value) for node in ast.walk(tree)
                      if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)}
        found += [f"{path.relative_to(REPO)}:{node.lineno}" for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and isinstance(node.value, str)
                  and "python -m infra" in node.value and id(node) not in docstrings]
    assert found == []


def test_no_command_prints_the_usage_and_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys)
    assert (code, out) == (1, "")
    assert err.startswith("usage: eks-karpenter [-h] [--version] COMMAND ...")
    listing = err[err.index("commands:"):]
    assert all(re.search(rf"^    {re.escape(command)}\b", listing, re.MULTILINE) for command in COMMANDS), listing
    assert err.splitlines()[-1] == ("error: eks-karpenter: no command given: run `eks-karpenter COMMAND` "
                                    "(`eks-karpenter COMMAND --help` for its options)")


def test_a_misspelt_option_is_named_with_the_closest_one(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(capsys, "plan", "--stak", "dev") == (
        1, "", "error: eks-karpenter plan: unknown option --stak: did you mean `--stack`?\n")
    assert _run(capsys, "plan", "--stack", "dev", "--fromat", "json") == (
        1, "", "error: eks-karpenter plan: unknown option --fromat: did you mean `--format`?\n")
    # a prefix argparse accepts is not called unknown: the error is the real one
    code, _, err = _run(capsys, "plan", "--stack", "dev", "--form", "yaml")
    assert code == 1 and "unknown option" not in err and "invalid choice: 'yaml'" in err
