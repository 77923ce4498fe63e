"""pytest plugin of ``migrate_corpus.py``: the inputs a test (or a script) gives its kernels, without running them.

Each drop-in launch's inputs (``sim.launch_log.watching_inputs``) are appended as a JSON line (kernel, file,
spec fields) to the file named by ``NKI_STUDIO_LAUNCH_INPUTS``; the launch is then stopped (the test fails,
which is expected): only the shapes and dtypes are wanted, and the migration proof simulates the kernel itself.
Used with ``-p nki_studio.pytest_plugin`` (the drop-in) and ``-p launch_inputs_plugin`` (this folder on the path),
or as a script runner (``python launch_inputs_plugin.py SCRIPT``, :func:`run_script`: the script's launches and
its kernels' siblings', for ``legacy_sim_corpus.tutorial_runs``).
"""

from __future__ import annotations

import ast
import builtins
import importlib.abc
import importlib.machinery
import importlib.util
import inspect
import io
import json
import os
import sys
import types
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest
from nki_studio.sim import launch_log

ENVIRONMENT = "NKI_STUDIO_LAUNCH_INPUTS"
_SIBLING = "__nki_studio_sibling_kernel__"
_launched: list[str] = []  # the kernels whose launches were recorded in this process, in order


class InputsTaken(Exception):
    """Raised in place of the launch once its inputs are written."""


def _write(inputs: launch_log.LaunchInputs) -> None:
    with open(os.environ[ENVIRONMENT], "a", encoding="utf-8") as out:
        record = {
            "kernel": inputs.kernel,
            "file": inputs.file,
            "spec": inputs.spec(),
            "grid": list(inputs.grid),
            # the pytest case launching it (pytest's own variable while a test runs; none for a script)
            "test": os.environ.get("PYTEST_CURRENT_TEST", "").removesuffix(" (call)"),
        }
        out.write(json.dumps(record) + "\n")
    _launched.append(inputs.kernel)
    raise InputsTaken(f"{inputs.kernel}: inputs recorded, launch stopped")


def watching() -> AbstractContextManager[None]:
    """Record (and stop) every launch made inside the block."""
    return launch_log.watching_inputs(_write)


def pytest_configure(config: pytest.Config) -> None:
    """Watch every launch of the session; the modules its test files import that this machine lacks (scipy, for
    a reference) are placeholders meanwhile, and the host reads as a trn2 one (``trn2_host``)."""
    stack = ExitStack()
    stack.enter_context(watching())
    stack.enter_context(trn2_host())
    missing = _missing_imports(Path(str(arg).split("::", 1)[0]) for arg in config.args)
    if missing:
        finder = _Placeholders(missing)
        sys.meta_path.append(finder)  # last: only names no other finder knows
        stack.callback(sys.meta_path.remove, finder)
    config.add_cleanup(stack.close)


# nki-samples' trn2-only tests (double_row_matmul) read the host's DMI product name and return before launching
# anywhere else; the launches here are only recorded, never run, so that file reads as a trn2 instance's.
_PRODUCT_NAME = "/sys/devices/virtual/dmi/id/product_name"


@contextmanager
def trn2_host() -> Iterator[None]:
    """Within the block, opening the DMI product name file reads ``trn2.48xlarge`` (an AWS trn2 instance type)."""
    original = builtins.open

    def opened(file: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(file, (str, os.PathLike)) and os.fspath(file) == _PRODUCT_NAME:
            return io.StringIO("trn2.48xlarge\n")
        return original(file, *args, **kwargs)

    builtins.open = opened
    try:
        yield
    finally:
        builtins.open = original


def _missing_imports(files: Iterable[Path]) -> set[str]:
    """The top-level modules ``files`` import that cannot be found here."""
    roots: set[str] = set()
    for file in files:
        if file.suffix != ".py" or not file.is_file():
            continue
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                roots.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                roots.add(node.module.split(".")[0])
    return {root for root in roots if importlib.util.find_spec(root) is None}


class _Placeholder(types.ModuleType):
    """Stands for a module this machine lacks that a test imports for its reference (``from scipy.special import
    softmax``): its attributes are placeholders too, and using one fails. The launch is stopped before the test
    computes any reference, so only the kernel's inputs are read."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.__path__: list[str] = []  # a package: its submodules import too

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return _Placeholder(f"{self.__name__}.{name}")


class _Placeholders(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the ``roots`` modules (and their submodules) as placeholders."""

    def __init__(self, roots: set[str]) -> None:
        self.roots = roots

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname.split(".")[0] not in self.roots:
            return None
        return importlib.util.spec_from_loader(fullname, self, is_package=True)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return _Placeholder(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        """Nothing to run: the placeholder is the whole module."""


def _execute(statement: ast.stmt, namespace: dict[str, Any], script: str) -> list[str]:
    """Run one top-level statement; the kernels it launched (a failure ends the statement, not the script)."""
    before = len(_launched)
    try:
        exec(compile(ast.Module([statement], []), script, "exec"), namespace)
    except (Exception, SystemExit):  # InputsTaken, or the script needing what is not here (torch ...)
        pass
    return _launched[before:]


def _siblings(kernel: Any, namespace: dict[str, Any]) -> list[Any]:
    """The other kernels of ``kernel``'s module (same kernel type) taking the same parameters."""
    try:
        parameters = list(inspect.signature(kernel).parameters)
    except (TypeError, ValueError):
        return []
    module = sys.modules.get(getattr(kernel, "__module__", ""), None)
    found = []
    for value in vars(module).values() if module is not None else ():
        if type(value) is type(kernel) and value is not kernel and callable(value):
            try:
                same = list(inspect.signature(value).parameters) == parameters
            except (TypeError, ValueError):
                same = False
            if same:
                found.append(value)
    return found


def run_script(script: Path) -> None:
    """Run ``script`` as ``__main__``, one top-level statement at a time, recording (and stopping) every launch;
    then repeat each statement that passed a kernel by name and launched it, once for every sibling kernel of
    that kernel (same module, same parameters) in its place: a script that checks only the first of a family of
    kernels (the attention tutorial: ``test_attn_tutorial("accuracy", attn_fwd_v1)``, whose body picks each
    version's shapes) gives the others the inputs its own code would pass them."""
    tree = ast.parse(script.read_text(encoding="utf-8"))
    namespace: dict[str, Any] = {"__name__": "__main__", "__file__": str(script)}
    sys.argv = [str(script)]
    launches = [(statement, _execute(statement, namespace, str(script))) for statement in tree.body]
    for statement, kernels in launches:
        for node in {n.id for n in ast.walk(statement) if isinstance(n, ast.Name)}:
            kernel = namespace.get(node)
            if getattr(kernel, "__name__", None) not in kernels:
                continue
            renamed = _Rename(node).visit(ast.parse(ast.unparse(statement)).body[0])
            for sibling in _siblings(kernel, namespace):
                namespace[_SIBLING] = sibling
                _execute(ast.fix_missing_locations(renamed), namespace, str(script))


class _Rename(ast.NodeTransformer):
    """Every load of one name becomes a load of the sibling's."""

    def __init__(self, name: str) -> None:
        self.name = name

    def visit_Name(self, node: ast.Name) -> ast.Name:
        if node.id == self.name and isinstance(node.ctx, ast.Load):
            return ast.copy_location(ast.Name(_SIBLING, ast.Load()), node)
        return node


if __name__ == "__main__":
    from nki_studio.sim import dropin

    with dropin.installed(), watching():
        run_script(Path(sys.argv[1]).resolve())
