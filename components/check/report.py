"""Rendering a report: stable JSON, and Markdown with a table and a Mermaid diagram."""

from __future__ import annotations

from collections.abc import Iterable

from .registry import NOT_JUDGED_CODES
from .registry.rule import SEVERITIES
from .results import Report


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _mermaid_label(text: str) -> str:
    return '"' + text.replace('"', "#quot;").replace("|", "#124;") + '"'


def render_markdown(report: Report) -> str:
    """`placement.md`: a summary, a table workload -> pools -> findings, the findings with their
    fixes, the pools, and a Mermaid `flowchart LR` of workload --> pool. Same report, same text."""
    counts = {s: sum(1 for f in report.findings if f.severity == s) for s in SEVERITIES}
    lines = [
        "# Placement check",
        "",
        f"{counts['error']} error(s), {counts['warning']} warning(s), {counts['info']} info. "
        f"Pod templates: {len(report.judged_clean)} judged clean, {len(report.not_judged)} not "
        f"judged by some rule ({', '.join(NOT_JUDGED_CODES)} say which and why). "
        f"ExtendedResourceToleration: {'on' if report.extended_resource_toleration else 'off'}.",
        "",
        *_workloads(report),
        "",
        *_findings(report),
        "",
        *_pools(report),
        "",
        *_diagram(report),
        "",
    ]
    return "\n".join(lines)


def _row(cells: Iterable[str]) -> str:
    return "| " + " | ".join(_cell(x) for x in cells) + " |"


def _workloads(report: Report) -> list[str]:
    lines = [
        "## Workloads",
        "",
        "| Workload | GPUs | Scales to zero | Wired to | Can land on | Findings |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for w in report.workloads:
        codes = sorted({f.code for f in report.findings_for(w.resource)})
        lines.append(
            _row(
                (
                    w.resource,
                    f"{w.claimed_gpus} (claim)" if w.claimed_gpus else str(w.gpus),
                    "yes" if w.scales_to_zero else "no",
                    ", ".join(w.wired) or "-",
                    ", ".join(w.pools) or "-",
                    ", ".join(codes) or "-",
                )
            )
        )
    return lines


def _findings(report: Report) -> list[str]:
    lines = ["## Findings", ""]
    if not report.findings:
        return [*lines, "None."]
    lines += [
        "| Severity | Code | Resource | Message | Fix |",
        "| --- | --- | --- | --- | --- |",
    ]
    return lines + [
        _row((f.severity, f.code, f.resource, f.message, f.fix)) for f in report.findings
    ]


def _pools(report: Report) -> list[str]:
    lines = [
        "## Pools",
        "",
        "| Pool | Provider | GPUs per node | Nodes | Labels | Taints |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for p in report.pools:
        gpus = "unknown" if p.gpus_per_node is None else str(p.gpus_per_node)
        devices = {len(n.dra_devices) for n in p.nodes if n.dra_devices is not None}
        if devices and p.gpus_per_node == 0:  # a DRA pool: no nvidia.com/gpu, devices by claim
            gpus = "0 + " + "/".join(map(str, sorted(devices))) + " DRA device(s)"
        if p.accelerator and p.gpu:
            gpus += f" ({p.accelerator})"
        nodes = "-" if p.min_nodes is None else f"{p.min_nodes}..{p.max_nodes}"
        labels = ", ".join(f"{k}={v}" for k, v in sorted(p.labels.items()))
        taints = ", ".join(map(str, p.taints)) or "-"
        lines.append(_row((p.name, p.provider, gpus, nodes, labels or "-", taints)))
    return lines


def _diagram(report: Report) -> list[str]:
    lines = ["## Diagram", "", "```mermaid", "flowchart LR"]
    pool_ids = {p.name: f"p{i}" for i, p in enumerate(report.pools)}
    for i, w in enumerate(report.workloads):
        lines.append(f"  w{i}[{_mermaid_label(w.resource)}]")
    for p in report.pools:
        lines.append(f"  {pool_ids[p.name]}[({_mermaid_label(p.name)})]")
    for i, w in enumerate(report.workloads):
        for name in w.pools:
            if w.wired and name not in w.wired:
                lines.append(f"  w{i} -. not wired .-> {pool_ids[name]}")
            else:
                lines.append(f"  w{i} --> {pool_ids[name]}")
        for name in w.wired:
            if name not in w.pools and name in pool_ids:
                lines.append(f"  w{i} -- wired, cannot land --x {pool_ids[name]}")
    return [*lines, "```"]
