"""Facts with one home: the well-known label keys (labels.py), `partition_of` (arns.py, beside the partition
table) and the key-path type `KeyPath` (config/errors.py). A second definition, found by name or, for a label
key, by its value, fails here."""

from __future__ import annotations

import ast
from pathlib import Path

from eks_karpenter import labels

from tests.support import REPO

LIBRARY = REPO / "components" / "eks_karpenter"
HOMES = {"partition_of": "arns.py", "KeyPath": "config/errors.py"}
"""Names defined once, and the module that defines them."""


def _label_values() -> dict[str, str]:
    return {value: name for name, value in vars(labels).items() if name.isupper() and isinstance(value, str)}


def second_definitions(root: Path, homes: dict[str, str], label_names: set[str],
                       label_values: dict[str, str], labels_home: str = "labels.py") -> list[str]:
    """Definitions outside their home: a function, class or assignment named like a fact of `homes`, an assignment
    to a label constant's name, or a name bound to a label key's value."""
    found = []
    for path in sorted(root.rglob("*.py")):
        where = path.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.ClassDef):
                defined = {node.name}
                value = None
            elif isinstance(node, ast.Assign | ast.AnnAssign):  # Python 3.11: aliases are plain assignments
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                defined = {t.id for t in targets if isinstance(t, ast.Name)}
                value = node.value
            else:
                continue
            for name in defined:
                if name in homes and where != homes[name]:
                    found.append(f"{where}:{node.lineno}: {name} (its home is {homes[name]})")
                elif name in label_names and where != labels_home:
                    found.append(f"{where}:{node.lineno}: {name} (a label key: import it from {labels_home})")
            if (defined and where != labels_home and isinstance(value, ast.Constant)
                    and value.value in label_values):
                found.append(f"{where}:{node.lineno}: {', '.join(sorted(defined))} = {value.value!r} (that is "
                             f"{labels_home}'s {label_values[value.value]})")
    return found


def test_each_fact_has_one_home() -> None:
    values = _label_values()
    assert len(values) > 20 and "karpenter.sh/nodepool" in values
    assert second_definitions(LIBRARY, HOMES, set(values.values()), values) == []


def test_a_second_definition_is_found(tmp_path: Path) -> None:
    (tmp_path / "labels.py").write_text('ZONE = "topology.kubernetes.io/zone"\n')
    (tmp_path / "arns.py").write_text("def partition_of(region: str) -> str:\n    return 'aws'\n")
    (tmp_path / "ok.py").write_text('from labels import ZONE\nSELECTOR = {ZONE: "a"}\n')
    homes = {"partition_of": "arns.py"}
    label_values = {"topology.kubernetes.io/zone": "ZONE"}
    assert second_definitions(tmp_path, homes, {"ZONE"}, label_values) == []
    (tmp_path / "iam.py").write_text("def partition_of(region: str) -> str:\n    return 'aws-cn'\n")
    (tmp_path / "pools.py").write_text('ZONE_LABEL = "topology.kubernetes.io/zone"\n')
    (tmp_path / "fit.py").write_text('ZONE: str = "zone"\n')
    assert [f.split(":")[0] for f in second_definitions(tmp_path, homes, {"ZONE"}, label_values)] == [
        "fit.py", "iam.py", "pools.py"]
