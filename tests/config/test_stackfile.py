"""The stack-file reader: YAML read as Pulumi's Go yaml.v3 reads it, with the line of every value."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
import yaml
from eks_karpenter import ConfigError
from eks_karpenter.config.stackfile import (
    SECRET,
    parse_stack_text,
    provider_config_keys,
    read_stack_file,
    resolve_plain,
)

from tests.support import REPO, STACKS, plan_config, stack_config

P = "eks-karpenter"


def parse(text: str) -> dict[str, object]:
    file = parse_stack_text(text, "stacks/Pulumi.t.yaml", P)
    assert not file.issues, file.issues
    return file.config


@pytest.mark.parametrize(("text", "value"), [
    # yaml.v3 resolves only these spellings as booleans; YAML 1.1's on/off/yes/no stay strings.
    ("true", True), ("True", True), ("FALSE", False), ("on", "on"), ("yes", "yes"), ("No", "No"), ("off", "off"),
    ("y", "y"),
    ("~", None), ("null", None), ("", None), ("Null", None), ("nil", "nil"),
    # Dates and times are strings when decoded into an untyped value; no sexagesimal numbers.
    ("2026-01-31", "2026-01-31"), ("2026-01-31T10:00:00Z", "2026-01-31T10:00:00Z"), ("1:30", "1:30"),
    ("190:20:30", "190:20:30"),
    # Go integer syntax (strconv.ParseInt base 0, underscores removed first).
    ("42", 42), ("-7", -7), ("+3", 3), ("0x1F", 31), ("0o17", 15), ("0b101", 5), ("017", 15), ("1_000", 1000),
    ("0", 0), ("08", 8.0), (str(2**63 - 1), 2**63 - 1), (str(2**64 - 1), 2**64 - 1),
    ("18446744073709551616", 18446744073709551616.0), ("-9223372036854775809", -9223372036854775809.0),
    # Floats; an overflowing one stays a string (Go's ParseFloat fails on it).
    ("1.5", 1.5), (".5", 0.5), ("1e3", 1000.0), ("1e999", "1e999"), ("1.", 1.0), (".", "."),
    ("1.2.3", "1.2.3"), ("0x", "0x"), ("12abc", "12abc"), ("1_5m", "1_5m"), ("500m", "500m"), ("10Gi", "10Gi"),
])
def test_plain_scalars_resolve_as_yaml_v3(text: str, value: object) -> None:
    got = resolve_plain(text)
    assert got == value and type(got) is type(value)


def test_special_floats() -> None:
    assert math.isnan(resolve_plain(".nan")) and resolve_plain("-.Inf") == -math.inf


def test_quoted_and_tagged_scalars() -> None:
    cfg = parse('config:\n  a: "1"\n  b: \'true\'\n  c: !!str 2026-01-31\n  d: !!int "12"\n  e: !!float 3\n'
                "  f: !!bool true\n  g: ! 12\n")
    assert cfg == {f"{P}:a": "1", f"{P}:b": "true", f"{P}:c": "2026-01-31", f"{P}:d": 12, f"{P}:e": 3.0,
                   f"{P}:f": True, f"{P}:g": 12}  # `!` on a plain scalar: resolved (yaml.v3)


def test_unsupported_tags_are_refused_with_their_line() -> None:
    file = parse_stack_text("config:\n  a: 1\n  b: !!binary aGk=\n  c: !Ref x\n  d: !!set {x}\n", "f.yaml", P)
    err = str(file.error())
    assert "f.yaml:3: eks-karpenter:b: unsupported YAML tag tag:yaml.org,2002:binary" in err
    assert "f.yaml:4: eks-karpenter:c: unsupported YAML tag !Ref" in err
    assert "f.yaml:5: eks-karpenter:d: unsupported YAML tag" in err


def test_duplicate_keys_name_both_lines() -> None:
    text = ("config:\n"                        # 1
            "  aws:region: eu-west-1\n"        # 2
            "  eks-karpenter:nodePools:\n"     # 3
            "    - name: a\n"                  # 4
            "      limits: {cpu: 1, cpu: 2}\n"  # 5
            "  eks-karpenter:nodePools:\n"     # 6
            "    - name: b\n")                 # 7
    file = parse_stack_text(text, "stacks/Pulumi.t.yaml", P)
    err = str(file.error())
    assert ("stacks/Pulumi.t.yaml:6: eks-karpenter:nodePools: duplicate key 'eks-karpenter:nodePools': also "
            "defined at line 3") in err
    assert "stacks/Pulumi.t.yaml:5: eks-karpenter:nodePools[0].limits.cpu: duplicate key 'cpu': also defined at " \
           "line 5" in err


def test_the_same_key_spelt_two_ways_is_a_duplicate() -> None:
    file = parse_stack_text("config:\n  tags: {a: b}\n  eks-karpenter:tags: {c: d}\n", "f.yaml", P)
    assert ("f.yaml:3: eks-karpenter:tags: duplicate key: 'eks-karpenter:tags' is the same key as 'tags' at line 2"
            in str(file.error()))


def test_every_value_keeps_its_line() -> None:
    file = parse_stack_text((REPO / "stacks" / "Pulumi.prod.yaml").read_text(), "stacks/Pulumi.prod.yaml", P)
    text = (REPO / "stacks" / "Pulumi.prod.yaml").read_text().splitlines()
    assert "arm64" in text[file.lines[(f"{P}:nodePools", 2)] - 1]
    assert "limits" in text[file.lines[(f"{P}:nodePools", 1, "limits")] - 1]
    assert "aws:region" in text[file.lines[("aws:region",)] - 1]


def test_secure_values_are_placeholders_at_any_depth() -> None:
    cfg = parse("config:\n  aws:secretKey: {secure: AAAB}\n  eks-karpenter:x: {token: {secure: AAAC}}\n")
    assert cfg == {"aws:secretKey": SECRET, f"{P}:x": {"token": SECRET}}


def test_anchors_aliases_and_merge_keys_work_as_in_yaml_v3() -> None:
    cfg = parse("config:\n  eks-karpenter:tags: &t {a: b, c: d}\n  eks-karpenter:x:\n    <<: *t\n    c: e\n"
                "  eks-karpenter:y: *t\n")
    assert cfg[f"{P}:x"] == {"a": "b", "c": "e"} and cfg[f"{P}:y"] == {"a": "b", "c": "d"}


def test_alias_bombs_and_recursion_are_clean_errors() -> None:
    bomb = "a: &a [x,x,x,x,x,x,x,x,x,x]\n" + "".join(
        f"{c}: &{c} [{','.join([f'*{p}'] * 10)}]\n" for p, c in zip("abcdef", "bcdefg", strict=True))
    assert "aliases" in str(parse_stack_text(bomb, "f.yaml", P).error())
    assert "recursive" in str(parse_stack_text("config:\n  x: &a [*a]\n", "f.yaml", P).error())


@pytest.mark.parametrize(("text", "fragment"), [
    ("config: [1, 2]\n", "f.yaml:1: config: `config:` must be a mapping"),
    ("- 1\n", "f.yaml: a stack file is a mapping"),
    ("confg:\n  aws:region: x\n", "f.yaml:1: confg: unknown stack file key: did you mean `config`?"),
    ("config:\n  a: [1\n", "f.yaml:3: not valid YAML"),
    ("config:\n  a: 1\n---\nb: 2\n", "not valid YAML: expected a single document"),
    ("config:\n  a:b:c: 1\n", "f.yaml:2: a:b:c: not a config key"),
    ("config:\n  ? [1]\n  : 2\n", "keys must be strings"),
    ("config:\n  eks-karpenter:tags: {1: x}\n", "f.yaml:2: eks-karpenter:tags.1: keys must be strings"),
    ("config:\n  a: \x00\n", "not valid YAML"),
    ("config:\n\ta: 1\n", "not valid YAML"),
])
def test_malformed_files_are_one_clean_error(text: str, fragment: str) -> None:
    file = parse_stack_text(text, "f.yaml", P)
    assert file.issues
    assert fragment in str(file.error())


def test_legacy_config_key_spelling() -> None:
    assert parse("config:\n  aws:config:region: eu-west-1\n") == {"aws:region": "eu-west-1"}


def test_empty_files_have_no_config() -> None:
    assert parse("") == {} and parse("config:\n") == {} and parse("# nothing\n") == {}


def test_binary_and_huge_files(tmp_path: Path) -> None:
    binary = tmp_path / "b.yaml"
    binary.write_bytes(b"config:\n  a: \xff\xfe\n")
    assert "not UTF-8" in str(read_stack_file(binary, "b.yaml", P).error())
    huge = tmp_path / "h.yaml"
    huge.write_text("config:\n" + "  # padding\n" * 1_000_000)
    assert "MiB" in str(read_stack_file(huge, "h.yaml", P).error())
    assert "cannot read" in str(read_stack_file(tmp_path / "missing.yaml", "m.yaml", P).error())


def test_a_rewritten_file_is_read_again(tmp_path: Path) -> None:
    # Same size, same instant: only the content differs.
    path = tmp_path / "s.yaml"
    path.write_text("config:\n  a: 1\n")
    assert read_stack_file(path, "s", P).config == {f"{P}:a": 1}
    path.write_text("config:\n  a: 2\n")
    assert read_stack_file(path, "s", P).config == {f"{P}:a": 2}


@pytest.mark.parametrize("stack", STACKS)
def test_committed_stacks_read_as_pyyaml_reads_them(stack: str) -> None:
    # The committed files use no YAML 1.1-only scalars, so both readers agree on them.
    file = read_stack_file(REPO / "stacks" / f"Pulumi.{stack}.yaml", "s", P)
    assert not file.issues
    assert file.config == stack_config(stack)


def test_uses_the_c_loader_when_available() -> None:
    from eks_karpenter.config import stackfile

    assert issubclass(stackfile._Loader, yaml.CSafeLoader) == yaml.__with_libyaml__


def test_aws_keys_come_from_the_provider_sdk() -> None:
    keys = provider_config_keys("pulumi_aws")
    assert {"region", "profile", "allowedAccountIds", "defaultTags", "assumeRoles"} <= keys
    assert provider_config_keys("no_such_package_here") == frozenset()


# --- through the whole program ---------------------------------------------------------------------------------

def write_stack(tmp_path: Path, text: str, stack: str = "bad") -> None:
    plan_config({}, tmp_path, stack)  # writes the scratch project
    (tmp_path / "stacks" / f"Pulumi.{stack}.yaml").write_text(text)


def dev_text() -> str:
    return (REPO / "stacks" / "Pulumi.dev.yaml").read_text()


def test_duplicate_pool_block_in_a_real_stack_is_refused(tmp_path: Path) -> None:
    text = dev_text() + "  eks-karpenter:nodePools:\n    - name: other\n"
    first = dev_text().splitlines().index("  eks-karpenter:nodePools:") + 1
    write_stack(tmp_path, text)
    from eks_karpenter.tools.engine import run_plan

    result = run_plan(tmp_path, "bad")
    assert isinstance(result.error, ConfigError) and result.document.resources == []
    assert f"also defined at line {first}" in str(result.error)
    assert f"stacks/Pulumi.bad.yaml:{len(text.splitlines()) - 1}: eks-karpenter:nodePools: duplicate" in \
        str(result.error)


def test_a_pool_listed_twice_is_refused_at_the_second_entry(tmp_path: Path) -> None:
    from eks_karpenter.tools.engine import run_plan

    text = dev_text() + "    - name: general\n      nodeClass: default\n"
    write_stack(tmp_path, text)
    result = run_plan(tmp_path, "bad")
    assert isinstance(result.error, ConfigError) and result.document.resources == []
    line = len(text.splitlines()) - 1
    assert f"stacks/Pulumi.bad.yaml:{line}: eks-karpenter:nodePools[1].name: node pool names must be unique" in \
        str(result.error)


def test_dates_and_yes_are_strings_where_strings_are_expected(tmp_path: Path) -> None:
    from eks_karpenter.tools.engine import run_plan

    text = dev_text().replace("    cost-center: platform\n",
                              "    cost-center: platform\n    expires: 2026-01-31\n    backup: yes\n    on: off\n")
    write_stack(tmp_path, text)
    result = run_plan(tmp_path, "bad")
    assert result.error is None, result.error
    vpc = next(r for r in result.document.resources if r.type == "aws:ec2/vpc:Vpc")
    assert {"expires": "2026-01-31", "backup": "yes", "on": "off"}.items() <= vpc.inputs["tags"].items()


def test_unquoted_numbers_where_strings_are_expected_say_to_quote(tmp_path: Path) -> None:
    from eks_karpenter.tools.engine import run_plan

    # Whatever minor dev pins (the versions calendar moves it), written unquoted as 1.30.
    text, replaced = re.subn(r'(?m)^    version: "1\.\d+"$', "    version: 1.30", dev_text())
    assert replaced == 1
    text = text.replace("environment: dev", "environment: 0777")
    write_stack(tmp_path, text)
    result = run_plan(tmp_path, "bad")
    message = str(result.error)
    assert isinstance(result.error, ConfigError), message
    assert "eks-karpenter:cluster.version: Input should be a valid string; YAML read this value as a number: " \
           "quote it to keep it as written (got 1.3)" in message
    assert "eks-karpenter:tags.environment: Input should be a valid string; YAML read this value as a number" \
           in message and "(got 511)" in message


def test_wrong_namespace_is_refused_with_the_right_key(tmp_path: Path) -> None:
    from eks_karpenter.tools.engine import run_plan

    text = dev_text().replace("  eks-karpenter:nodePools:", "  karpenter:nodePools:")
    write_stack(tmp_path, text)
    result = run_plan(tmp_path, "bad")
    assert isinstance(result.error, ConfigError) and result.document.resources == []
    line = text.splitlines().index("  karpenter:nodePools:") + 1
    assert (f"stacks/Pulumi.bad.yaml:{line}: karpenter:nodePools: key is read by nothing: did you mean "
            "`eks-karpenter:nodePools`?") in str(result.error)


@pytest.mark.slow
@pytest.mark.parametrize(("key", "fragment"), [
    ("aws:regoin", "the AWS provider has no such config key: did you mean `aws:region`?"),
    ("aws:profile", None),
    ("pulumi:disable-default-providers", None),
    ("kubernetes:kubeconfig", "key is read by nothing"),
    ("eks:version", "pulumi-eks has no provider configuration"),
    ("eks-karpenter:nodepools", "unknown key: did you mean `eks-karpenter:nodePools`?"),
    ("nodepool", "unknown key: did you mean `eks-karpenter:nodePools`?"),
    # Another provider's or the user's own namespace: theirs to read, never refused.
    ("myplatform:slackChannel", None),
    ("datadog:apiKey", None),
    ("random:seed", None),
    # Near misses of this project's namespace: typos whose keys nothing would read.
    ("eks_karpenter:nodePools", "key is read by nothing: did you mean `eks-karpenter:nodePools`?"),
    ("eks-karpentr:tags", "key is read by nothing: did you mean `eks-karpenter:tags`?"),
    ("EKS-Karpenter:protect", "did you mean `eks-karpenter:protect`?"),
    ("karpenter:nodeClasses", "this project's config namespace is `eks-karpenter:`"),
])
def test_namespaces(tmp_path: Path, key: str, fragment: str | None) -> None:
    cfg = stack_config("dev")
    cfg[key] = "x"
    result = plan_config(cfg, tmp_path)
    if fragment is None:
        assert result.error is None, result.error
    else:
        assert isinstance(result.error, ConfigError)
        assert fragment in str(result.error)


def test_a_foreign_namespace_reaches_the_program(tmp_path: Path) -> None:
    """The program reads its own keys beside the platform's: a program that builds the platform and exports
    `myplatform:slackChannel` plans, and the value is there."""
    (tmp_path / "stacks").mkdir()
    (tmp_path / "__main__.py").write_text(
        "import pulumi\n"
        "from eks_karpenter import build_platform, read_stack_config\n"
        "build_platform(read_stack_config())\n"
        "pulumi.export('slack', pulumi.Config('myplatform').require('slackChannel'))\n")
    (tmp_path / "Pulumi.yaml").write_text("name: eks-karpenter\nruntime: python\nstackConfigDir: stacks\n")
    cfg = {**stack_config("dev"), "myplatform:slackChannel": "#platform", "datadog:apiKey": {"secure": "AAAB"}}
    (tmp_path / "stacks" / "Pulumi.dev.yaml").write_text(yaml.safe_dump({"config": cfg}))
    from eks_karpenter.tools.engine import run_plan

    result = run_plan(tmp_path, "dev")
    assert result.error is None, result.error
    assert result.document.outputs["slack"] == "#platform"


@pytest.mark.parametrize(("key", "fragment"), [
    ("eks-karpenter:nodePools", "did you mean `myplatform:nodePools`? (this project's config namespace is "
                                "`myplatform:`, and nothing reads `eks-karpenter:`)"),
    ("myplatfrom:tags", "did you mean `myplatform:tags`?"),
    ("myplatform:nodepools", "unknown key: did you mean `myplatform:nodePools`?"),
])
def test_a_project_of_another_name_uses_its_own_namespace(tmp_path: Path, key: str, fragment: str) -> None:
    from eks_karpenter.tools.engine import run_plan

    cfg = {k.replace("eks-karpenter:", "myplatform:"): v for k, v in stack_config("dev").items()}
    cfg[key] = [] if key.endswith(("nodePools", "nodepools")) else {"team": "x"}
    (tmp_path / "stacks").mkdir()
    (tmp_path / "Pulumi.yaml").write_text(yaml.safe_dump({
        "name": "myplatform", "runtime": "python", "stackConfigDir": "stacks",
        "main": str(REPO / "infra" / "program.py")}))
    (tmp_path / "stacks" / "Pulumi.dev.yaml").write_text(yaml.safe_dump({"config": cfg}))
    result = run_plan(tmp_path, "dev")
    assert isinstance(result.error, ConfigError) and result.document.resources == []
    assert fragment in str(result.error)


def test_rule_messages_name_the_projects_namespace(tmp_path: Path) -> None:
    """A rule's message that names another key uses the project's namespace too."""
    from eks_karpenter.tools.engine import run_plan

    cfg = {k.replace("eks-karpenter:", "myplatform:"): v for k, v in stack_config("dev").items()}
    cfg["myplatform:nodePools"][0]["nodeClass"] = "missing"
    (tmp_path / "stacks").mkdir()
    (tmp_path / "Pulumi.yaml").write_text(yaml.safe_dump({
        "name": "myplatform", "runtime": "python", "stackConfigDir": "stacks",
        "main": str(REPO / "infra" / "program.py")}))
    (tmp_path / "stacks" / "Pulumi.dev.yaml").write_text(yaml.safe_dump({"config": cfg}))
    message = str(run_plan(tmp_path, "dev").error)
    assert "no myplatform:nodeClasses entry has this name" in message, message
    assert "eks-karpenter:" not in message
