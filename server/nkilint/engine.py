"""Runs the rules on one file: parse, discover kernels, check, suppress, override severities.

Never raises for any input text: unparsable text gives one NKI000 finding; a rule that raises is logged and
reported once, as an NKI999 finding on line 1 naming the rule.
"""

from __future__ import annotations

import ast
import logging
import re
from collections.abc import Callable, Iterable
from dataclasses import replace

from nki_studio.core.codes import LINT_SOURCE, family_of
from nki_studio.core.findings import Finding, Severity, Span
from nki_studio.core.gc_pause import gc_paused
from nki_studio.core.yielding import checkpoint
from nki_studio.model.api_version import ApiEvidence, imports_current, legacy_evidence
from nki_studio.model.imports import LEGACY_PREFIX, ImportAliases
from nki_studio.model.kernels import KernelDiscovery, discover
from nki_studio.model.targets import LEGACY, Target
from nki_studio.model.version_signals import (
    V06,
    VersionSignal,
    may_pin_old_version,
    signals_of_uses,
    version_signals,
)
from nki_studio.nkilint.config import LintConfig
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import all_rules
from nki_studio.nkilint.suppression import parse_suppressions, unused_fix

log = logging.getLogger("nki_studio.nkilint")

SYNTAX_ERROR = "NKI000"
UNUSED_NOQA = "NKI001"
CONFIG_ERROR = "NKI002"
INTERNAL_ERROR = "NKI999"


def meta_finding(code: str, path: str, span: Span, message: str) -> Finding:
    """A finding of one of the engine's own rules (syntax, config, internal error)."""
    return all_rules()[code].entry.finding(path, span, message)


def parse(source: str, path: str) -> ast.Module | Finding:
    """The module tree, or an NKI000 finding at the error position."""
    try:
        # No file name: CPython would read the file of that name from disk to place the error, and an editor's
        # unsaved text is not what is on disk (the column came out wrong).
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return syntax_finding(exc, path)


_LINE_NUMBER = re.compile(r"\bline (\d+)")


def syntax_finding(exc: Exception, path: str, line_offset: int = 0) -> Finding:
    """The NKI000 finding for a parse failure (of a piece of the file starting after line ``line_offset``)."""
    if isinstance(exc, SyntaxError):
        line = max(1, exc.lineno or 1)
        col = max(1, exc.offset or 1)
        end_line = exc.end_lineno if exc.end_lineno and exc.end_lineno >= line else line
        end_col = exc.end_offset if exc.end_offset and (end_line > line or exc.end_offset > col) else col + 1
        msg = exc.msg
        if line_offset:  # messages name lines ("... 'for' statement on line 7", "(detected at line 9)")
            msg = _LINE_NUMBER.sub(lambda m: f"line {int(m[1]) + line_offset}", msg)
        return meta_finding(
            SYNTAX_ERROR,
            path,
            Span(line + line_offset, col, end_line + line_offset, end_col),
            f"syntax error: {msg}",
        )
    # null bytes, absurd nesting
    return meta_finding(SYNTAX_ERROR, path, Span(1, 1, 1, 1), f"cannot parse: {exc or type(exc).__name__}")


def discover_safely(
    source: str, path: str, tree: ast.Module, extra_roots: Iterable[str] = ()
) -> KernelDiscovery | Finding:
    """Kernel discovery, or an NKI999 finding if discovery itself failed."""
    try:
        return discover(source, path, tree, extra_roots=extra_roots)
    except Exception as exc:  # an analysis bug must not take down the caller
        log.exception("kernel discovery failed on %s", path)
        return meta_finding(
            INTERNAL_ERROR,
            path,
            Span(1, 1, 1, 1),
            f"internal error in kernel discovery: {type(exc).__name__}: {exc}",
        )


def lint_module(
    source: str,
    path: str,
    config: LintConfig,
    *,
    tree: ast.Module | None = None,
    discovery: KernelDiscovery | None = None,
) -> list[Finding]:
    """All findings for one file's text, sorted by position, after suppression and severity overrides."""
    with gc_paused():  # millions of short-lived-for-the-collector objects (core.gc_pause)
        return _lint_module(source, path, config, tree, discovery)


def _lint_module(
    source: str,
    path: str,
    config: LintConfig,
    tree: ast.Module | None,
    discovery: KernelDiscovery | None,
) -> list[Finding]:
    if tree is None:
        parsed = parse(source, path)
        if isinstance(parsed, Finding):
            return [parsed] if config.enabled(SYNTAX_ERROR, path) else []
        tree = parsed
    own_discovery = discovery is None
    if discovery is None:
        found = discover_safely(source, path, tree)
        if isinstance(found, Finding):
            return [found]
        discovery = found
    ctx = LintContext(path, source, tree, discovery, config)
    findings = check(ctx)
    if own_discovery:
        dispose(ctx)
    else:  # the caller disposes of its discovery; the context's caches are this lint's alone
        _release(ctx)
    return finish(findings, source, path, config)


def dispose(ctx: LintContext) -> None:
    """Break the reference cycles of one lint's analysis (functions and their module, the context's caches),
    once its findings are out, so its objects are freed by reference counting as the lint returns instead of
    by a collector pass over all of them (1.6 million objects, ~0.55 s CPU, for a 50,000-line module). Only
    for a discovery the caller made for this lint alone."""
    discovery = ctx.discovery
    _release(ctx)
    dispose_discovery(discovery)


def _release(ctx: LintContext) -> None:
    """Drop the context's caches: some hold closures over the context (a cycle that kept the whole tree, its
    discovery and every fact for a collector pass after ``lint_paths``)."""
    ctx.__dict__.clear()


def dispose_discovery(discovery: KernelDiscovery) -> None:
    """Break the reference cycles of a discovery nothing will read again (see :func:`dispose`)."""
    discovery.module.functions.clear()
    for shared in (discovery.kernels, discovery.reachable, discovery.call_sites, discovery.classes):
        shared.clear()


def with_code_version(
    config: LintConfig,
    source: str,
    uses: Iterable[tuple[str, int]] | None = None,
    aliases: ImportAliases | Callable[[], ImportAliases] | None = None,
) -> LintConfig:
    """``config`` with the NKI version the file's own code is written for when no setting names one (as the
    simulator does, ``sim.versioning``). A file whose NKI imports are all legacy ``neuronxcc.nki`` ones is
    legacy code (``model.api_version``; this also overrides a version only read from the installed toolchain:
    the file's imports are more specific). Otherwise a 0.6-only API (``nl.dynamic_range``) and no 0.7-only one
    means 0.6 code, checked by the 0.6 rules rather than reported as removed 0.7 API. ``uses``: the file's
    ``(canonical name, line)`` references and ``aliases`` its imports (or a function building them, called only
    when the text can hold a legacy import), when the caller has them (else ``source`` is scanned)."""
    legacy = _legacy_file(config, source, aliases)
    if legacy is not None:
        signal = VersionSignal(legacy.version, f"`{legacy.statement}`", legacy.line)
        target = Target(config.target.generation, legacy.version)
        return replace(config, target=target, nki_version_set=True, version_signal=signal)
    if config.nki_version_set or config.target.nki_version <= V06 or not may_pin_old_version(source):
        return config
    old, new = signals_of_uses(uses) if uses is not None else version_signals(source)
    if old is None or new is not None or old.version >= config.target.nki_version:
        return config
    target = Target(config.target.generation, old.version)
    return replace(config, target=target, nki_version_set=True, version_signal=old)


def _legacy_file(
    config: LintConfig, source: str, aliases: ImportAliases | Callable[[], ImportAliases] | None
) -> ApiEvidence | None:
    """The legacy import of a file written for the legacy API only, when no setting names the version."""
    if config.version_named_by_user or config.target.nki_version == LEGACY:
        return None
    if LEGACY_PREFIX.split(".")[0] not in source and "torch_neuronx" not in source:
        return None  # cheap exit: no legacy import can be there
    if callable(aliases):
        aliases = aliases()
    if aliases is None:
        try:
            aliases = ImportAliases.from_tree(ast.parse(source))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
    if imports_current(aliases):
        return None  # both namespaces: decided per function (model.api_version.FileApi)
    return legacy_evidence(aliases, source)


def check(ctx: LintContext) -> list[Finding]:
    """The raw findings of every enabled rule on one context, before suppression and severity overrides.
    A rule that raises becomes one NKI999 finding naming it. An unnamed NKI version is taken from the code."""
    ctx.config = with_code_version(
        ctx.config,
        ctx.source,
        ((name, node.lineno) for name, uses in ctx.refs.items() for node, _ in uses),
        ctx.aliases,
    )
    config, path = ctx.config, ctx.path
    findings: list[Finding] = []
    for code, r in all_rules().items():
        if r.check is None or not r.applies_to(config.target) or not config.enabled(code, path):
            continue
        ctx.rule = r.entry  # what ctx.report reports: the check names no code
        checkpoint()  # a user request may want the CPU (core.yielding)
        try:
            findings.extend(r.check(ctx))
        except Exception as exc:
            log.exception("rule %s (%s) failed on %s", code, r.name, path)
            findings.append(
                meta_finding(
                    INTERNAL_ERROR,
                    path,
                    Span(1, 1, 1, 1),
                    f"internal error in rule {code} ({r.name}): {type(exc).__name__}: {exc}",
                )
            )
    ctx.rule = None
    kept = [f for f in findings if config.enabled(f.code, path)]
    signal = config.version_signal
    if signal is None:
        return _legacy_kernel_notes(ctx, kept)
    # An inferred version changes what is reported, so every finding says what was assumed and from what.
    note = assumed_version_note(signal)
    return [f if f.code == INTERNAL_ERROR else replace(f, message=f"{f.message}; {note}") for f in kept]


def _legacy_kernel_notes(ctx: LintContext, findings: list[Finding]) -> list[Finding]:
    """In a file importing both APIs with no version named, the findings inside its legacy functions say that
    those were checked as legacy code, and from which import."""
    if not findings or not ctx.aliases.uses_legacy() or ctx.config.version_named_by_user:
        return findings
    evidence = ctx.api.legacy
    spans = [
        (f.node.lineno, f.node.end_lineno or f.node.lineno)
        for f in ctx.kernel_code()
        if ctx.api.mixed and ctx.api.is_legacy(f.node)
    ]
    if evidence is None or not spans:
        return findings
    signal = VersionSignal(evidence.version, f"`{evidence.statement}`", evidence.line)
    note = f"this function: {assumed_version_note(signal)}"
    return [
        replace(f, message=f"{f.message}; {note}")
        if f.code != INTERNAL_ERROR and any(lo <= f.span.line <= hi for lo, hi in spans)
        else f
        for f in findings
    ]


def assumed_version_note(signal: VersionSignal) -> str:
    """``legacy neuronxcc.nki assumed from `import neuronxcc.nki as nki` on line 3 (no setting names the NKI
    version)``: the version a file was linted at when only its code named it, and why."""
    version = "legacy neuronxcc.nki" if signal.version == LEGACY else f"NKI {signal.version}"
    return f"{version} assumed from {signal.api} on line {signal.line} (no setting names the NKI version)"


def finish(findings: list[Finding], source: str, path: str, config: LintConfig) -> list[Finding]:
    """Raw findings as reported: each once, suppressed by ``# noqa``, severities overridden, sorted by position."""
    findings = list(dict.fromkeys(findings))  # two call sites of one helper can report the same thing
    findings = _suppress(findings, source, path, config)
    findings = [_override(f, config) for f in findings]
    return sorted(findings, key=lambda f: (f.span.line, f.span.column, f.code))


def as_configured(findings: Iterable[Finding], source: str, path: str, config: LintConfig) -> list[Finding]:
    """Findings another analysis produced for this file (the simulator's NKI6xx) treated like the linter's:
    codes ``select``/``ignore``/``per-file-ignores`` leave out are dropped, ``# noqa`` comments suppress, and
    severities are overridden. (Unused ``# noqa`` codes are the lint's to report, in :func:`finish`.)"""
    kept = [f for f in findings if config.enabled(f.code, path)]
    if "noqa" in source:
        sup = parse_suppressions(source)
        kept = [f for f in kept if not sup.suppresses(f)]
    return [_override(f, config) for f in kept]


def _suppress(findings: list[Finding], source: str, path: str, config: LintConfig) -> list[Finding]:
    if "noqa" not in source:  # cheap exit: most files have no suppression comment at all
        return findings
    sup = parse_suppressions(source)
    kept = [f for f in findings if f.code == INTERNAL_ERROR or not sup.suppresses(f)]
    if (
        sup.file_all
        or not config.enabled(UNUSED_NOQA, path)
        or not all_rules()[UNUSED_NOQA].applies_to(config.target)
    ):
        return kept
    lines = source.splitlines()
    for noqa in sup.lines.values():
        if not noqa.codes:
            continue  # a bare noqa comment may serve other tools; never reported as unused
        # Codes of rules that are off (ignored, other NKI version) are not "unused": they may fire elsewhere.
        unused = tuple(c for c in noqa.codes if c not in noqa.used and _active_or_unknown(c, path, config))
        if not unused:
            continue
        fix = unused_fix(noqa, unused, lines[noqa.line - 1] if noqa.line <= len(lines) else "")
        kept.append(
            all_rules()[UNUSED_NOQA].entry.finding(
                path,
                noqa.comment_span,
                f"unused suppression: {', '.join(unused)} reported nothing on this line",
                fix=fix,
                unnecessary=True,
            )
        )
    return kept


def _active_or_unknown(prefix: str, path: str, config: LintConfig) -> bool:
    matching = [r for code, r in all_rules().items() if code.startswith(prefix)]
    if not matching:
        try:
            # A code of a family another analysis reports (NKI6xx: the simulator) may be used there.
            return family_of(prefix).source == LINT_SOURCE
        except ValueError:
            return True
    return any(r.applies_to(config.target) and config.enabled(r.code, path) for r in matching)


def _override(finding: Finding, config: LintConfig) -> Finding:
    severity = config.severity_for(finding.code, finding.severity)
    if severity is finding.severity:
        return finding
    return replace(finding, severity=severity)


def worst(findings: Iterable[Finding]) -> Severity | None:
    """The highest severity among findings (None when there are none)."""
    order = {Severity.INFO: 0, Severity.WARNING: 1, Severity.ERROR: 2}
    best: Severity | None = None
    for f in findings:
        if best is None or order[f.severity] > order[best]:
            best = f.severity
    return best
