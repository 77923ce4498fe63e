"""A kernel's first simulation without reading the docs: what to ask for each parameter (with a guess from the
kernel's spec comment, its asserts, its type hints, its calls in the project's tests or its last run), the spec
comment written from the user's answers, and a reference function template the oracle will call
(``reference=`` in the spec, ``verify.job``).

Edits are whole lines (``protocol.commands.LineEdit``) on the text they were computed from; the front end
applies them at once.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from typing import Any

from nki_studio.protocol.commands import LineEdit, ParameterGuess, ReferenceTemplate, SpecGuesses, SpecWrite
from nki_studio.service.calibration_file import project_root
from nki_studio.verify import spec as verify_spec
from nki_studio.verify.call_sites import call_site_fields, fixture_specs
from nki_studio.verify.spec import KernelInfo, SpecError
from nki_studio.verify.type_hints import hinted_fields

# Bounds of the search for the kernel's calls in the project's tests (it runs when the user is asked, so it
# must stay quick on a large repository): test files looked at, and the size of one.
MAX_TEST_FILES = 2000
MAX_TEST_FILE_BYTES = 1_000_000
# Folders never searched: environments, caches, dependencies.
_SKIPPED_DIRS = {"node_modules", "__pycache__", "site-packages", "venv", "build", "dist"}


def _kernel(source: str, path: str, name: str) -> KernelInfo | None:
    return next((k for k in verify_spec.find_kernels(source, path) if k.name == name), None)


def _comment_fields(kernel: KernelInfo) -> dict[str, Any]:
    """The fields of the kernel's spec comment that parse (a half-right comment keeps its good values)."""
    body = verify_spec.spec_body(kernel.spec_text or "")
    return verify_spec.parse_fields(body)[0] if body is not None else {}


def guesses(source: str, path: str, name: str, last_args: Mapping[str, str]) -> SpecGuesses | None:
    """The kernel's required parameters with a guess each (its spec comment, then its asserts, its type hints,
    its calls in the project's tests, ``last_args`` -- the values of its last run --, then an example to edit)
    and whether the user must be asked (the kernel has no usable spec). None: no such kernel (or the text does
    not parse)."""
    kernel = _kernel(source, path, name)
    if kernel is None:
        return None
    needed = verify_spec.resolve(source, path, name, infer=True).spec is None
    comment = _comment_fields(kernel)
    inferred = verify_spec.inferred_fields(source, path, name)
    hinted = hinted_fields(source, name)
    unknown = [p for p in kernel.required if p not in comment and p not in inferred and p not in hinted]
    called = tested_fields(path, kernel, unknown) if unknown else {}
    example = str(verify_spec.EXAMPLE_TENSOR)
    parameters: list[ParameterGuess] = []
    for param in kernel.required:
        if param in comment:
            parameters.append({"name": param, "value": _text(comment[param]), "source": "spec"})
        elif param in inferred:
            parameters.append({"name": param, "value": _text(inferred[param]), "source": "asserts"})
        elif param in hinted:
            parameters.append({"name": param, "value": str(hinted[param]), "source": "type hint"})
        elif param in called:
            parameters.append({"name": param, "value": str(called[param]), "source": "tests"})
        elif param in last_args:
            parameters.append({"name": param, "value": last_args[param], "source": "last run"})
        else:
            parameters.append({"name": param, "value": example, "source": "example"})
    return {"kernel": name, "needed": needed, "parameters": parameters}


def tested_fields(path: str, kernel: KernelInfo, params: list[str]) -> dict[str, verify_spec.TensorSpec]:
    """What the project's tests call ``kernel`` with, for ``params``: the first test file (in path order) whose
    call gives a parameter an array or tensor built from literals (directly, or through a pytest fixture of the
    file or of a ``conftest.py`` above it) wins."""
    root = project_root(path)
    conftests: dict[str, dict[str, verify_spec.TensorSpec]] = {}  # folder -> the fixtures that apply there
    found: dict[str, verify_spec.TensorSpec] = {}
    for test in _test_files(root):
        text = _read(test)
        if text is None or kernel.name not in text:
            continue
        fixtures = _conftest_fixtures(os.path.dirname(test), root, conftests)
        for param, value in call_site_fields(text, kernel.name, kernel.params, fixtures).items():
            found.setdefault(param, value)
        if all(p in found for p in params):
            break
    return {p: found[p] for p in params if p in found}


def _read(file: str) -> str | None:
    """A test file's text; None when unreadable or larger than ``MAX_TEST_FILE_BYTES``."""
    try:
        with open(file, encoding="utf-8") as f:
            text = f.read(MAX_TEST_FILE_BYTES + 1)
    except (OSError, UnicodeDecodeError):
        return None
    return text if len(text) <= MAX_TEST_FILE_BYTES else None


def _conftest_fixtures(
    folder: str, root: str, cache: dict[str, dict[str, verify_spec.TensorSpec]]
) -> dict[str, verify_spec.TensorSpec]:
    """The fixtures of the ``conftest.py`` files from ``root`` down to ``folder``, as pytest applies them (a
    nearer one overrides), each folder read once."""
    if folder in cache:
        return cache[folder]
    parent = os.path.dirname(folder)
    inherited = (
        _conftest_fixtures(parent, root, cache)
        if os.path.normpath(folder) != os.path.normpath(root) and parent != folder
        else {}
    )
    text = _read(os.path.join(folder, "conftest.py"))
    cache[folder] = {**inherited, **fixture_specs(text)} if text is not None else inherited
    return cache[folder]


def _test_files(root: str) -> Iterator[str]:
    """The project's test files (``test_*.py``, ``*_test.py``), in path order, at most ``MAX_TEST_FILES``."""
    count = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIPPED_DIRS)
        for file in sorted(files):
            if file.endswith(".py") and (file.startswith("test_") or file.endswith("_test.py")):
                yield os.path.join(folder, file)
                count += 1
                if count >= MAX_TEST_FILES:
                    return


def _text(value: object) -> str:
    return "true" if value is True else "false" if value is False else str(value)


def write_spec(source: str, path: str, name: str, values: Mapping[str, str]) -> SpecWrite:
    """The edit that writes the kernel's spec comment with ``values`` (name -> value as the comment writes it),
    keeping the other fields of a comment already there (reference, seed ...); or the values that do not
    parse."""
    kernel = _kernel(source, path, name)
    if kernel is None:
        return {"edit": None, "problems": [f"no kernel named {name!r} in the file (or it does not parse)"]}
    fields = _comment_fields(kernel)
    problems = []
    for param, text in values.items():
        if param not in kernel.params:
            problems.append(f"{name} has no parameter {param!r}")
            continue
        try:
            fields[param] = verify_spec.parse_value(text)
        except SpecError as exc:
            problems.append(f"{param}: {exc}")
    if problems:
        return {"edit": None, "problems": problems}
    comment = verify_spec.build_spec(kernel, [("comment", fields)]).to_comment()
    return {"edit": _comment_edit(source, kernel, comment), "problems": []}


def _comment_edit(source: str, kernel: KernelInfo, comment: str) -> LineEdit:
    """Replace the kernel's spec comment with ``comment``, or insert it above the decorator, indented alike."""
    lines = source.splitlines()
    decorator = lines[kernel.decorator_line - 1]
    indent = decorator[: len(decorator) - len(decorator.lstrip())]
    if kernel.spec_line is not None:
        return {"line": kernel.spec_line - 1, "replace": True, "text": f"{indent}{comment}\n"}
    return {"line": kernel.decorator_line - 1, "replace": False, "text": f"{indent}{comment}\n"}


def reference_template(source: str, path: str, name: str) -> ReferenceTemplate | None:
    """A reference function for the kernel (``ref_<kernel>``, taking the kernel's parameters, to fill in with
    NumPy) above its spec comment, and ``reference=`` in that comment (written when the kernel has none: with
    the guesses of :func:`guesses`, the last run's aside). A function of that name already in the file is only
    named. None: no such kernel."""
    kernel = _kernel(source, path, name)
    if kernel is None:
        return None
    function = f"ref_{name}"
    fields = _comment_fields(kernel)
    guessed = guesses(source, path, name, {}) if kernel.spec_line is None else None
    if guessed is not None:
        fields = {p["name"]: verify_spec.parse_value(p["value"]) for p in guessed["parameters"]}
    fields["reference"] = function
    edit = _comment_edit(source, kernel, verify_spec.build_spec(kernel, [("comment", fields)]).to_comment())
    if not re.search(rf"^def {re.escape(function)}\(", source, re.MULTILINE):
        edit["text"] = (
            f"def {function}({', '.join(kernel.params)}):\n"
            f'    """What {name} must return for the same inputs (NumPy arrays, copies of the kernel\'s), in\n'
            f'    NumPy: nki-studio compares the kernel\'s output(s) with what this returns."""\n'
            f'    raise NotImplementedError("write the reference computation of {name}")\n\n\n' + edit["text"]
        )
    return {"function": function, "edit": edit}
