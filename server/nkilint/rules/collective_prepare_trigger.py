"""NKI508: prepare/trigger pairing of the split variable-length collectives (``all_to_all_v``,
``all_gather_v``)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from nki_studio.core.findings import Finding, Fix, Related, Severity
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, rule
from nki_studio.nkilint.ruleutil import V07, own_nodes

_KINDS = ("all_to_all_v", "all_gather_v")
_PREPARES = {f"nki.collectives.{k}_prepare": k for k in _KINDS}
_TRIGGERS = {f"nki.collectives.{k}_trigger": k for k in _KINDS}
_LOOPS = (ast.For, ast.AsyncFor, ast.While)


@dataclass
class _Prepare:
    call: ast.Call
    kind: str
    name: str | None  # the variable holding its instruction
    triggered: bool = False


def _loops_around(ctx: LintContext, node: ast.AST, func: ast.AST) -> list[ast.AST]:
    out: list[ast.AST] = []
    parent = ctx.parent(node)
    while parent is not None and parent is not func:
        if isinstance(parent, _LOOPS):
            out.append(parent)
        parent = ctx.parent(parent)
    return out


def _instruction_arg(call: ast.Call) -> ast.expr | None:
    if call.args:
        return call.args[0]
    return next((kw.value for kw in call.keywords if kw.arg == "prepare_instr"), None)


def _wrong_kind(ctx: LintContext, trigger: ast.Call, kind: str, prep: _Prepare) -> Finding | None:
    """The finding for a trigger of the other kind than its prepare (quick fix: the matching trigger)."""
    if prep.kind == kind:
        return None
    fix = None
    if isinstance(trigger.func, ast.Attribute):
        new = f"{ctx.text(trigger.func.value)}.{prep.kind}_trigger"
        fix = Fix(f"Use {prep.kind}_trigger", (ctx.replace(trigger.func, new),))
    return ctx.report(
        trigger.func,
        f"{kind}_trigger of an {prep.kind}_prepare (line {prep.call.lineno}); a prepare is completed by its "
        f"own kind: use {prep.kind}_trigger",
        fix=fix,
    )


_HEADER = "import nki\nimport nki.collectives as ncc\nimport nki.language as nl\n\n\n@nki.jit\n"


@rule(
    code="NKI508",
    name="collective-prepare-trigger",
    severity=Severity.ERROR,
    basis=Basis.STATED,
    min_version=V07,
    fixable=True,
    summary="`ncc.all_to_all_v_prepare`/`all_gather_v_prepare` not followed by exactly one trigger of its kind "
    "with no other prepare in between.",
    bad=_HEADER + "def kernel(src, dst, meta, rg):\n"
    "    prep = ncc.all_to_all_v_prepare(srcs=[src], dsts=[dst], replica_group=rg, metadata_tensor=meta)\n"
    "    ncc.all_gather_v_trigger(prep)\n    return dst\n",
    good=_HEADER + "def kernel(src, dst, meta, rg):\n"
    "    prep = ncc.all_to_all_v_prepare(srcs=[src], dsts=[dst], replica_group=rg, metadata_tensor=meta)\n"
    "    ncc.all_to_all_v_trigger(prep)\n    return dst\n",
    sources="nki-0.7.md §2.7 ([CC]: each prepare must be followed by exactly one trigger of its kind, with no "
    "other prepare of any kind in between -- prepares share a single slot)",
    scope_note="NKI 0.7 and later. Checked per function in source order: a second prepare before the first is "
    "triggered, a trigger of the other kind (quick fix: the matching trigger), two triggers of one prepare, a "
    "prepare whose instruction is discarded or never used, and a prepare and its trigger in different loops "
    "(one of them would run once per iteration). A prepare passed to a helper or returned is left to that code. "
    "Not checked: the Trn3 UltraServer (NeuronSwitch) restriction, which the target model cannot tell apart.",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """The split form of a variable-length collective issues its metadata setup early (`*_v_prepare`, which
    returns an instruction) and runs the collective later (`*_v_trigger(instr)`, which reuses every argument of
    its prepare). The prepares share a single slot in hardware, so the docs require each prepare to be followed
    by exactly one trigger of its kind, with no other prepare of any kind in between."""
    if not any(ctx.kernel_calls_to(api) for api in (*_PREPARES, *_TRIGGERS)):
        return
    for func in ctx.kernel_code():
        nodes = own_nodes(ctx, func)
        prepares: list[_Prepare] = []
        by_name: dict[str, _Prepare] = {}
        pending: _Prepare | None = None
        for node in nodes:
            if not isinstance(node, ast.Call):
                continue
            api = ctx.aliases.canonical(node.func)
            if api in _PREPARES:
                kind = _PREPARES[api]
                parent = ctx.parent(node)
                target = (
                    parent.targets[0] if isinstance(parent, ast.Assign) and len(parent.targets) == 1 else None
                )
                prep = _Prepare(node, kind, target.id if isinstance(target, ast.Name) else None)
                if pending is not None and not pending.triggered:
                    yield ctx.report(
                        node,
                        f"{kind}_prepare before the {pending.kind}_prepare on line {pending.call.lineno} is "
                        f"triggered: prepares share one slot; call {pending.kind}_trigger first",
                        related=(
                            Related(
                                ctx.path, ctx.span(pending.call), "the prepare still waiting for its trigger"
                            ),
                        ),
                    )
                outer = ctx.aliases.canonical(parent.func) if isinstance(parent, ast.Call) else None
                if isinstance(parent, ast.Call) and outer in _TRIGGERS:
                    # `trigger(prepare(...))`: paired on the spot
                    prep.triggered = True
                    prepares.append(prep)
                    wrong = _wrong_kind(ctx, parent, _TRIGGERS[outer], prep)
                    if wrong is not None:
                        yield wrong
                    continue
                if prep.name is None:
                    yield ctx.report(
                        node,
                        f"the instruction {kind}_prepare returns is discarded; keep it and pass it to "
                        f"ncc.{kind}_trigger",
                    )
                prepares.append(prep)
                if prep.name is not None:
                    by_name[prep.name] = prep
                pending = prep
            elif api in _TRIGGERS:
                kind = _TRIGGERS[api]
                arg = _instruction_arg(node)
                paired = by_name.get(arg.id) if isinstance(arg, ast.Name) else None
                if paired is None:
                    continue  # a parameter, a helper's result or an inline prepare (checked there)
                prep = paired
                wrong = _wrong_kind(ctx, node, kind, prep)
                if wrong is not None:
                    yield wrong
                elif prep.triggered:
                    yield ctx.report(
                        node,
                        f"second trigger of the {prep.kind}_prepare on line {prep.call.lineno}: each prepare has "
                        "exactly one trigger; prepare again before triggering again",
                    )
                elif _loops_around(ctx, prep.call, func.node) != _loops_around(ctx, node, func.node):
                    yield ctx.report(
                        node,
                        f"{kind}_trigger and its prepare (line {prep.call.lineno}) are in different loops, so one "
                        "of them runs more often than the other; keep each prepare/trigger pair in the same loop "
                        "body",
                    )
                prep.triggered = True
                if pending is prep:
                    pending = None
        loaded = {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        for prep in prepares:
            if prep.name is not None and not prep.triggered and prep.name not in loaded:
                yield ctx.report(
                    prep.call,
                    f"{prep.kind}_prepare is never triggered; call ncc.{prep.kind}_trigger({prep.name}) "
                    "after the source buffers are filled",
                )
