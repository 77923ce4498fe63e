"""Whole-column steps the scheduler's plan and the estimated-profile builder share: grouping equal rows,
the first operand of an event that satisfies a test, and string columns rebuilt from codes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from nki_studio.profile.model import Codes

I64 = npt.NDArray[np.int64]
B = npt.NDArray[np.bool_]
SMALL_ROWS = 512  # rows up to which ``group`` uses a dict (exact, and cheaper than ``row_hash``)


def row_hash(columns: Sequence[npt.NDArray[Any]]) -> npt.NDArray[np.uint64]:
    """A 64-bit hash of each row of ``columns`` (equal rows, equal hashes; the converse to be checked)."""
    h = np.full(len(columns[0]), 0x9E3779B97F4A7C15, np.uint64)
    # in place, one temporary per column (the same wrapping sums as ``c + K + (h << 6) + (h >> 2)``): on
    # millions of rows the temporaries of the plain expression cost more than the arithmetic
    t = np.empty_like(h)
    s = np.empty_like(h)
    with np.errstate(over="ignore"):
        for c in columns:
            t[...] = c  # as uint64, wrapping as ``astype`` does
            t += np.uint64(0x9E3779B97F4A7C15)
            np.left_shift(h, np.uint64(6), out=s)
            t += s
            np.right_shift(h, np.uint64(2), out=s)
            t += s
            h ^= t
            h *= np.uint64(0xBF58476D1CE4E5B9)
    return h


def group(columns: Sequence[npt.NDArray[Any]]) -> tuple[I64, I64]:
    """(id per row, first row of each id) of rows equal in every column: rows grouped by ``row_hash``, then
    checked column by column against each group's first row (an exact fallback on a collision), so equal ids
    mean equal rows. Ids follow the hash order, not the row order."""
    n = len(columns[0])
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    if n <= SMALL_ROWS:  # a short trace: a dict of row tuples costs less than the array calls
        seen: dict[tuple[Any, ...], int] = {}
        firsts: list[int] = []
        out = []
        for i, row in enumerate(zip(*(c.tolist() for c in columns), strict=True)):
            got = seen.get(row)
            if got is None:
                got = seen[row] = len(firsts)
                firsts.append(i)
            out.append(got)
        return np.array(out, np.int64), np.array(firsts, np.int64)
    h = row_hash(columns)
    order = np.argsort(h)  # not stable (cheaper): the first row of each hash is the least one of its run
    hs = h[order]
    new = np.empty(n, bool)
    new[0] = True
    np.not_equal(hs[1:], hs[:-1], out=new[1:])
    first = np.minimum.reduceat(order, np.flatnonzero(new))  # the first row of each hash
    ids = np.empty(n, np.int64)
    ids[order] = np.cumsum(new) - 1
    rep = first[ids]
    if all(np.array_equal(c, c[rep]) for c in columns):
        return ids, first.astype(np.int64)
    _, first, ids = np.unique(np.stack(columns, 1), axis=0, return_index=True, return_inverse=True)
    return ids.reshape(-1).astype(np.int64), first.astype(np.int64)


def first_of(mask: B, owner: I64, n: int) -> I64:
    """Per event, the first operand row where ``mask`` holds (-1: none); ``owner`` (the event of each row) is
    non-decreasing, as in a trace's operand table."""
    out = np.full(n, -1, np.int64)
    rows = np.flatnonzero(mask)
    if rows.size:
        ev = owner[rows]
        new = np.empty(rows.size, bool)
        new[0] = True
        np.not_equal(ev[1:], ev[:-1], out=new[1:])
        out[ev[new]] = rows[new]
    return out


def recode(ids: I64, name: Callable[[int], str], prefix: Sequence[str] = ()) -> Codes:
    """A string column from per-row ids and the string of each id (ids may share a string), its table in order
    of first appearance after ``prefix`` -- as ``Codes.from_strings`` numbers the strings of a row list."""
    table: dict[str, int] = {s: i for i, s in enumerate(prefix)}
    if ids.size == 0:
        return Codes(tuple(table), np.zeros(0, np.int32))
    # the first row of each id: the head of its run in a stable sort (np.unique(return_index=True) without
    # its generic wrapping, which costs more than the sort on a short trace's columns); those rows in row order
    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]
    head = np.empty(ids.size, bool)
    head[0] = True
    np.not_equal(sorted_ids[1:], sorted_ids[:-1], out=head[1:])
    remap = np.zeros(int(sorted_ids[-1]) + 1, np.int32)
    for u in ids[np.sort(order[head])].tolist():
        remap[u] = table.setdefault(name(u), len(table))
    return Codes(tuple(table), remap[ids])


def occurrence(ids: I64) -> I64:
    """How many earlier rows have the same id (0 for a first occurrence)."""
    if ids.size == 0:
        return np.zeros(0, np.int64)
    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]
    starts = np.flatnonzero(np.concatenate(([True], sorted_ids[1:] != sorted_ids[:-1])))
    run = np.arange(ids.size, dtype=np.int64) - np.repeat(
        starts, np.diff(np.concatenate((starts, [ids.size])))
    )
    out = np.empty(ids.size, np.int64)
    out[order] = run
    return out
