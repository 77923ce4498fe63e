"""How the extension starts its bundled server: ``python -m nki_studio.boot serve``.

The .vsix carries the pure-Python libraries in ``bundled/libs`` (on PYTHONPATH) and the compiled ones (NumPy,
pyarrow, ml_dtypes) per CPython version in ``bundled/native/cp3XY``. Picking that folder here, from the running
interpreter's own version, lets the extension start the server at once on the interpreter it found, instead of
first running a separate probe process to learn the version (about a third of a second of a cold open). The
probe still runs, after the server is up, to check the choice. Standard library only, and importable by old
Pythons, so a too-old interpreter gets a clear message and exit code :data:`TOO_OLD`.
"""

from __future__ import annotations

import json
import os
import sys

MIN_PYTHON = (3, 10)
TOO_OLD = 3  # exit code the extension recognises: this interpreter cannot run the server
NATIVE_ROOT_ENV = "NKI_STUDIO_NATIVE_ROOT"  # the bundle's native/ folder


def add_native_packages(root: str | None, libs_hint: str | None = None) -> str | None:
    """Put ``<root>/cp3XY`` for this interpreter on ``sys.path`` and ``PYTHONPATH`` (after the bundled libs when
    they are there). Returns a warning when the bundle has no packages for this version, else None."""
    if not root:
        return None
    tag = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    native = os.path.join(root, tag)
    if not os.path.isdir(native):
        present = sorted(d for d in os.listdir(root) if d.startswith("cp")) if os.path.isdir(root) else []
        return (
            f"this build of the extension bundles numpy/pyarrow/ml_dtypes for {', '.join(present) or 'no'} "
            f'Python versions, not {tag}: run "NKI: Create Server Environment" to install them for this '
            'interpreter, or set "nki-studio.interpreter" to a Python version the build supports'
        )
    built_for, running = _manifest_platform(root), this_platform()
    if built_for and running and built_for != running:
        # e.g. an x86_64 Python under Rosetta with the darwin-arm64 package: its modules would not load
        return (
            f"this build of the extension bundles compiled packages for {built_for}, but this interpreter runs "
            f'as {running}: run "NKI: Create Server Environment" to install them for it, or set '
            f'"nki-studio.interpreter" to a {built_for} Python'
        )
    at = sys.path.index(libs_hint) + 1 if libs_hint in sys.path else 1
    sys.path.insert(at, native)
    _read_pth_files(native, at + 1)
    # Child processes (simulation workers) run on this interpreter too: they get the folder through PYTHONPATH.
    entries = [e for e in os.environ.get("PYTHONPATH", "").split(os.pathsep) if e]
    at = entries.index(libs_hint) + 1 if libs_hint in entries else 0
    os.environ["PYTHONPATH"] = os.pathsep.join([*entries[:at], native, *entries[at:]])
    return None


def this_platform() -> str | None:
    """This process's VS Code target (``darwin-x64``…), None when there is none. The process's own CPU: an x86_64
    Python under Rosetta or Windows' emulation reports x86_64, which is what its compiled modules must be."""
    if hasattr(os, "uname"):
        machine = os.uname().machine
    else:  # Windows: the architecture the process runs as
        machine = os.environ.get("PROCESSOR_ARCHITECTURE", "")
    arch = {"x86_64": "x64", "amd64": "x64", "arm64": "arm64", "aarch64": "arm64"}.get(machine.lower())
    system = {"linux": "linux", "darwin": "darwin", "win32": "win32"}.get(sys.platform)
    return f"{system}-{arch}" if arch and system else None


def _manifest_platform(native_root: str) -> str | None:
    """The target the bundle's compiled packages were built for (``bundled/manifest.json`` beside ``native/``)."""
    try:
        with open(os.path.join(os.path.dirname(native_root), "manifest.json"), encoding="utf-8") as f:
            platform = json.load(f).get("platform")
    except (OSError, ValueError, AttributeError):
        return None
    return platform if isinstance(platform, str) else None


def _read_pth_files(folder: str, at: int) -> None:
    """Read ``folder``'s ``.pth`` files as ``site`` reads a site directory's, their paths going to ``sys.path[at:]``.

    pywin32 (which mcp's stdio transport imports on Windows) puts its modules behind ``pywin32.pth`` (``win32``,
    ``win32/lib``) and loads its DLLs from an import line there; the native folder is no site directory, so
    without this they would not be found. The entries stay ahead of the interpreter's own site-packages.
    """
    if not any(name.endswith(".pth") for name in os.listdir(folder)):
        return
    import site

    before = set(sys.path)
    site.addsitedir(folder)  # appends what the .pth files name, runs their import lines
    added = [p for p in sys.path if p not in before]
    sys.path[:] = [p for p in sys.path if p in before]
    sys.path[at:at] = added


def main(argv: list[str] | None = None) -> int:
    """Check the interpreter, add the compiled packages, run the ``nki-studio`` CLI."""
    if sys.version_info[:2] < MIN_PYTHON:
        sys.stderr.write(
            f"nki-studio: Python {sys.version_info[0]}.{sys.version_info[1]} at {sys.executable} is "
            f"older than {MIN_PYTHON[0]}.{MIN_PYTHON[1]}; the language server needs {MIN_PYTHON[0]}."
            f"{MIN_PYTHON[1]} or newer\n"
        )
        return TOO_OLD
    libs = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    warning = add_native_packages(os.environ.get(NATIVE_ROOT_ENV), libs)
    if warning:
        sys.stderr.write(f"nki-studio: {warning}\n")
    from nki_studio.cli.main import main as cli

    return cli(sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    sys.exit(main())
