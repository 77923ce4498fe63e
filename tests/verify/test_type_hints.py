"""Shapes and dtypes a kernel's type hints state (``verify.type_hints``): the spec grammar in a string, and
``nt.tensor[shape, dtype]``; anything else gives no guess."""

from __future__ import annotations

import textwrap

from nki_studio.verify.spec import TensorSpec
from nki_studio.verify.type_hints import hinted_fields

SOURCE = textwrap.dedent("""\
    import nki
    import nki.language as nl
    import nki.typing as nt


    @nki.jit
    def k(a: "bf16[128,512]", b: nt.tensor[(128, 64), nl.float32], c: nt.tensor[n, nl.float32], d: nl.ndarray,
          e: "float32[128,", f: int = 3):
        return a
    """)


def test_string_and_nki_typing_hints_give_shape_and_dtype() -> None:
    assert hinted_fields(SOURCE, "k") == {
        "a": TensorSpec("bfloat16", (128, 512)),
        "b": TensorSpec("float32", (128, 64)),
    }  # c's shape is a variable, d names no shape, e does not parse, f is a scalar


def test_no_such_kernel_or_unparsable_text_gives_nothing() -> None:
    assert hinted_fields(SOURCE, "other") == {}
    assert hinted_fields("def k(a: 'f32[1]'", "k") == {}
