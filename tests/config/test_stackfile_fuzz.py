"""Fuzz: mutated copies of the committed stack files either plan or give the one clean error, never a traceback.

Deterministic (seeded): each case deletes, duplicates, retypes or renames a key, swaps a scalar for a list, a
mapping, a date, null, an empty string, unicode or a huge number, or damages the text itself (truncation, a
duplicated or deleted line, a stray character). A case that validates is planned in full, so a value that gets
through validation but breaks the wiring is caught too.
"""

from __future__ import annotations

import copy
import datetime
import random
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml
from eks_karpenter import ConfigError
from eks_karpenter.config.stackfile import parse_stack_text
from eks_karpenter.platform.stack import load_stack_config
from eks_karpenter.tools.engine import run_plan

from tests.support import REPO, STACKS, plan_config

CASES = 300
SOURCE = "stacks/Pulumi.bad.yaml"
LINE = re.compile(rf"^{re.escape(SOURCE)}:\d+: ")
# A key path: no spaces, except inside a quoted part (a key that holds whitespace).
KEYED = re.compile(rf"^{re.escape(SOURCE)}(:\d+)?: ([^ \[]|\[[0-9]+\]|\[\"[^\"]*\"\])+: ")
FILE_LEVEL = ("not valid YAML", "a stack file is a mapping", "more than")

ODD_VALUES: list[Any] = [
    [], {}, [1, 2], {"a": 1}, None, "", "ünïcödé ✓", datetime.date(2026, 1, 31), 10**30, -(10**20), -1, 0, 1.5,
    float("inf"), True, "yes", "on", "1:30", "0o17", "x" * 300, {"secure": "AAABAQ=="}, [[["deep"]]], " ", "null",
    {"": "empty key"}, "\u202e\u200b",
]
# Plain YAML tokens written into the text as they would be typed (yaml.safe_dump would quote most of them).
RAW_VALUES = ["on", "yes", "off", "2026-01-31", "2026-01-31T10:00:00Z", "1:30", "0777", "08", "0o17", "0x1F",
              "1e999", "~", ".inf", "-.nan", "1_000", "!!binary aGk=", "!Ref x", "&a x", "*a", "!!set {a}", "[]", "{}",
              "18446744073709551616", "true", "TRUE", "Null", "'quoted'", '"\\u0000"', "|\n    block", "? x"]
STRAY = [":", "-", "[", "{", "}", "&", "*", "!", "'", '"', "#", "\t", "%", "@", "`", "|", ">", "é", "\x00", "\x1b"]


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if path:
        yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, path + (key,))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _paths(item, path + (i,))


def _parent(cfg: dict[str, Any], path: tuple[Any, ...]) -> Any:
    target: Any = cfg
    for part in path[:-1]:
        target = target[part]
    return target


def _rename(key: str, rng: random.Random) -> str:
    if ":" in key and rng.random() < 0.5:
        namespace, _, name = key.partition(":")
        return rng.choice([name, f"karpenter:{name}", f"aws:{name}", f"{namespace}:{name}s", f"kubernetes:{name}"])
    i = rng.randrange(len(key) + 1)
    return key[:i] + rng.choice("aesx_-") + key[i + 1:]


def _mutate_config(cfg: dict[str, Any], rng: random.Random) -> str:
    paths = list(_paths(cfg))
    path = rng.choice(paths)
    parent, last = _parent(cfg, path), path[-1]
    op = rng.choice(["delete", "retype", "retype", "retype", "rename", "duplicate", "wrap"])
    if op == "delete":
        del parent[last]
    elif op == "retype":
        parent[last] = copy.deepcopy(rng.choice(ODD_VALUES))
    elif op == "rename" and isinstance(last, str):
        parent[_rename(last, rng)] = parent.pop(last)
    elif op == "duplicate" and isinstance(parent, list):
        parent.append(copy.deepcopy(parent[last]))
    else:
        parent[last] = [parent[last]]
    return f"{op} {path}"


def _mutate_text(text: str, rng: random.Random) -> tuple[str, str]:
    lines = text.splitlines(keepends=True)
    op = rng.choice(["truncate", "duplicate-line", "delete-line", "stray", "raw-value", "raw-value"])
    i = rng.randrange(len(lines))
    if op == "raw-value":
        keyed = [k for k, line in enumerate(lines) if re.match(r"^\s*-?\s*[\w./:-]+: \S", line)]
        k = rng.choice(keyed)
        key = lines[k].split(": ", 1)[0]
        token = rng.choice(RAW_VALUES)
        lines[k] = f"{key}: {token}\n"
        return "".join(lines), f"line {k + 1} set to {token!r}"
    if op == "truncate":
        cut = rng.randrange(len(text))
        return text[:cut], f"truncate at {cut}"
    if op == "duplicate-line":
        return "".join(lines[:i + 1] + lines[i:]), f"duplicate line {i + 1}"
    if op == "delete-line":
        return "".join(lines[:i] + lines[i + 1:]), f"delete line {i + 1}"
    pos = rng.randrange(len(text))
    return text[:pos] + rng.choice(STRAY) + text[pos:], f"stray character at {pos}"


def _cases() -> list[tuple[str, str]]:
    rng = random.Random(11)
    bases = {s: (REPO / "stacks" / f"Pulumi.{s}.yaml").read_text() for s in STACKS}
    out = []
    for n in range(CASES):
        stack = rng.choice(sorted(bases))
        if rng.random() < 0.3:
            text, what = _mutate_text(bases[stack], rng)
        else:
            body = yaml.safe_load(bases[stack])
            what = "; ".join(_mutate_config(body["config"], rng) for _ in range(rng.choice([1, 1, 2, 3])))
            text = yaml.safe_dump(body, allow_unicode=True, sort_keys=False)
        out.append((f"{n}-{stack}: {what}", text))
    return out


CASE_TEXTS = _cases()


def assert_clean(error: BaseException, what: str, text: str) -> None:
    assert isinstance(error, ConfigError), f"{what}: {type(error).__name__}: {error}"
    lines = str(error).splitlines()
    assert re.fullmatch(r"invalid stack config, \d+ problems?:", lines[0]), what
    has_config = re.search(r"^config:", text, re.MULTILINE) is not None
    for line in lines[1:]:
        # Only a file without a `config:` block has no line to point a missing key at.
        assert LINE.match(line) or (not has_config and "(got nothing)" in line), f"{what}: no line in {line!r}"
        assert KEYED.match(line) or any(f in line for f in FILE_LEVEL), f"{what}: no key in {line!r}"
        assert "could not be validated" not in line, f"{what}: {line}"


@pytest.mark.slow
def test_fuzzed_stack_files_never_crash(tmp_path: Path) -> None:
    plan_config({}, tmp_path)  # the scratch project
    stack_file = tmp_path / "stacks" / "Pulumi.bad.yaml"
    outcomes = {"refused": 0, "valid": 0}
    for what, text in CASE_TEXTS:
        file = parse_stack_text(text, SOURCE, "eks-karpenter")
        try:
            if file.issues:
                raise file.error()
            load_stack_config(file.flat(), SOURCE, lines=file.lines)
        except Exception as exc:
            assert_clean(exc, what, text)
            outcomes["refused"] += 1
            continue
        # Valid: the whole program must plan it (the wiring gets values validation let through). A plan takes
        # most of a second, so every third valid case is planned.
        if outcomes["valid"] % 3 == 0:
            stack_file.write_text(text, encoding="utf-8")
            result = run_plan(tmp_path, "bad")
            assert result.error is None, f"{what}: {type(result.error).__name__}: {result.error}"
        outcomes["valid"] += 1
    # The mutations must exercise both outcomes, mostly refusals.
    assert outcomes["refused"] > CASES // 2 and outcomes["valid"] > 30, outcomes


@pytest.mark.slow
def test_fuzzed_refusals_through_the_program_register_nothing(tmp_path: Path) -> None:
    plan_config({}, tmp_path)
    stack_file = tmp_path / "stacks" / "Pulumi.bad.yaml"
    refused = [(w, t) for w, t in CASE_TEXTS if _refused(t)][:25]
    for what, text in refused:
        stack_file.write_text(text, encoding="utf-8")
        result = run_plan(tmp_path, "bad")
        assert result.error is not None, what
        assert_clean(result.error, what, text)
        assert result.document.resources == [], what


def _refused(text: str) -> bool:
    file = parse_stack_text(text, SOURCE, "eks-karpenter")
    if file.issues:
        return True
    try:
        load_stack_config(file.flat(), SOURCE, lines=file.lines)
    except ConfigError:
        return True
    return False


@pytest.mark.slow
@pytest.mark.parametrize("index", [0, 1])
def test_fuzzed_files_through_the_cli(tmp_path: Path, index: int) -> None:
    plan_config({}, tmp_path)
    # A text-damaged case and a config-mutation case, picked deterministically.
    picks = [c for c in CASE_TEXTS if _refused(c[1]) and (("line" in c[0] or "stray" in c[0]) == (index == 0))]
    what, text = picks[3]
    (tmp_path / "stacks" / "Pulumi.bad.yaml").write_text(text, encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "infra", "plan", "--stack", "bad", "--program", str(tmp_path)],
                          cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 1, what
    assert proc.stdout == "", what
    assert "Traceback" not in proc.stderr, what
    assert proc.stderr.startswith("error: invalid stack config"), (what, proc.stderr)


# --- the `pulumi up` path: the runtime hands the program its config; infra/settings.py reads the file for lines ---

def _as_pulumi_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flat: dict[str, str]) -> BaseException | None:
    from eks_karpenter.platform import stack as settings
    from eks_karpenter.tools.engine.mocks import PlanMocks

    monkeypatch.chdir(tmp_path)
    pulumi.runtime.set_mocks(PlanMocks(region="us-east-1"), project="eks-karpenter", stack="bad", preview=False)
    pulumi.runtime.set_all_config(flat)
    try:
        settings.read_stack_config()
    except Exception as exc:
        return exc
    return None


@pytest.mark.slow
def test_pulumi_up_path_names_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plan_config({}, tmp_path)
    picks = [c for c in CASE_TEXTS if _refused(c[1]) and not parse_stack_text(c[1], SOURCE, "eks-karpenter").issues]
    assert len(picks) > 20
    for what, text in picks[:20]:
        (tmp_path / "stacks" / "Pulumi.bad.yaml").write_text(text, encoding="utf-8")
        flat = parse_stack_text(text, SOURCE, "eks-karpenter").flat()
        error = _as_pulumi_up(tmp_path, monkeypatch, flat)
        assert error is not None, what
        assert_clean(error, what, text)


def test_pulumi_up_path_without_the_file_names_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    error = _as_pulumi_up(tmp_path, monkeypatch, {"aws:region": "eu-west-1", "karpenter:nodePools": "[]"})
    assert isinstance(error, ConfigError)
    lines = str(error).splitlines()[1:]
    assert "stacks/Pulumi.bad.yaml: karpenter:nodePools: key is read by nothing: did you mean " \
           "`eks-karpenter:nodePools`?" in "\n".join(lines)
    assert all(line.startswith("stacks/Pulumi.bad.yaml: ") for line in lines)


def test_pulumi_up_path_refuses_what_the_cli_would(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plan_config({}, tmp_path)
    (tmp_path / "stacks" / "Pulumi.bad.yaml").write_text("config:\n  aws:region: eu-west-1\n  aws:region: x\n")
    error = _as_pulumi_up(tmp_path, monkeypatch, {"aws:region": "x"})
    assert isinstance(error, ConfigError)
    assert "stacks/Pulumi.bad.yaml:3: aws:region: duplicate key 'aws:region': also defined at line 2" in str(error)
