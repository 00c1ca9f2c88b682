"""The smoke test's results as a text table per pool, JSON, or Markdown (a GitHub job summary)."""

from __future__ import annotations

import json
from typing import Any

from eks_karpenter.tools.smoke.runner import PoolResult, SmokeResult


def _summary(r: PoolResult) -> str:
    p = r.plan
    got = ", ".join(x for x in (r.instance_type, r.capacity_type, r.zone) if x)
    sized = (f"sized for {p.instance_type.name}: {p.cpu_millis}m CPU, {p.memory_mib}Mi, {p.capacity_type}, "
             f"{p.arch}")
    return sized + (f"; got {got}" if got else "")


def _detail(r: PoolResult, m: str) -> str:
    if m == "NodeClaim created":
        return r.nodeclaim or ""
    if m == "node Ready":
        return r.node or ""
    if m == "pod created":
        return r.pod or ""
    if m == "node gone":
        return r.gone_outcome
    return ""


def _rows(r: PoolResult) -> list[tuple[str, str, str, str]]:
    rows = [(str(m), f"{at:.0f}s", f"{took:.0f}s", _detail(r, m)) for m, at, took in r.durations()]
    if r.status == "failed" and r.phase:
        rows.append((r.phase, "-", "-", f"STALLED: {r.error}"))
    elif r.gone_outcome and "node gone" not in r.milestones:
        rows.append(("node gone", "-", "-", r.gone_outcome))
    return rows


def _status(r: PoolResult) -> str:
    return "ok" if r.ok else f"FAILED at {r.phase}"


def render_text(result: SmokeResult) -> str:
    out = [f"smoke test of stack {result.plan.stack} on {result.server} (run {result.plan.run_id}, "
           f"started {result.started:%Y-%m-%d %H:%M:%S} UTC)"]
    for r in result.pools:
        out.append("")
        out.append(f"pool {r.pool}: {_status(r)}  ({_summary(r)})")
        rows = [("phase", "at", "took", ""), *_rows(r)]
        widths = [max(len(row[i]) for row in rows) for i in range(3)]
        for row in rows:
            line = f"  {row[0]:<{widths[0]}}  {row[1]:>{widths[1]}}  {row[2]:>{widths[2]}}  {row[3]}"
            out.append(line.rstrip())
        out += [f"  note: {n}" for n in r.notes]
        out += [f"  {d}" for d in r.diagnostics]
    out.append("")
    if result.interrupted:
        out.append("interrupted")
    out += result.cleanup
    failed = [r.pool for r in result.pools if not r.ok]
    out.append(f"{len(result.pools) - len(failed)}/{len(result.pools)} pools passed"
               + (f"; failed: {', '.join(failed)}" if failed else ""))
    return "\n".join(out) + "\n"


def to_json(result: SmokeResult) -> dict[str, Any]:
    return {
        "stack": result.plan.stack, "runId": result.plan.run_id, "namespace": result.plan.namespace,
        "server": result.server, "started": result.started.isoformat(), "ok": result.ok,
        "interrupted": result.interrupted, "cleanup": result.cleanup,
        "pools": [{
            "pool": r.pool, "status": r.status, "failedPhase": r.phase, "error": r.error,
            "milestones": [{"name": m, "at": round(at, 3), "took": round(took, 3)} for m, at, took in r.durations()],
            "sizedFor": {"instanceType": r.plan.instance_type.name, "cpu": f"{r.plan.cpu_millis}m",
                         "memory": f"{r.plan.memory_mib}Mi", "capacityType": r.plan.capacity_type,
                         "arch": r.plan.arch},
            "nodeClaim": r.nodeclaim, "node": r.node, "instanceType": r.instance_type,
            "capacityType": r.capacity_type, "zone": r.zone,
            "consolidation": r.consolidation.state if r.consolidation else None,
            "nodeGone": r.gone_outcome or None, "notes": r.notes, "diagnostics": r.diagnostics,
        } for r in result.pools],
    }


def render_json(result: SmokeResult) -> str:
    return json.dumps(to_json(result), indent=2) + "\n"


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(result: SmokeResult) -> str:
    icon = "✅" if result.ok else "❌"
    out = [f"### {icon} Smoke test: `{result.plan.stack}`", "",
           f"Run `{result.plan.run_id}` against {result.server}, started {result.started:%Y-%m-%d %H:%M:%S} UTC.",
           ""]
    for r in result.pools:
        out += [f"**{r.pool}**: {_status(r)} ({_md(_summary(r))})", "", "| phase | at | took | |",
                "| --- | ---: | ---: | --- |"]
        out += [f"| {_md(a)} | {b} | {c} | {_md(d)} |" for a, b, c, d in _rows(r)]
        out.append("")
        out += [f"- {_md(n)}" for n in r.notes + r.diagnostics]
        if r.notes or r.diagnostics:
            out.append("")
    if result.interrupted:
        out += ["Interrupted.", ""]
    out += [f"- {_md(c)}" for c in result.cleanup]
    return "\n".join(out).rstrip() + "\n"
