"""Which calibration an estimate uses, decided once for every front end: the ``calibrationFile`` setting, else
``file`` of ``[tool.nki-studio.calibration]`` (relative to its ``pyproject.toml``), else
``.nki-studio/calibration.json`` in the project (the folder of that ``pyproject.toml``, else the kernel's
folder) when it exists. A file that cannot be used gives the built-in model and a note that says why.
"""

from __future__ import annotations

import os

from nki_studio.core.pyproject import PyprojectError, find_pyproject, read_pyproject
from nki_studio.protocol.calibration import DEFAULT_CALIBRATION_FILE, CalibrationNote, CalibrationTable
from nki_studio.service.settings import Settings

OFF = "off"


def project_root(kernel_path: str) -> str:
    """The project of ``kernel_path``: its ``pyproject.toml``'s folder, else the kernel's folder."""
    pyproject = find_pyproject(kernel_path)
    return os.path.dirname(pyproject) if pyproject else os.path.dirname(os.path.abspath(kernel_path))


def configured(kernel_path: str, settings: Settings) -> str | None:
    """The calibration file named for ``kernel_path`` by the setting or ``[tool.nki-studio.calibration]``
    (None: neither names one; ``OFF``: switched off)."""
    if settings.calibration_file:  # a relative path is the project's
        setting = settings.calibration_file
        return (
            setting
            if setting == OFF
            else os.path.join(project_root(kernel_path), os.path.expanduser(setting))
        )
    pyproject = find_pyproject(kernel_path)
    if pyproject is None:
        return None
    try:
        table = read_pyproject(pyproject).get("tool", {}).get("nki-studio", {}).get("calibration", {})
    except PyprojectError:
        return None  # lint reports a broken pyproject.toml
    named = table.get("file") if isinstance(table, dict) else None
    return os.path.join(os.path.dirname(pyproject), named) if isinstance(named, str) and named else None


def default_path(kernel_path: str) -> str:
    """The project's ``.nki-studio/calibration.json``."""
    return os.path.join(project_root(kernel_path), DEFAULT_CALIBRATION_FILE)


def write_path(kernel_path: str, settings: Settings) -> str:
    """Where ``calibrate`` writes when not told: the file estimates of ``kernel_path`` read (the configured one,
    else the project's default; the default too when the setting is ``off``)."""
    named = configured(kernel_path, settings)
    return named if named and named != OFF else default_path(kernel_path)


def for_estimate(
    kernel_path: str, target: str, settings: Settings
) -> tuple[CalibrationTable | None, CalibrationNote | None]:
    """The calibration table an estimate of ``kernel_path`` on ``target`` prices with, and its note; (None,
    None) when none is configured or present; (None, a note saying why) when one is named but cannot be used."""
    from nki_studio.estimate.calibration.store import CalibrationError, ignored, note, table_for

    named = configured(kernel_path, settings)
    if named == OFF:
        return None, None
    path = named or default_path(kernel_path)
    if named is None and not os.path.exists(path):
        return None, None
    try:
        table = table_for(path, target)
    except CalibrationError as exc:
        return None, ignored(path, str(exc))
    return table, note(table, path)
