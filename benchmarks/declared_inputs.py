"""Proof inputs declared by hand for the corpus kernels that no unit test or script of theirs launches, for
``migrate_corpus.py``; each declaration names the source its shapes and values come from.

nki-samples at 0898a77 has no test or script calling ``reference/rmsnorm_quant``'s kernel, and its third argument
is an object of a class its file defines (``RmsNormQuantKernelArgs``, a dataclass of options), which the spec
language cannot write. So its inputs are declared here, taken from the corpus's own documentation of the kernel,
and fed through the ordinary ``--inputs`` mechanism: ``inputs=declared_inputs:<function>``, a function the
simulator calls with the module being simulated (the original's or the migrated one's: the options object is built
from that module's own class) and the proof's seed. Nothing of the corpus is copied here: a declaration holds
shapes, dtypes and option values, and the line that gives them.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np
from nki_studio.verify.inputs import make_tensor
from nki_studio.verify.spec import TensorSpec, parse_value

_RMSNORM_QUANT = "src/nki_samples/reference/rmsnorm_quant/rmsnorm_quant.py::rmsnorm_quant_kernel"


@dataclass(frozen=True)
class Declared:
    """A kernel's ``--inputs`` text and the source of what it says (shown with the verdict)."""

    inputs: str
    source: str


def rmsnorm_quant_kernel(module: ModuleType, seed: int) -> tuple[Any, ...]:
    """``hidden``, ``ln_w`` and ``kargs`` of nki-samples' ``rmsnorm_quant_kernel`` as its documentation's
    "Performance Analysis" runs it (doc/nki_samples.reference.rmsnorm_quant.rst, "Test Parameters": batch 1,
    sequence length 160 -- not a multiple of the 128-row tile, so the partial last tile is exercised --, hidden
    16384, ``dt.bfloat16``, "Quantization Only: False", i.e. RMS normalization). ``ln_w`` is ``[H]`` (the same page's
    "gamma with shape [H]"); the options are those of the page's CPU golden: no clipping (``lower_bound=0.0``: the
    golden clips nothing) and ``eps`` its default 1e-6, which is also the kernel's default. The page ran it at LNC 2;
    here it is launched without a grid (one program: the kernel's single-core path), so its sharded path
    (``_rmsnorm_quant_sharded_kernel``) is not run by this proof."""
    rng = np.random.default_rng(seed)
    shapes = ("bfloat16[1,160,16384]", "bfloat16[16384]")
    hidden, ln_w = (make_tensor(_tensor(text), rng) for text in shapes)
    return hidden, ln_w, module.RmsNormQuantKernelArgs(lower_bound=0.0)


def _tensor(text: str) -> TensorSpec:
    value = parse_value(text)
    assert isinstance(value, TensorSpec)
    return value


DECLARED = {
    _RMSNORM_QUANT: Declared(
        f"inputs={__name__}:{rmsnorm_quant_kernel.__name__}",
        "doc/nki_samples.reference.rmsnorm_quant.rst, Performance Analysis's test parameters and CPU golden",
    ),
}
