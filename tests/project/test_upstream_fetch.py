"""scripts/fetch_upstream.py: the pinned lock, verification, the cache layout, and every fetch step except the
HTTP GET itself (a fake transport answers with a registry token, an OCI manifest, chart archives built here from
the upstream files, raw files, a Go price table synthesised here, and PyPI's simple index with a wheel built here).

The package files of the lock (a wheel's member) are held, in these tests, to a lock whose package entry pins a
wheel built here (TEST_LOCK): the real wheel is on PyPI only, and a local copy need not hold its member."""

from __future__ import annotations

import hashlib
import io
import json
import re
import subprocess
import sys
import tarfile
import urllib.error
import urllib.request
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from eks_karpenter import versions

from tests.support import FETCH_UPSTREAM, MISSING_UPSTREAM, REPO, UPSTREAM, fetch_upstream, requires_upstream

fu = fetch_upstream
LOCK: dict[str, Any] = fu.load_lock()
FILES: dict[str, Any] = LOCK["files"]
PACKAGES: dict[str, Any] = LOCK["packages"]
OCI_CHARTS = sorted({entry["oci"] for entry in FILES.values() if "oci" in entry})


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def wheel(members: Mapping[str, bytes]) -> bytes:
    """A wheel (a zip archive) holding `members`, byte-identical each time."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            archive.writestr(zipfile.ZipInfo(name, (2025, 3, 2, 0, 0, 0)), data)
    return buffer.getvalue()


(PRICING,) = PACKAGES
MEMBER = b'{"compute": {"ec2_linux": {"m5.large": {"eu-west-1": 0.114}}}, "updated": 1740936978}'
WHEEL = wheel({PACKAGES[PRICING]["member"]: MEMBER, "libcloud/__init__.py": b""})
TEST_LOCK_DATA = {**LOCK, "packages": {PRICING: {**PACKAGES[PRICING], "sha256": sha(MEMBER),
                                                 "wheelSha256": sha(WHEEL)}}}
TEST_LOCK = Path()
"""Written by the `written_test_lock` fixture: the real lock, its package entry pinning WHEEL."""


@pytest.fixture(autouse=True)
def written_test_lock(tmp_path_factory: pytest.TempPathFactory) -> Path:
    global TEST_LOCK
    TEST_LOCK = tmp_path_factory.getbasetemp() / "upstream.lock.json"
    TEST_LOCK.write_text(json.dumps(TEST_LOCK_DATA, indent=1))
    return TEST_LOCK


class FakePyPI:
    """PyPI's simple index (PEP 691 JSON) of the pinned project, and the wheel it lists."""

    INDEX = f"https://pypi.org/simple/{PACKAGES[PRICING]['pypi']}/"
    FILE = "https://files.pythonhosted.org/packages/ab/cd/" + PACKAGES[PRICING]["wheel"]

    def __init__(self, data: bytes = WHEEL, listed: str | None = None) -> None:
        self.data, self.listed = data, listed or sha(WHEEL)
        self.calls: list[str] = []

    def answers(self, url: str, headers: Mapping[str, str]) -> bytes | None:
        if url == self.INDEX:
            self.calls.append(url)
            assert headers["Accept"] == "application/vnd.pypi.simple.v1+json"
            other = {"filename": PACKAGES[PRICING]["wheel"].replace(".whl", ".tar.gz"), "url": "../x.tar.gz",
                     "hashes": {"sha256": "0" * 64}}
            return json.dumps({"meta": {"api-version": "1.1"}, "name": "apache-libcloud", "files": [
                other, {"filename": PACKAGES[PRICING]["wheel"], "url": self.FILE,
                        "hashes": {"sha256": self.listed}}]}).encode()
        if url == self.FILE:
            self.calls.append(url)
            return self.data
        return None

    def __call__(self, url: str, headers: Mapping[str, str]) -> bytes:
        found = self.answers(url, headers)
        if found is None:
            raise AssertionError(f"unexpected GET {url}")
        return found


def expected_tree(root: Path) -> dict[str, bytes]:
    """What a cache verified against TEST_LOCK holds: the upstream files of `root`, and the wheel's member."""
    return {**{name: (root / name).read_bytes() for name in FILES}, PRICING: MEMBER}


def copy_upstream(target: Path) -> Path:
    """A writable copy of the locked files (the shared folder is read-only)."""
    for name in FILES:
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        (target / name).write_bytes((UPSTREAM / name).read_bytes())
    return target


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# --- the lock file ---------------------------------------------------------------------------------------------


def test_lock_pins_every_upstream_file_the_tests_name() -> None:
    named = {"karpenter/karpenter.sh_nodepools.yaml", "karpenter/karpenter.k8s.aws_ec2nodeclasses.yaml",
             "karpenter/karpenter.sh_nodeclaims.yaml", "karpenter/cel-rules.json", "karpenter/ondemand-prices.json",
             "karpenter/karpenter-getting-started-cloudformation.yaml", "karpenter/instance-types.md",
             "karpenter/karpenter-chart-values.yaml", "karpenter/karpenter-Chart.yaml",
             "karpenter/karpenter-crd-Chart.yaml", "karpenter/karpenter-crd-chart-values.yaml"}
    for chart in ("karpenter", "karpenter-crd", "aws-node-termination-handler"):
        named |= {f"charts/{chart}/Chart.yaml", f"charts/{chart}/values.yaml", f"charts/{chart}/templates/_helpers.tpl"
                  if chart != "karpenter-crd" else "charts/karpenter-crd/templates/karpenter.sh_nodepools.yaml"}
    named.add("karpenter/metrics.md")
    # The earlier supported Karpenter releases: the same kinds of files, each from its own release.
    for version in ("1.12.2", "1.13.1"):
        named |= {f"karpenter-{version}/{name}" for name in (
            "karpenter.sh_nodepools.yaml", "karpenter.k8s.aws_ec2nodeclasses.yaml", "karpenter.sh_nodeclaims.yaml",
            "karpenter-getting-started-cloudformation.yaml", "karpenter-chart-values.yaml", "karpenter-Chart.yaml",
            "karpenter-crd-Chart.yaml", "karpenter-crd-chart-values.yaml")}
        assert all(FILES[f"karpenter-{version}/{name}"]["version"].lstrip("v") == version
                   for name in ("karpenter.sh_nodepools.yaml", "karpenter-chart-values.yaml"))
    assert named <= set(FILES)


def test_every_supported_karpenter_release_has_both_charts_locked() -> None:
    # The chart references the program installs are held to these (tests/platform/stack/test_chart_lock.py).
    for version in versions.KARPENTER_VERSIONS:
        assert {f"{versions.KARPENTER_CHART}:{version}", f"{versions.KARPENTER_CRD_CHART}:{version}"} <= set(OCI_CHARTS)


def test_lock_sources_are_pinned_releases() -> None:
    for name, entry in FILES.items():
        assert entry["version"], name
        if "url" in entry:
            # a release tag or a full commit, never a branch
            assert re.fullmatch(r"https://raw\.githubusercontent\.com/aws/[\w-]+/(v\d+\.\d+\.\d+|[0-9a-f]{40})/.+",
                                entry["url"]), name
        if "oci" in entry:
            _, repository, tag = fu.parse_oci_ref(entry["oci"])
            assert tag == entry["version"] and entry["member"].startswith(repository.rsplit("/", 1)[-1] + "/"), name
        if "derive" in entry:
            for source in entry["from"]:
                assert source in FILES or re.fullmatch(r"https://raw\.githubusercontent\.com/aws/[\w-]+/v[\d.]+/.+",
                                                       source), name


@requires_upstream
def test_lock_sums_match_the_upstream_files() -> None:
    # The package files come with a fetched cache only, not with ../shared/upstream.
    present = {name: (UPSTREAM / name).read_bytes() for name in fu.locked(LOCK) if (UPSTREAM / name).is_file()}
    assert set(FILES) <= set(present)
    assert fu.mismatches(LOCK, present) == [f"{name}: missing" for name in PACKAGES if name not in present]


@requires_upstream
def test_every_chart_template_the_tests_scan_is_locked() -> None:
    # tests/support/helm_keys.py reads every file of a chart's templates/ folder: all of them must come with the cache.
    for chart in ("karpenter", "karpenter-crd", "aws-node-termination-handler"):
        templates = UPSTREAM / "charts" / chart / "templates"
        assert {f"charts/{chart}/templates/{p.name}" for p in templates.iterdir()} <= set(FILES), chart


def test_no_test_or_module_hard_codes_the_shared_folder() -> None:
    # Only tests/support knows where upstream files live (the verified cache, else ../shared/upstream).
    pattern = re.compile(r"""\.\./shared|["']shared["']""")
    offenders = []
    for folder in ("tests", "components", "infra", "policy", "benchmarks", "examples"):
        for path in (REPO / folder).rglob("*.py"):
            if path.relative_to(REPO).as_posix() in {"tests/support/__init__.py",
                                                      "tests/project/test_upstream_fetch.py"}:
                continue
            if pattern.search(path.read_text()):
                offenders.append(str(path.relative_to(REPO)))
    assert offenders == []


# --- --from, --check, refusal ----------------------------------------------------------------------------------


def run(capsys: pytest.CaptureFixture[str], *args: str, get: Any = None) -> tuple[int, str, str]:
    """The script's main with TEST_LOCK (the wheel served by FakePyPI, the default transport)."""
    code = fu.main([*args, "--lock", str(TEST_LOCK)], get=get or FakePyPI())
    out, err = capsys.readouterr()
    return code, out, err


def _no_network(url: str, headers: Mapping[str, str]) -> bytes:
    raise AssertionError(f"unexpected GET {url}")


@requires_upstream
def test_from_a_local_copy_lays_out_the_same_tree(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source, cache = copy_upstream(tmp_path / "copy"), tmp_path / "cache"
    pypi = FakePyPI()
    code, out, err = run(capsys, "--from", str(source), "--cache", str(cache), get=pypi)
    assert (code, err) == (0, "")
    assert f"{len(FILES) + 1} files copied from {source} (1 fetched from PyPI) and verified" in out
    assert pypi.calls == [FakePyPI.INDEX, FakePyPI.FILE]  # the package file the copy lacks, from PyPI
    got = tree(cache)
    marker = got.pop(".verified")
    assert marker.decode().strip() == fu.lock_digest(TEST_LOCK)
    assert got == expected_tree(UPSTREAM)
    assert fu.is_verified(cache, TEST_LOCK)
    assert run(capsys, "--check", "--cache", str(cache))[0] == 0
    code, out, _ = run(capsys, "--cache", str(cache), get=_no_network)  # verified already: nothing fetched
    assert code == 0 and "up to date" in out
    # A copy that holds the package file too (a verified cache) is read without the network.
    code, out, _ = run(capsys, "--from", str(cache), "--cache", str(tmp_path / "again"), get=_no_network)
    assert code == 0 and f"{len(FILES) + 1} files copied from {cache} and verified" in out
    assert not [p for p in tmp_path.iterdir() if p.name not in {"cache", "copy", "again"}], "staging left behind"


@requires_upstream
def test_a_tampered_file_is_refused_and_nothing_is_cached(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = copy_upstream(tmp_path / "copy")
    victim = source / "charts" / "karpenter" / "values.yaml"
    victim.write_bytes(victim.read_bytes().replace(b"tag: 1.14.1", b"tag: 1.14.2"))
    cache = tmp_path / "cache"
    code, out, err = run(capsys, "--from", str(source), "--cache", str(cache))
    assert code == 1 and out == ""
    expected = FILES["charts/karpenter/values.yaml"]["sha256"]
    assert f"charts/karpenter/values.yaml: sha256 mismatch: expected {expected}, got {sha(victim.read_bytes())}" in err
    assert "refusing" in err and err.count("mismatch") == 1
    assert not cache.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["copy"]


@requires_upstream
def test_a_refused_fetch_leaves_the_existing_cache_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cache = tmp_path / "cache"
    assert run(capsys, "--from", str(copy_upstream(tmp_path / "first")), "--cache", str(cache))[0] == 0
    before = tree(cache)
    source = copy_upstream(tmp_path / "copy")
    (source / "karpenter" / "cel-rules.json").unlink()
    code, _, err = run(capsys, "--from", str(source), "--cache", str(cache), "--force")
    assert code == 1 and "lacks 1 locked file(s): karpenter/cel-rules.json" in err
    assert tree(cache) == before


@requires_upstream
def test_check_names_each_bad_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cache = tmp_path / "cache"
    assert run(capsys, "--check", "--cache", str(cache))[0] == 1
    assert run(capsys, "--from", str(copy_upstream(tmp_path / "copy")), "--cache", str(cache))[0] == 0
    (cache / "karpenter" / "instance-types.md").write_bytes(b"changed")
    (cache / "charts" / "karpenter-crd" / "values.yaml").unlink()
    code, out, err = run(capsys, "--check", "--cache", str(cache))
    assert code == 1 and out == "" and FETCH_UPSTREAM in err
    pinned = FILES["karpenter/instance-types.md"]["sha256"]
    assert f"karpenter/instance-types.md: sha256 mismatch: expected {pinned}, got {sha(b'changed')}" in err
    assert "charts/karpenter-crd/values.yaml: missing" in err


def test_a_marker_for_another_lock_is_not_verified(tmp_path: Path) -> None:
    (tmp_path / ".verified").write_text("0" * 64 + "\n")
    assert not fu.is_verified(tmp_path)
    (tmp_path / ".verified").write_text(fu.lock_digest() + "\n")  # the real lock's digest
    assert fu.is_verified(tmp_path)


def test_a_lock_with_an_escaping_path_is_rejected(tmp_path: Path) -> None:
    bad = {"files": {"../outside.yaml": {"sha256": "0" * 64, "version": "1", "url": "https://example.invalid/x"}}}
    (tmp_path / "lock.json").write_text(json.dumps(bad))
    with pytest.raises(fu.UpstreamError, match="not a relative path"):
        fu.load_lock(tmp_path / "lock.json")


# --- the network steps, with a fake transport ------------------------------------------------------------------


def helm_like_archive(chart_dir: Path, chart: str, extra: Mapping[str, bytes] = {}) -> bytes:
    """A chart archive as `helm package` writes one: `<chart>/...` members, Chart.yaml re-serialised."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        def add(name: str, data: bytes) -> None:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))

        for path in sorted(chart_dir.rglob("*")):
            if path.is_file():
                data = path.read_bytes()
                if path.name == "Chart.yaml" and path.parent == chart_dir:
                    data = yaml.safe_dump(yaml.safe_load(data), sort_keys=True).encode()
                add(f"{chart}/{path.relative_to(chart_dir)}", data)
        for name, data in extra.items():
            add(name, data)
        link = tarfile.TarInfo(f"{chart}/link")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tar.addfile(link)
    return buffer.getvalue()


def go_price_table(prices: Mapping[str, float]) -> bytes:
    """A Go source shaped like Karpenter's zz_generated.pricing_aws.go: a region map of family-grouped rows."""
    lines = ["// Code generated for this test.", "", "package pricing", "",
             'import ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"', "",
             "var InitialOnDemandPricesAWS = map[string]map[ec2types.InstanceType]float64{"]
    for region, table in (("ap-test-1", {"m5.large": 9.5}), ("us-east-1", prices)):
        lines += [f"\t// {region}", f'\t"{region}": {{']
        families: dict[str, list[str]] = {}
        for name in sorted(table):
            families.setdefault(name.split(".")[0], []).append(f'"{name}": {table[name]:f},')
        for family, pairs in families.items():
            lines.append(f"\t\t// {family} family")
            lines += ["\t\t" + " ".join(pairs[i:i + 4]) for i in range(0, len(pairs), 4)]
        lines.append("\t},")
    lines += ["}", "", "var OtherTable = map[string]float64{", '\t"us-east-1": 1.0,', "}", ""]
    return "\n".join(lines).encode()


class FakeRegistryAndGitHub:
    """Answers the script's GETs from the upstream folder, checking the headers a real registry needs."""

    def __init__(self, root: Path, scratch: Path, *, corrupt_blob: str | None = None) -> None:
        self.scratch = scratch
        self.calls: list[str] = []
        self.blobs: dict[str, bytes] = {}
        self.raw: dict[str, bytes] = {}
        self.corrupt_blob = corrupt_blob
        self.root = root
        self.pypi = FakePyPI()
        for name, entry in FILES.items():
            if "url" in entry:
                self.raw[entry["url"]] = (root / name).read_bytes()
            if entry.get("derive") == "ondemand-prices":
                prices = json.loads((root / name).read_text())["us-east-1"]
                self.raw[entry["from"][0]] = go_price_table(prices)

    def chart_dir(self, chart: str, tag: str) -> Path:
        """The chart folder for `chart` at `tag`: today's under charts/, an earlier Karpenter release's built
        from its karpenter-<tag>/ files (Chart.yaml and values.yaml, all the lock takes from those archives)."""
        current = self.root / "charts" / chart
        if yaml.safe_load((current / "Chart.yaml").read_text())["version"] == tag:
            return current
        folder = self.scratch / f"{chart}-{tag}"
        if not folder.is_dir():
            folder.mkdir(parents=True)
            release = self.root / f"karpenter-{tag}"
            (folder / "Chart.yaml").write_bytes((release / f"{chart}-Chart.yaml").read_bytes())
            (folder / "values.yaml").write_bytes((release / f"{chart}-chart-values.yaml").read_bytes())
        return folder

    def __call__(self, url: str, headers: Mapping[str, str]) -> bytes:
        self.calls.append(url)
        if (package := self.pypi.answers(url, headers)) is not None:
            return package
        if url in self.raw:
            assert "Authorization" not in headers
            return self.raw[url]
        token = re.fullmatch(r"https://public\.ecr\.aws/token/\?scope=repository:(.+):pull", url)
        if token:
            return json.dumps({"token": f"tok-{token[1]}"}).encode()
        manifest = re.fullmatch(r"https://public\.ecr\.aws/v2/(.+)/manifests/(.+)", url)
        if manifest:
            assert headers["Authorization"] == f"Bearer tok-{manifest[1]}"
            assert headers["Accept"] == "application/vnd.oci.image.manifest.v1+json"
            chart, tag = manifest[1].rsplit("/", 1)[-1], manifest[2]
            blob = helm_like_archive(self.chart_dir(chart, tag), chart, {f"{chart}/Chart.lock": b"generated: x\n"})
            digest = f"sha256:{sha(blob)}"
            self.blobs[digest] = blob
            return json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                               "config": {"mediaType": "application/vnd.cncf.helm.config.v1+json", "digest": "x"},
                               "layers": [{"mediaType": "application/vnd.cncf.helm.chart.content.v1.tar+gzip",
                                           "digest": digest, "size": len(blob)}]}).encode()
        blob_url = re.fullmatch(r"https://public\.ecr\.aws/v2/(.+)/blobs/(sha256:[0-9a-f]{64})", url)
        if blob_url:
            assert headers["Authorization"] == f"Bearer tok-{blob_url[1]}"
            data = self.blobs[blob_url[2]]
            return data + b"x" if blob_url[1] == self.corrupt_blob else data
        raise AssertionError(f"unexpected GET {url}")


@requires_upstream
def test_fetch_through_the_registry_and_raw_files_builds_the_same_cache(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fake = FakeRegistryAndGitHub(UPSTREAM, tmp_path / "charts")
    cache = tmp_path / "cache"
    code, out, err = run(capsys, "--cache", str(cache), get=fake)
    assert (code, err) == (0, "") and f"{len(FILES) + 1} files fetched and verified" in out
    got = tree(cache)
    got.pop(".verified")
    assert got == expected_tree(UPSTREAM)
    # each chart pulled once (token, manifest, blob), each raw file once, the wheel once (index, file)
    assert len(fake.calls) == 3 * len(OCI_CHARTS) + len(fake.raw) + 2
    assert set(fake.calls) >= {"https://public.ecr.aws/token/?scope=repository:karpenter/karpenter:pull",
                               "https://public.ecr.aws/v2/karpenter/karpenter-crd/manifests/1.14.1",
                               "https://public.ecr.aws/token/?scope=repository:aws-ec2/helm/aws-node-termination-handler:pull"}
    assert not (cache / "charts" / "karpenter" / "Chart.lock").exists()  # only what the lock names
    assert not (cache / "charts" / "karpenter" / "link").exists()


@requires_upstream
def test_a_blob_that_does_not_match_its_manifest_digest_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fake = FakeRegistryAndGitHub(UPSTREAM, tmp_path / "charts", corrupt_blob="karpenter/karpenter-crd")
    code, _, err = run(capsys, "--cache", str(tmp_path / "cache"), get=fake)
    assert code == 1 and "oci://public.ecr.aws/karpenter/karpenter-crd:1.14.1: chart blob digest mismatch" in err
    assert not (tmp_path / "cache").exists()


@requires_upstream
def test_a_changed_upstream_file_is_refused_with_both_sums(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fake = FakeRegistryAndGitHub(UPSTREAM, tmp_path / "charts")
    url = FILES["karpenter/karpenter-getting-started-cloudformation.yaml"]["url"]
    fake.raw[url] += b"# moved tag\n"
    code, _, err = run(capsys, "--cache", str(tmp_path / "cache"), get=fake)
    expected = FILES["karpenter/karpenter-getting-started-cloudformation.yaml"]["sha256"]
    assert code == 1
    assert (f"karpenter/karpenter-getting-started-cloudformation.yaml: sha256 mismatch: expected {expected}, "
            f"got {sha(fake.raw[url])}") in err
    assert not (tmp_path / "cache").exists()


@requires_upstream
def test_a_packaged_chart_of_another_version_is_refused() -> None:
    archive = helm_like_archive(UPSTREAM / "charts" / "karpenter-crd", "karpenter-crd")
    members = fu.chart_members(archive, "ref")
    fu.check_packaged_chart(members, "oci://public.ecr.aws/karpenter/karpenter-crd:1.14.1")
    wrong = r"says name='karpenter-crd' version='1.14.1', expected 'karpenter-crd' '1.15.0'"
    with pytest.raises(fu.UpstreamError, match=wrong):
        fu.check_packaged_chart(members, "oci://public.ecr.aws/karpenter/karpenter-crd:1.15.0")


@pytest.mark.parametrize(("answers", "message"), [
    ({"token": b"{}"}, "has no `token`"),
    ({"manifest": b"<html>"}, "the manifest is not JSON"),
    ({"manifest": json.dumps({"layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": "x"}]})
      .encode()}, "expected one layer of media type application/vnd.cncf.helm.chart.content.v1.tar+gzip, found 0"),
    ({"manifest": json.dumps({"layers": [{"mediaType": "application/vnd.cncf.helm.chart.content.v1.tar+gzip",
                                          "digest": "md5:abc"}]}).encode()}, "unsupported layer digest 'md5:abc'"),
])
def test_registry_answers_that_are_refused(answers: dict[str, bytes], message: str) -> None:
    def get(url: str, headers: Mapping[str, str]) -> bytes:
        return answers.get("token" if "/token/" in url else "manifest", b'{"token": "t"}')

    with pytest.raises(fu.UpstreamError, match=re.escape(message)):
        fu.fetch_oci_chart("oci://public.ecr.aws/karpenter/karpenter:1.14.1", get)


def test_the_lock_pins_libclouds_price_file_from_its_wheel_on_pypi() -> None:
    entry = PACKAGES["libcloud/pricing.json"]
    assert (entry["pypi"], entry["version"], entry["member"]) == ("apache-libcloud", "3.9.1",
                                                                  "libcloud/data/pricing.json")
    assert entry["wheel"] == f"apache_libcloud-{entry['version']}-py3-none-any.whl"
    assert entry["wheelSha256"] == "362806efe3602a781afa0b0c8ad2e8963a708c8d5957fb999735c1cc1e0762d2"


def test_a_package_entry_without_its_wheel_pin_is_rejected(tmp_path: Path) -> None:
    entry = {k: v for k, v in PACKAGES[PRICING].items() if k != "wheelSha256"}
    (tmp_path / "lock.json").write_text(json.dumps({"files": {}, "packages": {PRICING: entry}}))
    with pytest.raises(fu.UpstreamError, match="needs `pypi`, `version`, `wheel`, `wheelSha256` and `member`"):
        fu.load_lock(tmp_path / "lock.json")


@pytest.mark.parametrize(("pypi", "message"), [
    (FakePyPI(listed="1" * 64), f"PyPI lists sha256 {'1' * 64}, the lock pins {sha(WHEEL)}"),
    (FakePyPI(data=WHEEL + b"x"), f"wheel sha256 mismatch: expected {sha(WHEEL)}, got {sha(WHEEL + b'x')}"),
])
def test_a_wheel_other_than_the_pinned_one_is_refused(pypi: FakePyPI, message: str) -> None:
    with pytest.raises(fu.UpstreamError, match=re.escape(message)):
        fu.fetch_packages(TEST_LOCK_DATA, pypi)
    assert pypi.calls[0] == FakePyPI.INDEX


def test_a_wheel_without_the_member_or_missing_from_the_index_is_refused() -> None:
    other = wheel({"libcloud/__init__.py": b""})
    lock = {**TEST_LOCK_DATA, "packages": {PRICING: {**TEST_LOCK_DATA["packages"][PRICING], "wheelSha256": sha(other)}}}
    with pytest.raises(fu.UpstreamError, match=re.escape("has no file libcloud/data/pricing.json")):
        fu.fetch_packages(lock, FakePyPI(data=other, listed=sha(other)))
    renamed = {**TEST_LOCK_DATA, "packages": {PRICING: {**TEST_LOCK_DATA["packages"][PRICING],
                                                        "wheel": "apache_libcloud-9.9.9-py3-none-any.whl"}}}
    with pytest.raises(fu.UpstreamError, match=re.escape("lists no apache_libcloud-9.9.9-py3-none-any.whl")):
        fu.fetch_packages(renamed, FakePyPI())


def test_a_changed_package_member_is_refused_and_nothing_is_cached(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The wheel is the pinned one, but the lock pins another member sum: the member is checked too.
    lock = {**TEST_LOCK_DATA, "packages": {PRICING: {**TEST_LOCK_DATA["packages"][PRICING], "sha256": "2" * 64}}}
    (tmp_path / "lock.json").write_text(json.dumps(lock))
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty-lock.json").write_text(json.dumps({"files": {}, "packages": lock["packages"]}))
    code = fu.main(["--from", str(tmp_path / "empty"), "--cache", str(tmp_path / "cache"),
                    "--lock", str(tmp_path / "empty-lock.json")], get=FakePyPI())
    assert code == 1 and not (tmp_path / "cache").exists()
    assert f"{PRICING}: sha256 mismatch: expected {'2' * 64}, got {sha(MEMBER)}" in capsys.readouterr().err


def test_oci_references() -> None:
    assert fu.parse_oci_ref("oci://public.ecr.aws/aws-ec2/helm/aws-node-termination-handler:0.27.6") == (
        "public.ecr.aws", "aws-ec2/helm/aws-node-termination-handler", "0.27.6")
    with pytest.raises(fu.UpstreamError, match="not an OCI reference"):
        fu.parse_oci_ref("https://public.ecr.aws/karpenter/karpenter")


def test_a_chart_archive_that_is_not_gzip_is_refused() -> None:
    with pytest.raises(fu.UpstreamError, match="ref: not a gzipped tar archive"):
        fu.chart_members(b"not a tarball", "ref")


def test_redirects_to_another_host_drop_the_registry_token() -> None:
    handler = fu._DropAuthOnOtherHost()
    request = urllib.request.Request("https://public.ecr.aws/v2/x/blobs/sha256:0",
                                     headers={"Authorization": "Bearer t", "Accept": "*/*"})
    elsewhere = handler.redirect_request(request, None, 307, "Temporary Redirect", {}, "https://cdn.example/blob")
    assert not elsewhere.has_header("Authorization")
    same = handler.redirect_request(request, None, 307, "Temporary Redirect", {}, "https://public.ecr.aws/v2/y")
    assert same.get_header("Authorization") == "Bearer t"


# --- derivations: byte-identical to the upstream folder's derived files --------------------------------------


@requires_upstream
def test_cel_rules_derive_byte_for_byte_from_the_crds() -> None:
    crds = [(UPSTREAM / name).read_bytes() for name in FILES["karpenter/cel-rules.json"]["from"]]
    assert fu.derive_cel_rules(crds) == (UPSTREAM / "karpenter" / "cel-rules.json").read_bytes()


@requires_upstream
def test_ondemand_prices_derive_byte_for_byte_from_the_go_table() -> None:
    expected = (UPSTREAM / "karpenter" / "ondemand-prices.json").read_bytes()
    go = go_price_table(json.loads(expected)["us-east-1"])
    assert fu.derive_ondemand_prices(go) == expected


@pytest.mark.parametrize(("source", "message"), [
    ("package pricing\n", "no `var InitialOnDemandPricesAWS"),
    ('var InitialOnDemandPricesAWS = map[string]map[ec2types.InstanceType]float64{\n\t"eu-west-1": {\n'
     '\t\t"m5.large": 0.1,\n\t},\n}\n', "no us-east-1 table"),
    ('var InitialOnDemandPricesAWS = map[string]map[ec2types.InstanceType]float64{\n\t"us-east-1": {\n'
     '\t\t"m5.large": 0.1, "m5.xlarge": 2e-1,\n\t},\n}\n', "cannot read line"),
    ('var InitialOnDemandPricesAWS = map[string]map[ec2types.InstanceType]float64{\n\t"us-east-1": {\n'
     '\t\t"m5.large": 0.1, "m5.large": 0.2,\n\t},\n}\n', "m5.large listed twice"),
])
def test_a_price_table_that_cannot_be_read_is_refused(source: str, message: str) -> None:
    with pytest.raises(fu.UpstreamError, match=re.escape(message)):
        fu.derive_ondemand_prices(source.encode())


def test_prices_keep_every_row_and_ignore_comments_and_other_regions() -> None:
    table = {"m5.large": 0.096, "m5.xlarge": 0.192, "m5.metal": 4.608, "c7i-flex.large": 0.08479, "a1.medium": 0.0255}
    assert json.loads(fu.derive_ondemand_prices(go_price_table(table))) == {"us-east-1": dict(sorted(table.items()))}


# --- the skip that CI turns into a failure ---------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("no_skips", [False, True])
def test_a_missing_upstream_skips_with_the_fetch_command_or_fails_in_ci(tmp_path: Path, no_skips: bool) -> None:
    (tmp_path / "test_probe.py").write_text(
        "from pathlib import Path\n"
        "import tests.support as shared\n"
        "from tests.support import requires_upstream\n"
        "shared.UPSTREAM = Path('/nonexistent/upstream')\n\n"
        "@requires_upstream\n"
        "def test_needs_upstream():\n"
        "    pass\n")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), **({"EKS_KARPENTER_NO_SKIPS": "1"} if no_skips else {})}
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "tests.conftest", "-p",
                             "no:cacheprovider", "--rootdir", str(tmp_path), str(tmp_path / "test_probe.py")],
                            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert MISSING_UPSTREAM in result.stdout
    if no_skips:
        assert result.returncode == 1 and "1 error" in result.stdout, result.stdout
    else:
        assert result.returncode == 0 and "1 skipped" in result.stdout, result.stdout


# --- an unreachable source --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("error", "says"), [
    (urllib.error.URLError(OSError(-3, "Temporary failure in name resolution")), "cannot reach "),
    (TimeoutError("timed out"), "cannot reach "),
    (urllib.error.HTTPError("https://x", 404, "Not Found", {}, None), "cannot fetch "),  # type: ignore[arg-type]
])
def test_an_unreachable_source_names_the_url_and_what_to_do(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                            error: Exception, says: str) -> None:
    asked: list[str] = []

    def offline(url: str, headers: Mapping[str, str]) -> bytes:
        asked.append(url)
        raise error

    code, out, err = run(capsys, "--cache", str(tmp_path / "cache"), get=offline)
    assert code == 1 and out == ""
    [line] = err.strip().splitlines()
    assert line.startswith(f"error: {says}") and asked and asked[0] in line, line
    assert f"`{fu.COMMAND} --from DIR`" in line and "Traceback" not in err
    assert not (tmp_path / "cache").exists()
