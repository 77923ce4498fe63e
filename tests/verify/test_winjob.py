"""The Windows job object (``winjob.py``) against a recording kernel32: the call sequence and what is passed.

This is all that is verified of it: no test here runs on Windows (docs/packaging.md, "what is verified
where")."""

from __future__ import annotations

import ctypes
from typing import Any

import pytest
from nki_studio.verify import winjob


class FakeKernel32:
    """Records every call; returns handles 100, 101, ... and TRUE, unless told to fail one function."""

    def __init__(self, fail: str = "") -> None:
        self.calls: list[tuple[str, tuple[Any, ...]]] = []
        self.fail = fail
        self.limit_flags: int | None = None
        self._next = 100

    def __getattr__(self, name: str) -> Any:
        def call(*args: Any) -> Any:
            self.calls.append((name, args))
            if name == self.fail:
                return 0
            if name == "SetInformationJobObject":
                info = args[2]._obj  # the structure behind ctypes.byref
                assert args[3] == ctypes.sizeof(winjob.JOBOBJECT_EXTENDED_LIMIT_INFORMATION)
                self.limit_flags = info.BasicLimitInformation.LimitFlags
            if name in ("CreateJobObjectW", "OpenProcess"):
                self._next += 1
                return self._next - 1
            return 1

        return call

    def names(self) -> list[str]:
        return [name for name, _ in self.calls]


def test_job_object_is_kill_on_close_and_holds_the_worker() -> None:
    k = FakeKernel32()
    job = winjob.JobObject(kernel32=k)
    job.assign(4242)
    job.terminate()
    job.close()
    job.close()  # idempotent
    assert k.names() == [
        "CreateJobObjectW",
        "SetInformationJobObject",
        "OpenProcess",
        "AssignProcessToJobObject",
        "CloseHandle",  # the process handle
        "TerminateJobObject",
        "CloseHandle",  # the job
    ]
    calls = dict(k.calls[:4])
    assert calls["CreateJobObjectW"] == (None, None)
    assert calls["SetInformationJobObject"][:2] == (100, winjob.JOB_OBJECT_EXTENDED_LIMIT_INFORMATION_CLASS)
    assert k.limit_flags == winjob.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE == 0x2000
    assert calls["OpenProcess"] == (winjob.PROCESS_SET_QUOTA | winjob.PROCESS_TERMINATE, False, 4242)
    assert calls["AssignProcessToJobObject"] == (100, 101)
    assert k.calls[4] == ("CloseHandle", (101,)) and k.calls[6] == ("CloseHandle", (100,))
    assert k.calls[5] == ("TerminateJobObject", (100, winjob.KILLED_EXIT_CODE))
    job.terminate()  # after close: nothing left to end
    assert len(k.calls) == 7


def test_structure_layout_matches_winnt_h_on_64_bit() -> None:
    if ctypes.sizeof(ctypes.c_void_p) != 8:
        pytest.skip("the sizes below are the 64-bit layout")
    # 64-bit Windows: 64-byte basic limits, 48-byte I/O counters, four SIZE_T (sizeof == 144 per winnt.h)
    assert ctypes.sizeof(winjob.JOBOBJECT_BASIC_LIMIT_INFORMATION) == 64
    assert ctypes.sizeof(winjob.IO_COUNTERS) == 48
    assert ctypes.sizeof(winjob.JOBOBJECT_EXTENDED_LIMIT_INFORMATION) == 144


def test_failed_limit_closes_the_job_and_names_the_call() -> None:
    k = FakeKernel32(fail="SetInformationJobObject")
    with pytest.raises(OSError, match="SetInformationJobObject failed \\(Windows error 5\\)"):
        winjob.JobObject(kernel32=k, last_error=lambda: 5)
    assert k.names()[-1] == "CloseHandle" and k.calls[-1][1] == (100,)


def test_failed_assignment_still_closes_the_process_handle() -> None:
    k = FakeKernel32(fail="AssignProcessToJobObject")
    job = winjob.JobObject(kernel32=k, last_error=lambda: 5)
    with pytest.raises(OSError, match="AssignProcessToJobObject failed"):
        job.assign(4242)
    assert k.calls[-1] == ("CloseHandle", (101,))
