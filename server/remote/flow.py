"""The remote profiling round trip: upload → compile → capture → view → download → load.

Commands follow the published Trn2 walkthrough (profile-formats README §2, §5): compile with
``NEURON_FRAMEWORK_DEBUG=1`` and ``NKI_DEBUG_INFO=True`` (the docs disagree on which one carries NKI source
locations, so both), keep the NEFF through ``NKI_ARTIFACTS_DIR``, capture the second execution
(``neuron-explorer capture -n kernel.neff -s out.ntff --num-exec=2 --profile-nth-exec=2 --enable-dge-notifs``
→ ``out_exec_2.ntff``), then ``neuron-explorer view --output-format parquet --output-file DIR
--nki-source-root SRC``. Inferred: that ``--output-file`` with Parquet writes the tables into DIR without
starting the UI server (README §2 says "With --output-file DIR the files go to DIR"); tools that reject the
Parquet request (older Explorer builds) get a second attempt with ``--output-format json``.
"""

from __future__ import annotations

import dataclasses
import secrets
import shlex
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from nki_studio.profile.analyze import ProfileReport, analyze
from nki_studio.profile.line_align import write_snapshot
from nki_studio.profile.model import ProfileError
from nki_studio.remote import cache
from nki_studio.remote.commands import (
    env_argv,
    kill_line,
    local_operand,
    master_argv,
    master_exit_argv,
    multiplexing_supported,
    quote_argv,
    remote_operand,
    rsync_argv,
    scp_argv,
    shell_line,
    ssh_argv,
    user_sets,
)
from nki_studio.remote.config import RemoteSettings
from nki_studio.remote.errors import NO_SOURCE_FLAGS, RemoteError, classify, compile_error
from nki_studio.remote.harness import HARNESS_NAME, SOURCE_DIR, SPEC_NAME, relative_kernel_path, stage_job
from nki_studio.remote.process import CancelledFn, Completed, LogFn, run
from nki_studio.verify.spec import SimSpec

STAGES = ("upload", "compile", "capture", "view", "download", "load")
NTFF = "out.ntff"
CAPTURED = "out_exec_2.ntff"  # naming rule: -s out.ntff --num-exec=2 --profile-nth-exec=2 (README §2.1)
NEFF = "artifacts/kernel.neff"
PARQUET_OUT = "profile"
JSON_OUT = "profile.json"
HOUSEKEEPING_TIMEOUT_S = 60.0
RSYNC_PRESENT = "nki-studio:rsync"

ProgressFn = Callable[[str, str], None]  # (stage, message)


@dataclass(frozen=True)
class RemoteJob:
    """One run: which kernel (local file + resolved simulate spec), where, and where the cache lives."""

    kernel_file: Path
    spec: SimSpec
    settings: RemoteSettings
    cache_root: Path = field(default_factory=cache.default_root)
    source_root: Path | None = None  # local directory mirrored under src/ on the host (default: the kernel's)

    @property
    def local_root(self) -> Path:
        """The local directory the remote ``src/`` stands for."""
        return self.source_root or self.kernel_file.parent


@dataclass(frozen=True)
class RemoteProfile:
    """A downloaded profile: local path, its format, and the remote source directory recorded in it."""

    path: Path
    format: str
    remote_source_dir: str
    local_source_dir: Path
    host: str


class _Session:
    """Runs the stages of one job against one host; tracks the remote directory for kill and clean-up."""

    def __init__(self, job: RemoteJob, log: LogFn, progress: ProgressFn, cancelled: CancelledFn) -> None:
        self.job, self.s, self.log, self.progress, self.cancelled = (
            job,
            job.settings,
            log,
            progress,
            cancelled,
        )
        self.host = str(job.settings.host)
        name = f"{job.spec.kernel}-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}-{secrets.token_hex(3)}"
        self.job_rel = f"{self.s.workdir}/{name}"  # validated characters only: safe in scp operands too
        self.job_abs = ""
        self.created = False
        self.kernel_text: str | None = None  # the kernel as uploaded: stored with the profile (line_align)
        self.running_remote = False
        self._control_dir: str | None = None
        self.rsync = False

    # ---- plumbing --------------------------------------------------------------------------------------
    def _run(self, stage: str, argv: list[str], timeout_s: float, cwd: str | None = None) -> Completed:
        self.log(f"$ {quote_argv(argv)}" + ("" if cwd is None else f"  # in {shlex.quote(cwd)}"))
        return run(argv, timeout_s=timeout_s, cancelled=self.cancelled, log=self.log, label=stage, cwd=cwd)

    def _check(self, stage: str, result: Completed, timeout_s: float) -> Completed:
        if result.cancelled:
            raise RemoteError("cancelled", f"{stage}: cancelled")
        if result.timed_out or result.returncode != 0:
            raise classify(stage, result, self.host, timeout_s)
        return result

    def _tool(self, stage: str, argv: list[str], env: dict[str, str] | None = None) -> Completed:
        """A long remote command in the job directory, after the user's activation, killable on cancel."""
        line = shell_line(self.job_rel, env_argv(env or {}, argv), self.s.activation)
        self.running_remote = True
        try:
            result = self._run(stage, ssh_argv(self.s, line), self.s.stage_timeout_s)
            if result.cancelled or result.timed_out:
                self.kill_remote()
            return result
        finally:
            self.running_remote = False

    def kill_remote(self) -> None:
        """End the running remote stage (its process group), best effort."""
        self.log(f"stopping the remote process on {self.host}")
        r = run(
            ssh_argv(self.s, kill_line(self.job_rel)),
            timeout_s=HOUSEKEEPING_TIMEOUT_S,
            cancelled=lambda: False,
            log=self.log,
            label="kill",
        )
        if r.returncode != 0:
            self.log(f"could not stop the remote process (exit {r.returncode}); it may still be running")

    def clean(self) -> None:
        """Remove the job directory on the host unless the user keeps remote files."""
        if not self.created or self.s.keep_files:
            if self.created:
                self.log(f"remote files kept in {self.host}:{self.job_abs or self.job_rel}")
            return
        argv = ssh_argv(self.s, quote_argv(["rm", "-rf", "--", self.job_rel]))
        r = run(argv, timeout_s=HOUSEKEEPING_TIMEOUT_S, cancelled=lambda: False, log=self.log, label="clean")
        if r.returncode != 0:
            self.log(f"could not remove {self.host}:{self.job_rel} (exit {r.returncode})")

    def connect(self) -> None:
        """Open the shared connection every later ssh/scp call of this run goes through (one authentication).

        Skipped when the user's extra options choose their own ControlPath/ControlMaster. The master's output
        goes to a file, not a pipe: the backgrounded master keeps it open, and a pipe would never see EOF."""
        if (
            user_sets(self.s, "ControlPath")
            or user_sets(self.s, "ControlMaster")
            or not multiplexing_supported()
        ):
            return
        self._control_dir = tempfile.mkdtemp(prefix="nks-")  # short: socket paths are limited to ~100 bytes
        path = f"{self._control_dir}/cm"
        argv = master_argv(self.s, path)
        self.log(f"$ {quote_argv(argv)}")
        err_path = Path(self._control_dir) / "connect.err"
        limit = self.s.connect_timeout_s + 30.0
        with err_path.open("w+", encoding="utf-8", errors="replace") as err:
            try:
                proc = subprocess.run(
                    argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, timeout=limit
                )
                code, timed_out = proc.returncode, False
            except subprocess.TimeoutExpired:
                code, timed_out = -1, True
            err.seek(0)
            text = err.read()
        for line in text.splitlines():
            self.log(f"[connect stderr] {line}")
        if code != 0:
            raise classify(
                "connect", Completed(tuple(argv), code, "", text, timed_out=timed_out), self.host, limit
            )
        self.s = dataclasses.replace(self.s, control_path=path)

    def disconnect(self) -> None:
        """Close the shared connection (it would also end by itself once idle)."""
        if self.s.control_path:
            try:
                subprocess.run(
                    master_exit_argv(self.s),
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    timeout=HOUSEKEEPING_TIMEOUT_S,
                )
            except subprocess.TimeoutExpired:
                self.log("the shared ssh connection did not close; it ends by itself when idle")
            self.s = dataclasses.replace(self.s, control_path=None)
        if self._control_dir:
            shutil.rmtree(self._control_dir, ignore_errors=True)
            self._control_dir = None

    # ---- stages ----------------------------------------------------------------------------------------
    def upload(self) -> None:
        self.progress("upload", f"uploading {self.job.kernel_file.name} to {self.host}")
        mk = (
            quote_argv(["mkdir", "-p", "--", self.s.workdir])
            + " && "
            + quote_argv(["cd", "--", self.s.workdir])
            + " && pwd && { command -v rsync >/dev/null 2>&1 && echo "
            + RSYNC_PRESENT
            + " || true; }"
        )
        result = self._check(
            "upload",
            self._run("upload", ssh_argv(self.s, mk), HOUSEKEEPING_TIMEOUT_S),
            HOUSEKEEPING_TIMEOUT_S,
        )
        lines = result.stdout.strip().splitlines()
        cwd = next((ln for ln in lines if ln.startswith("/")), None)
        if cwd is None:
            raise RemoteError(
                "tool",
                f"upload: could not determine the remote work directory on {self.host}",
                detail=result.stdout,
            )
        self.job_abs = f"{cwd}/{self.job_rel.rsplit('/', 1)[-1]}"
        self.rsync = self._choose_rsync(RSYNC_PRESENT in lines)
        try:
            self.kernel_text = self.job.kernel_file.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError):
            self.kernel_text = None  # stage_job names the problem
        with tempfile.TemporaryDirectory(prefix="nki-studio-upload-") as tmp:
            local = stage_job(Path(tmp) / "job", self.job.kernel_file, self.job.spec, self.job.local_root)
            self.created = True
            cwd, operand = local_operand(local, directory=self.rsync)
            self._copy("upload", operand, remote_operand(self.s, self.job_rel), cwd)

    def _choose_rsync(self, remote_has_it: bool) -> bool:
        local_has_it = shutil.which("rsync") is not None
        if self.s.transfer == "rsync" and not (local_has_it and remote_has_it):
            where = "here" if not local_has_it else f"on {self.host}"
            raise RemoteError(
                "config",
                f"remote.transfer is rsync, but rsync is not installed {where}; "
                "install it or set remote.transfer to auto",
            )
        return self.s.transfer != "scp" and local_has_it and remote_has_it

    def _copy(self, stage: str, source: str, target: str, cwd: str) -> None:
        """One transfer with rsync (when chosen) or scp, run in ``cwd`` (the local operand is relative to it);
        same resulting layout either way."""
        argv = rsync_argv(self.s, [source], target) if self.rsync else scp_argv(self.s, [source], target)
        self._check(stage, self._run(stage, argv, self.s.stage_timeout_s, cwd), self.s.stage_timeout_s)

    def compile(self) -> None:
        self.progress("compile", f"compiling {self.job.spec.kernel} on {self.host}")
        env = {
            "NEURON_FRAMEWORK_DEBUG": "1",
            "NKI_DEBUG_INFO": "True",
            "NKI_ARTIFACTS_DIR": f"{self.job_abs}/artifacts",
            "NEURON_RT_VISIBLE_CORES": str(self.s.neuron_core),
            "NEURON_PLATFORM_TARGET_OVERRIDE": self.s.platform_target,
            "NEURON_LOGICAL_NC_CONFIG": str(self.job.spec.lnc),
        }
        result = self._tool("compile", [self.s.python, HARNESS_NAME, SPEC_NAME], env)
        if result.cancelled:
            raise RemoteError("cancelled", "compile: cancelled")
        if result.timed_out or result.returncode != 0:
            rel = relative_kernel_path(self.job.kernel_file, self.job.local_root)
            remote_kernel = f"{self.job_abs}/{SOURCE_DIR}/{rel}"
            if result.timed_out:
                raise classify("compile", result, self.host, self.s.stage_timeout_s)
            raise compile_error(result, self.host, remote_kernel, str(self.job.kernel_file))

    def capture(self) -> None:
        self.progress("capture", "capturing the second execution with neuron-explorer")
        env = {
            "NEURON_RT_VISIBLE_CORES": str(self.s.neuron_core),
            "NEURON_LOGICAL_NC_CONFIG": str(self.job.spec.lnc),
        }
        argv = [
            "neuron-explorer",
            "capture",
            "-n",
            NEFF,
            "-s",
            NTFF,
            "--num-exec=2",
            "--profile-nth-exec=2",
            "--enable-dge-notifs",
        ]
        self._check("capture", self._tool("capture", argv, env), self.s.stage_timeout_s)

    def view(self) -> tuple[str, str]:
        """Process the capture; returns (remote output relative to the job dir, format)."""
        self.progress("view", "processing the profile (neuron-explorer view)")
        base = [
            "neuron-explorer",
            "view",
            "-n",
            NEFF,
            "-s",
            CAPTURED,
            "--nki-source-root",
            f"{self.job_abs}/{SOURCE_DIR}",
        ]
        first = self._tool("view", [*base, "--output-format", "parquet", "--output-file", PARQUET_OUT])
        if first.returncode == 0 and not first.timed_out and not first.cancelled:
            return PARQUET_OUT, "parquet"
        err = classify("view", first, self.host, self.s.stage_timeout_s)
        if first.cancelled or err.kind != "tool":
            self._check("view", first, self.s.stage_timeout_s)
        self.log(
            "neuron-explorer view could not write Parquet; retrying with --output-format json (older tools)"
        )
        second = self._tool("view", [*base, "--output-format", "json", "--output-file", JSON_OUT])
        if second.returncode != 0 and not second.cancelled and not second.timed_out:
            both = classify("view", second, self.host, self.s.stage_timeout_s)
            raise RemoteError(
                "tool",
                f"view failed on {self.host} for Parquet and JSON output",
                detail=f"parquet:\n{err.detail}\njson:\n{both.detail}",
            )
        self._check("view", second, self.s.stage_timeout_s)
        return JSON_OUT, "json"

    def download(self, remote_out: str, fmt: str) -> RemoteProfile:
        self.progress("download", "downloading the profile")
        final = cache.entry_dir(self.job.cache_root, self.job.kernel_file, self.job.spec.kernel, self.host)
        partial = cache.partial_dir(final)
        try:
            cwd, operand = local_operand(partial, directory=True)
            self._copy("download", remote_operand(self.s, f"{self.job_rel}/{remote_out}"), operand, cwd)
            if self.cancelled():
                raise RemoteError("cancelled", "download: cancelled")
            if self.kernel_text is not None:
                # the text the profile's line numbers refer to, so a later `profile compare` can follow
                # lines across edits made since (the local file will have changed by then)
                write_snapshot(partial, {str(self.job.kernel_file.resolve()): self.kernel_text})
            placed = cache.commit(partial, final)
        except BaseException:
            cache.discard(partial)
            raise
        return RemoteProfile(
            placed / remote_out, fmt, f"{self.job_abs}/{SOURCE_DIR}", self.job.local_root.resolve(), self.host
        )


def fetch_profile(
    job: RemoteJob, *, log: LogFn, progress: ProgressFn, cancelled: CancelledFn
) -> RemoteProfile:
    """Run every remote stage and return the downloaded profile (raises :class:`RemoteError`)."""
    session = _Session(job, log, progress, cancelled)
    try:
        progress("upload", f"connecting to {session.host}")
        session.connect()
        try:
            session.upload()
            session.compile()
            session.capture()
            remote_out, fmt = session.view()
            return session.download(remote_out, fmt)
        finally:
            session.clean()
    finally:
        session.disconnect()


def load_report(profile: RemoteProfile) -> ProfileReport:
    """Read the downloaded profile and map its remote paths onto the local kernel directory."""
    try:
        report = analyze(
            profile.path,
            fmt=profile.format,
            roots=[profile.local_source_dir],
            mappings={profile.remote_source_dir: str(profile.local_source_dir)},
        )
    except ProfileError as exc:
        raise RemoteError("tool", f"the downloaded profile {profile.path} is not readable: {exc}") from exc
    if not report.metrics.lines:
        raise RemoteError("no-source", f"{profile.host}: {NO_SOURCE_FLAGS}")
    problem = report.problem()
    if problem:
        raise RemoteError("no-source", problem)
    return report
