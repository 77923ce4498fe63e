"""Names the simulator lacks: imports work, the error comes where the name is used, unknown names are
AttributeErrors (so ``import a.b.c as x`` and ``hasattr`` behave as for any module)."""

import numpy as np
import pytest
from nki_studio.sim import api, dropin
from nki_studio.sim.errors import MissingName, NotImplementedInSimulator
from nki_studio.sim.unimplemented import Unimplemented, module_getattr

KERNEL = """\
import nki
import nki.language as nl
from nki.language import par_dim


@nki.jit
def old_style(a):
    t = nl.load(a)
    shape = (par_dim(128), 4)
    return t
"""


def test_a_legacy_from_import_fails_at_the_line_that_uses_it(tmp_path):
    path = tmp_path / "k.py"
    path.write_text(KERNEL)
    with pytest.raises(NotImplementedInSimulator) as info:
        api.simulate(str(path), np.zeros((128, 4), np.float32))
    assert info.value.line == 9 and "nl.par_dim" in str(info.value)


def test_dotted_imports_walk_module_attributes():
    with dropin.installed():
        import nki.compiler as ncomp
        import nki.isa.constants as constants
        from nki.compiler import CompileConfig

        assert constants.oob_mode is not None and ncomp.CompileConfig is CompileConfig
        import nki

        assert not hasattr(nki, "no_such_submodule") and not hasattr(nki.compiler, "no_such_option")


def test_module_getattr_answers_placeholders_and_missing_names():
    hook = module_getattr("nl", {"mgrid": "use slices"}, "unknown")
    placeholder = hook("mgrid")
    assert isinstance(placeholder, Unimplemented)
    for use in (
        lambda: placeholder[0:1],
        lambda: placeholder(),
        lambda: placeholder.shape,
        lambda: list(placeholder),
    ):
        with pytest.raises(NotImplementedInSimulator, match=r"nl\.mgrid.*use slices"):
            use()
    with pytest.raises(MissingName) as info:
        hook("nope")
    assert isinstance(info.value, AttributeError) and "nl.nope" in str(info.value)
    with pytest.raises(AttributeError):
        hook("__wrapped__")
