"""Windows: a job object holds one simulation worker and every process it starts, and ends them together.

Windows has neither ``fork``, process groups that signals reach, nor a subreaper; a *job object* is its
containment. The runner creates one per worker with ``JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`` and assigns the
worker to it right after starting it; processes the kernel starts are in the job too (children inherit
their parent's job, and a kernel cannot leave it). ``TerminateJobObject`` ends them all at the end of a run,
and closing the last handle does the same, so the worker dies with the runner however the runner ends.

Assigning after the start leaves a moment in which the worker is not yet in the job; that is harmless
because a worker starts no process of its own before it receives a job, and the runner sends the job only
after the assignment (``runner.py``).

The Win32 names, constants and structure layouts are those of ``winnt.h``/``jobapi2.h`` (Microsoft's
documentation). This module only runs on Windows; on Linux its tests inject a recording ``kernel32`` and
check the call sequence and the structure it passes (``tests/verify/test_winjob.py``), which is all that
is verified here: no test runs it against a real Windows kernel.
"""

from __future__ import annotations

import ctypes
from typing import Any

JOB_OBJECT_EXTENDED_LIMIT_INFORMATION_CLASS = 9  # JobObjectExtendedLimitInformation
JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE = 0x2000
PROCESS_TERMINATE = 0x0001
PROCESS_SET_QUOTA = 0x0100  # both rights are what AssignProcessToJobObject needs on the process handle
KILLED_EXIT_CODE = 1  # the exit code TerminateJobObject gives every process of the job

_DWORD = ctypes.c_uint32
_SIZE_T = ctypes.c_size_t


class JOBOBJECT_BASIC_LIMIT_INFORMATION(ctypes.Structure):
    """winnt.h: JOBOBJECT_BASIC_LIMIT_INFORMATION."""

    _fields_ = [
        ("PerProcessUserTimeLimit", ctypes.c_int64),  # LARGE_INTEGER
        ("PerJobUserTimeLimit", ctypes.c_int64),
        ("LimitFlags", _DWORD),
        ("MinimumWorkingSetSize", _SIZE_T),
        ("MaximumWorkingSetSize", _SIZE_T),
        ("ActiveProcessLimit", _DWORD),
        ("Affinity", _SIZE_T),  # ULONG_PTR
        ("PriorityClass", _DWORD),
        ("SchedulingClass", _DWORD),
    ]


class IO_COUNTERS(ctypes.Structure):
    """winnt.h: IO_COUNTERS."""

    _fields_ = [
        (name, ctypes.c_uint64)
        for name in (
            "ReadOperationCount",
            "WriteOperationCount",
            "OtherOperationCount",
            "ReadTransferCount",
            "WriteTransferCount",
            "OtherTransferCount",
        )
    ]


class JOBOBJECT_EXTENDED_LIMIT_INFORMATION(ctypes.Structure):
    """winnt.h: JOBOBJECT_EXTENDED_LIMIT_INFORMATION (KILL_ON_JOB_CLOSE needs the extended form)."""

    _fields_ = [
        ("BasicLimitInformation", JOBOBJECT_BASIC_LIMIT_INFORMATION),
        ("IoInfo", IO_COUNTERS),
        ("ProcessMemoryLimit", _SIZE_T),
        ("JobMemoryLimit", _SIZE_T),
        ("PeakProcessMemoryUsed", _SIZE_T),
        ("PeakJobMemoryUsed", _SIZE_T),
    ]


def load_kernel32() -> Any:
    """kernel32.dll with the argument and result types of the functions used here (Windows only)."""
    from ctypes import wintypes

    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined,unused-ignore]
    kernel32.CreateJobObjectW.argtypes = [ctypes.c_void_p, wintypes.LPCWSTR]
    kernel32.CreateJobObjectW.restype = wintypes.HANDLE
    kernel32.SetInformationJobObject.argtypes = [wintypes.HANDLE, ctypes.c_int, ctypes.c_void_p, _DWORD]
    kernel32.SetInformationJobObject.restype = wintypes.BOOL
    kernel32.OpenProcess.argtypes = [_DWORD, wintypes.BOOL, _DWORD]
    kernel32.OpenProcess.restype = wintypes.HANDLE
    kernel32.AssignProcessToJobObject.argtypes = [wintypes.HANDLE, wintypes.HANDLE]
    kernel32.AssignProcessToJobObject.restype = wintypes.BOOL
    kernel32.TerminateJobObject.argtypes = [wintypes.HANDLE, ctypes.c_uint]
    kernel32.TerminateJobObject.restype = wintypes.BOOL
    kernel32.CloseHandle.argtypes = [wintypes.HANDLE]
    kernel32.CloseHandle.restype = wintypes.BOOL
    return kernel32


def _last_error() -> int:
    get = getattr(ctypes, "get_last_error", None)  # Windows only
    return int(get()) if get is not None else 0


class JobObject:
    """One kill-on-close job object. ``kernel32`` is injectable (tests); by default the real DLL."""

    def __init__(self, kernel32: Any = None, last_error: Any = _last_error) -> None:
        self._k = load_kernel32() if kernel32 is None else kernel32
        self._last_error = last_error
        self.handle: Any = self._check("CreateJobObjectW", self._k.CreateJobObjectW(None, None))
        info = JOBOBJECT_EXTENDED_LIMIT_INFORMATION()
        info.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
        try:
            self._check(
                "SetInformationJobObject",
                self._k.SetInformationJobObject(
                    self.handle,
                    JOB_OBJECT_EXTENDED_LIMIT_INFORMATION_CLASS,
                    ctypes.byref(info),
                    ctypes.sizeof(info),
                ),
            )
        except OSError:
            self.close()
            raise

    def _check(self, what: str, result: Any) -> Any:
        """``result`` unless it is the failure value (0 / NULL) of the Win32 call ``what``."""
        if not result:
            raise OSError(f"{what} failed (Windows error {self._last_error()})")
        return result

    def assign(self, pid: int) -> None:
        """Put process ``pid`` (and so everything it starts from now on) into the job."""
        process = self._check(
            "OpenProcess", self._k.OpenProcess(PROCESS_SET_QUOTA | PROCESS_TERMINATE, False, pid)
        )
        try:
            self._check("AssignProcessToJobObject", self._k.AssignProcessToJobObject(self.handle, process))
        finally:
            self._k.CloseHandle(process)

    def terminate(self) -> None:
        """End every process in the job now (no-op once closed)."""
        if self.handle:
            self._check("TerminateJobObject", self._k.TerminateJobObject(self.handle, KILLED_EXIT_CODE))

    def close(self) -> None:
        """Close the handle: with KILL_ON_JOB_CLOSE, whatever is still in the job ends too."""
        handle, self.handle = self.handle, None
        if handle:
            self._k.CloseHandle(handle)
