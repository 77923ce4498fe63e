"""Stand-in ``neuron-explorer`` (capture / view) for the remote-profiling tests.

Checks its arguments and environment the way the Neuron Explorer docs describe them (shared/profile-formats
README §2.1-2.3) and writes a schema-faithful profile of the kernel named in the stand-in NEFF, using the
profile fixture generator (tests/profile/fixturegen.py). Knobs (environment, set by the test's activation
command): STANDIN_FAIL=capture|view (exit non-zero with a message on stderr), STANDIN_CAPTURE_SLEEP=S and
STANDIN_PID_FILE=F (capture sleeps, after writing its PID to F), STANDIN_OLD_TOOL=1 (view rejects Parquet),
STANDIN_CALLS=F (append each argv as a JSON line).
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "profile"))

import fixturegen
from fixturewriters import write_legacy_json, write_parquet


def fail(message: str, code: int = 2) -> None:
    print(f"neuron-explorer: error: {message}", file=sys.stderr)
    raise SystemExit(code)


def read_neff(path: str) -> dict:
    try:
        neff = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        fail(f"cannot read NEFF {path!r}")
    if neff.get("standin_neff") != 1:
        fail(f"{path}: not a NEFF")
    return neff


def capture(args: argparse.Namespace) -> None:
    if os.environ.get("STANDIN_FAIL") == "capture":
        fail("nrt_init failed: No neuron device available (stand-in failure)", 5)
    if "NEURON_RT_VISIBLE_CORES" not in os.environ:
        fail("stand-in check: NEURON_RT_VISIBLE_CORES should pin the NeuronCore when profiling")
    neff = read_neff(args.neff)
    if not args.session_file.endswith(".ntff"):
        fail("session file must be an .ntff")
    if not 1 <= args.profile_nth_exec <= args.num_exec:
        fail("--profile-nth-exec must be within --num-exec")
    if os.environ.get("STANDIN_CAPTURE_SLEEP"):
        Path(os.environ["STANDIN_PID_FILE"]).write_text(str(os.getpid()))
        time.sleep(float(os.environ["STANDIN_CAPTURE_SLEEP"]))
    stem = args.session_file[: -len(".ntff")]
    # naming rule (README §2.1): --num-exec=N --profile-nth-exec=M -> <stem>_exec_M.ntff; N=1 -> the name as given
    name = args.session_file if args.num_exec == 1 else f"{stem}_exec_{args.profile_nth_exec}.ntff"
    Path(name).write_text(
        json.dumps(
            {"neff": os.path.abspath(args.neff), "kernel": neff["kernel"], "dge": args.enable_dge_notifs}
        ),
        encoding="utf-8",
    )
    print(f"captured execution {args.profile_nth_exec} of {args.num_exec} into {name}")


def view(args: argparse.Namespace) -> None:
    if os.environ.get("STANDIN_FAIL") == "view":
        fail("view: internal error while processing the NTFF (stand-in failure)", 3)
    fmt = args.output_format
    if os.environ.get("STANDIN_OLD_TOOL") == "1" and fmt == "parquet":
        fail("invalid value for --output-format: parquet (choose from json, summary-json, perfetto)")
    neff = read_neff(args.neff_path)
    try:
        session = json.loads(Path(args.session_file).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        fail(f"cannot read NTFF {args.session_file!r}")
    if session["neff"] != os.path.abspath(args.neff_path):
        fail("the NTFF was not captured from this NEFF")
    if not args.output_file:
        fail("--output-file is required for this stand-in (no UI server)")
    kernel_file = Path(neff["kernel_file"])
    if args.nki_source_root and not kernel_file.is_relative_to(Path(args.nki_source_root).resolve()):
        fail(f"--nki-source-root {args.nki_source_root}: the kernel source {kernel_file} is not under it")
    tl = fixturegen.kernel_file_timeline(
        kernel_file, remote_dir=str(kernel_file.parent), n_instructions=200, seed=3
    )
    if not neff["debug_info"]:
        tl.location = [None] * tl.n  # compiled without NKI_DEBUG_INFO: no source locations
    if fmt == "parquet":
        write_parquet(tl, Path(args.output_file))
    elif fmt == "json":
        write_legacy_json(tl, Path(args.output_file))
    else:
        fail(f"stand-in does not write {fmt}")


def main() -> None:
    if os.environ.get("STANDIN_CALLS"):
        with open(os.environ["STANDIN_CALLS"], "a", encoding="utf-8") as f:
            f.write(json.dumps({"argv": sys.argv[1:], "cwd": os.getcwd()}) + "\n")
    p = argparse.ArgumentParser(prog="neuron-explorer")
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("capture")
    c.add_argument("-n", "--neff", default="file.neff")
    c.add_argument("-s", "--session-file", default="profile.ntff")
    c.add_argument("--num-exec", type=int, default=1)
    c.add_argument("--profile-nth-exec", type=int, default=1)
    c.add_argument("--enable-dge-notifs", action="store_true")
    v = sub.add_parser("view")
    v.add_argument("-n", "--neff-path", required=True)
    v.add_argument("-s", "--session-file", required=True)
    v.add_argument(
        "--output-format",
        choices=("parquet", "summary-json", "summary-text", "json", "perfetto"),
        default="parquet",
    )
    v.add_argument("--output-file")
    v.add_argument("--nki-source-root")
    args = p.parse_args()
    if args.cmd == "capture":
        capture(args)
    else:
        view(args)


if __name__ == "__main__":
    main()
