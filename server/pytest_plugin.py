"""pytest plugin: a project's own tests, unchanged, with ``import nki`` routed to the embedded simulator.

Enable it with ``pytest -p nki_studio.pytest_plugin`` (or ``nki-studio test``). For the whole session
``nki``, ``nki.language``, ``nki.isa``, ``nki.collectives``, ``nki.dtype`` and the legacy ``neuronxcc.nki``
modules are the embedded simulator's (:func:`nki_studio.sim.dropin.installed`), so a test that calls an
``@nki.jit`` kernel on NumPy arrays or torch tensors runs it here — what ``NKI_SIMULATOR=1`` does with
AWS's simulator. ``--nki-library`` also provides ``nki_cpu_simulator``, the package nki-library's
``--test-mode simulation`` imports (:mod:`nki_studio.sim.cpu_simulator_adapter`).

Launches that set ``nki.compiler`` options the simulation does not honour say so (an ``IgnoredConfigWarning``
and the test's "nki-studio simulator" report section, with the simulation's warnings).

A simulator failure is reported at the kernel line: the traceback pytest shows stops at the user's frames
(``--fulltrace`` keeps the simulator's), and a kernel's own exception is shown as the cause.

The module is not called ``pytest`` so that nothing importing ``pytest`` with the package folder on
``sys.path`` gets this file instead of pytest.
"""

from __future__ import annotations

import types
from contextlib import AbstractContextManager, ExitStack

import pytest

_STACK = pytest.StashKey[ExitStack]()


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--nki-library``: the adapter for nki-library's own suite."""
    parser.getgroup("nki-studio", "nki-studio embedded simulator").addoption(
        "--nki-library",
        action="store_true",
        default=False,
        help="also answer `import nki_cpu_simulator` (AWS's NkiCpuSimulator package, imported by "
        "nki-library's --test-mode simulation) with the embedded simulator",
    )


def _install(config: pytest.Config, nki_library: bool) -> None:
    """Enter the aliasing block once per session; it is left when pytest unconfigures."""
    if _STACK in config.stash:
        return
    from nki_studio.sim import cpu_simulator_adapter, dropin

    block: AbstractContextManager[None] = (
        cpu_simulator_adapter.installed() if nki_library else dropin.installed()
    )
    stack = ExitStack()
    stack.enter_context(block)
    config.stash[_STACK] = stack
    config.add_cleanup(stack.close)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    """Before the first conftest loads: conftests may import ``nki`` at their top."""
    _install(early_config, bool(early_config.known_args_namespace.nki_library))


def pytest_configure(config: pytest.Config) -> None:
    """When the plugin was registered too late for the hook above (``pytest_plugins`` in a conftest)."""
    _install(config, bool(config.getoption("nki_library")))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> object:
    """The test's kernel launches: the ``nki.compiler`` options the simulation ignored (``ignoredConfig``) and the
    simulation's warnings, as a report section ("nki-studio simulator", shown with the test's captured output,
    e.g. for failures or ``-rA``). Each ignored option is also an ``IgnoredConfigWarning`` in pytest's warnings
    summary, at the kernel's ``def`` line (``sim.launch_log``)."""
    from nki_studio.sim import launch_log

    with launch_log.recording() as notes:
        try:
            return (yield)
        finally:
            if notes:
                item.add_report_section("call", "nki-studio simulator", "\n".join(n.text() for n in notes))


def _user_traceback(tb: types.TracebackType | None) -> types.TracebackType | None:
    """``tb`` without the simulator's, the standard library's and installed packages' frames (``tb`` itself
    when nothing is left). A new chain, because pytest re-reads the raw chain when it cuts at the test."""
    from nki_studio.sim.userframe import is_internal

    kept: list[types.TracebackType] = []
    while tb is not None:
        if not is_internal(tb.tb_frame.f_code.co_filename):
            kept.append(tb)
        tb = tb.tb_next
    chain: types.TracebackType | None = None
    for entry in reversed(kept):
        chain = types.TracebackType(chain, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return chain


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> None:
    """Point a simulator failure at the kernel: the traceback pytest shows keeps the user's frames only, so
    its crash line (short summary, ``--tb=line``) is the kernel line; a kernel's own exception is the cause."""
    from nki_studio.sim.errors import KernelError, SimulationError

    if call.excinfo is None or not isinstance(call.excinfo.value, SimulationError):
        return
    error = call.excinfo.value
    if isinstance(error, KernelError) and error.__cause__ is None:
        error.__cause__ = error.original  # its traceback holds the kernel frames that raised it
    if item.config.getoption("fulltrace"):
        return
    for exc in (error, error.__cause__):
        if exc is not None:
            exc.__traceback__ = _user_traceback(exc.__traceback__) or exc.__traceback__
    call.excinfo = pytest.ExceptionInfo.from_exception(error)
