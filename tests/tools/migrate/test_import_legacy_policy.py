"""`import-legacy` holds what it writes to the shipped CrossGuard pack: it says which rule a converted NodePool or
EC2NodeClass trips, naming the policy, or that they pass; its header and keys name the command and namespace the
user has."""

from __future__ import annotations

from pathlib import Path

import pytest
from eks_karpenter.tools.cli import main
from eks_karpenter.tools.migrate import convert_documents, parse_documents
from eks_karpenter.tools.migrate.policy import pack_findings, rendered_objects

from tests.support import REPO

FIXTURES = REPO / "tests" / "fixtures" / "legacy"
WORKSHOP = FIXTURES / "workshop-default.yaml"


def _run(capsys: pytest.CaptureFixture[str], *argv: str, prog: str = "eks-karpenter") -> tuple[int, str, str]:
    code = main(list(argv), prog=prog)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_each_legacy_fixture_passes_the_pack_or_names_the_rule_it_trips() -> None:
    # The workshop Provisioner sets limits but no ttlSecondsUntilExpired (v1alpha5: nodes never expired).
    conversion = convert_documents(parse_documents("w.yaml", WORKSHOP.read_text()), "1.32")
    assert pack_findings(rendered_objects(conversion, None)) == [
        "NodePool default trips nodepool-limits-and-expiry: spec.template.spec.expireAfter is Never: nodes would "
        "never be replaced and never pick up new AMIs or configuration"]
    # The CAS-era Provisioners set neither limits nor expiry: three rules' worth, each named.
    cas = FIXTURES / "cas-era-no-ami-family.yaml"
    findings = pack_findings(rendered_objects(convert_documents(parse_documents("c.yaml", cas.read_text()),
                                                                "1.32"), None))
    assert {f.split(":")[0] for f in findings} == {
        "NodePool web trips nodepool-limits-and-expiry", "NodePool workers trips nodepool-limits-and-expiry",
        "NodePool web trips nodepool-cost-ceiling", "NodePool workers trips nodepool-cost-ceiling"}
    assert any("spec.limits is not set" in f for f in findings)


def test_a_provisioner_with_limits_and_an_expiry_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    legacy = tmp_path / "legacy.yaml"
    legacy.write_text(WORKSHOP.read_text().replace("  ttlSecondsAfterEmpty: 30\n",
                                                   "  ttlSecondsAfterEmpty: 30\n  ttlSecondsUntilExpired: 2592000\n"))
    code, out, err = _run(capsys, "import-legacy", "--kubernetes-version", "1.32", str(legacy))
    assert code == 0 and "expireAfter: 2592000s" in out
    assert "warning: policy pack" not in err
    assert "note: the converted NodePools and EC2NodeClasses pass the policy pack's rules for them" in err
    # v1 manifests are held to the same rules (they are what `pulumi up` would apply, role and all)
    code, out, err = _run(capsys, "import-legacy", "--kubernetes-version", "1.32", "--format", "manifests",
                          "--node-role", "KarpenterNodeRole-demo", str(legacy))
    assert code == 0 and "kind: NodePool" in out and "warning: policy pack" not in err


def test_the_command_warns_naming_the_policy(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "import-legacy", "--kubernetes-version", "1.32", str(WORKSHOP))
    assert code == 0 and out
    assert ("warning: policy pack: NodePool default trips nodepool-limits-and-expiry: "
            "spec.template.spec.expireAfter is Never") in err


def test_a_consumer_project_gets_its_own_command_and_namespace(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: my-platform\nruntime: python\n")
    code, out, err = _run(capsys, "import-legacy", "--program", str(tmp_path), "--kubernetes-version", "1.32",
                          str(WORKSHOP))
    assert code == 0
    assert out.startswith(f"# Converted by `eks-karpenter import-legacy` from: {WORKSHOP}\n")
    assert "my-platform:nodePools:" in out and "eks-karpenter:" not in out
    assert "my-platform:interruption" in err and "eks-karpenter:" not in err
    code, out, err = _run(capsys, "import-legacy", "--program", str(tmp_path), str(FIXTURES / "bad-mixed.yaml"))
    assert code == 1 and "eks-karpenter:" not in err
    # this repository's wrapper names itself
    code, out, _ = _run(capsys, "import-legacy", "--kubernetes-version", "1.32", str(WORKSHOP),
                        prog="python -m infra")
    assert out.startswith("# Converted by `python -m infra import-legacy`")


def test_the_snippet_says_where_to_paste_it_for_the_project_it_runs_in(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: my-platform\nruntime: python\n")  # a template project: root
    code, out, _ = _run(capsys, "import-legacy", "--program", str(tmp_path), "--kubernetes-version", "1.32",
                        str(WORKSHOP))
    assert code == 0 and "\n# Paste these keys under `config:` in Pulumi.<stack>.yaml.\n" in out
    code, out, _ = _run(capsys, "import-legacy", "--stack", "dev", str(WORKSHOP))  # this repository: stacks/
    assert code == 0 and "\n# Paste these keys under `config:` in stacks/Pulumi.dev.yaml.\n" in out


def test_the_snippet_writes_a_null_only_to_switch_off_a_default_and_says_which(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    legacy = tmp_path / "legacy.yaml"
    legacy.write_text(WORKSHOP.read_text().replace(
        "  requirements:\n", "  requirements:\n    - key: node.kubernetes.io/instance-type\n      operator: In\n"
        "      values: [m5.large, t3.large]\n", 1))
    assert "instance-type" in legacy.read_text()
    code, out, _ = _run(capsys, "import-legacy", "--kubernetes-version", "1.32", str(legacy))
    assert code == 0
    # The instance types pin the choice: the library leaves its category and generation defaults out itself.
    assert "instanceCategories" not in out and "minGeneration" not in out
    nulls = [line for line in out.splitlines() if ": null" in line]
    assert nulls == ["    terminationGracePeriod: null  # v1alpha5 had no drain deadline: switches off the "
                     "library's default (48h)"]


def test_without_pulumi_policy_one_line_says_the_check_is_optional_and_how_to_run_it(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import sys

    monkeypatch.delitem(sys.modules, "guardrails", raising=False)
    monkeypatch.setitem(sys.modules, "pulumi_policy", None)  # as in a template's venv: not installed
    code, out, err = _run(capsys, "import-legacy", "--kubernetes-version", "1.32", str(WORKSHOP))
    assert code == 0 and out
    [line] = [line for line in err.splitlines() if "policy pack" in line]
    assert line == ("note: not checked against the policy pack here (optional: pulumi_policy is not installed; "
                    "`pip install pulumi-policy` checks them here, or run `pulumi preview --policy-pack DIR` on the "
                    "stack once pasted; `eks-karpenter policy-pack --out DIR` writes the pack)")


def test_a_selector_for_another_clusters_discovery_tag_is_flagged_for_the_stack(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "import-legacy", "--stack", "dev", str(WORKSHOP))
    assert code == 0 and "karpenter.sh/discovery: workshop-cluster" in out  # flagged, not rewritten
    flagged = [line for line in err.splitlines() if line.startswith("warning: the converted")]
    assert flagged == [
        f"warning: the converted eks-karpenter:nodeClasses[0].{key} (class default) selects karpenter.sh/discovery: "
        f"workshop-cluster, but this stack tags its {what} karpenter.sh/discovery: dev-karpenter: Karpenter would "
        f"find none and launch no node; select dev-karpenter, or leave {key} out for the stack's own"
        for key, what in (("subnetSelectorTerms", "subnets"), ("securityGroupSelectorTerms", "security group"))]
    # without --stack there is no cluster name to hold it to
    code, _, err = _run(capsys, "import-legacy", "--kubernetes-version", "1.32", str(WORKSHOP))
    assert code == 0 and "warning: the converted" not in err
