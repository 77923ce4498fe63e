"""A measured profile and the estimate of the same kernel side by side: per engine, per line and for the
kernel, measured, estimated and the ratio estimated / measured (issue 27 item 4).

Built on ``views.compare_views`` (measured as ``a``, estimated as ``b``), so lines are followed across an edit
exactly as the compare does; the CLI, the MCP ``compare`` tool and the kernel panel all print these rows.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from nki_studio.protocol.profile import EstimateRatio, LineEstimate, MeasuredVsEstimated
from nki_studio.service import profiles, views
from nki_studio.service.views import TOP_LINES, View, compare_views

if TYPE_CHECKING:
    from nki_studio.protocol.simulation import Estimate
    from nki_studio.service.profiles import ProfileReport, SourceText


def measured_from(profile: str) -> str:
    """What a measured side says it is: the profile it was read from."""
    return f"measured: Neuron Explorer profile {profile}"


def estimated_from(path: str, kernel: str) -> str:
    """What an estimated side says it is: the kernel simulated and scheduled, an estimate."""
    return f"estimated: {kernel} in {path}, simulated and scheduled by nki-studio (not a measurement)"


def ratio(measured_ns: int, estimated_ns: int) -> EstimateRatio:
    """One time measured and estimated, with estimated / measured (None when nothing was measured)."""
    return EstimateRatio(
        measured_ns=measured_ns,
        estimated_ns=estimated_ns,
        ratio=estimated_ns / measured_ns if measured_ns else None,
    )


def measured_vs_estimated(
    measured: View,
    estimated: View,
    sources_measured: Mapping[str, SourceText],
    sources_estimated: Mapping[str, SourceText],
    *,
    measured_from: str,
    estimated_from: str,
    top: int | None = TOP_LINES,
) -> MeasuredVsEstimated:
    """``measured`` (a profile's view, with all its lines) against ``estimated`` (a simulation's, all lines):
    the kernel latency, each engine's busy time and the ``top`` hottest lines (by the larger of the two
    times; a line only one side has is listed with 0 on the other). ``measured_from``/``estimated_from``: the
    profile and the simulated kernel, shown with the numbers."""
    if measured["label"] != "measured" or estimated["label"] != "estimated":
        raise ValueError(
            f"expected measured and estimated views, got {measured['label']}, {estimated['label']}"
        )
    got = compare_views(measured, estimated, sources_measured, sources_estimated, top=None)
    rows = [*got["lines"], *got["removed_lines"], *got["added_lines"]]
    rows.sort(key=lambda r: (-max(r["a_ns"], r["b_ns"]), r["file"], r["line"]))
    return MeasuredVsEstimated(
        measured=measured_from,
        estimated=estimated_from,
        kernel=ratio(measured["summary"]["latency_ns"], estimated["summary"]["latency_ns"]),
        engines={e: ratio(t["a"], t["b"]) for e, t in got["engines"].items()},
        lines=[
            LineEstimate(
                **ratio(r["a_ns"], r["b_ns"]),
                file=r["file"],
                line=r["line"],
                line_measured=r["line_a"],
                line_estimated=r["line_b"],
                text=r["text"],
            )
            for r in rows[:top]
        ],
        lines_matched_by=got["lines_matched_by"],
    )


def of_profile(
    report: ProfileReport,
    profile: str,
    estimate: Estimate,
    kernel_path: str,
    kernel: str,
    kernel_text: str,
    *,
    local: Callable[[str], str] = lambda p: p,
    texts: Mapping[str, SourceText] | None = None,
    top: int | None = TOP_LINES,
) -> MeasuredVsEstimated:
    """A loaded profile (read from ``profile``) against a simulation's ``estimate`` section of ``kernel`` in
    ``kernel_path`` (simulated from ``kernel_text``). ``local``: a file as the comparison names it (a mapped
    profile path, the kernel's path); ``texts``: the kernel source as profiled (None: the snapshot stored with
    the profile; none stored: lines are matched by number)."""
    measured = views.view(report, lambda recorded: local(report.local_path(recorded) or recorded), top=None)
    profiled = profiles.snapshot(profile) if texts is None else texts
    return measured_vs_estimated(
        measured,
        views.estimate_view(estimate, local, top=None),
        {local(path): text for path, text in profiled.items()},
        {local(kernel_path): profiles.source_text(text=kernel_text)},
        measured_from=measured_from(profile),
        estimated_from=estimated_from(local(kernel_path), kernel),
        top=top,
    )


def of_pair(
    a: View,
    b: View,
    sources_a: Mapping[str, SourceText],
    sources_b: Mapping[str, SourceText],
    from_a: str,
    from_b: str,
) -> MeasuredVsEstimated | None:
    """``measured_vs_estimated`` when one of ``a``, ``b`` is measured and the other estimated (either order),
    else None (two measured profiles or two estimates have no ratio to a measurement)."""
    pair = {a["label"]: (a, sources_a, from_a), b["label"]: (b, sources_b, from_b)}
    if set(pair) != {"measured", "estimated"}:
        return None
    (m, sm, fm), (e, se, fe) = pair["measured"], pair["estimated"]
    return measured_vs_estimated(m, e, sm, se, measured_from=fm, estimated_from=fe)


def text(cmp: MeasuredVsEstimated, top: int = 15) -> list[str]:
    """The comparison as the CLI prints it: where each side came from, the kernel latency, each engine and
    the ``top`` hottest lines, measured | estimated | estimated / measured."""
    from nki_studio.service.heat import fmt_ns

    def row(name: str, r: EstimateRatio) -> str:
        est = "–" if r["ratio"] is None else f"{r['ratio']:.2f}x"
        return f"  {name:<34} {fmt_ns(r['measured_ns']):>10} {fmt_ns(r['estimated_ns']):>10} {est:>8}"

    head = f"  {'':<34} {'measured':>10} {'estimated':>10} {'est/meas':>8}"
    out = [
        cmp["measured"],
        cmp["estimated"],
        head,
        row("kernel latency", cmp["kernel"]),
        "Engines (busy time):",
    ]
    out += [row(e, r) for e, r in cmp["engines"].items()]
    out.append(f"Hottest lines (top {min(top, len(cmp['lines']))}; {cmp['lines_matched_by']}):")
    for ln in cmp["lines"][:top]:
        m, e = ln["line_measured"], ln["line_estimated"]
        where = f"{ln['file'] or 'line'}:{m if m is not None else '–'}"
        if m != e:
            where += f" → {e if e is not None else '–'}"
        out.append(row(where, ln) + (f"  {ln['text'].strip()}" if ln["text"] else ""))
    return out
