/**
 * The Trn2 host of the remote-profiling tests, for the end-to-end tests: a real OpenSSH server on 127.0.0.1
 * with the stand-in Neuron tools (`neuron-explorer`, the `nki` package), started by tests/remote/sshd.py
 * through the project's Python, so both test suites use one set-up. Stopped by the PID sshd wrote.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ROOT } from './codeServer';
import { projectPython } from './fixtures';

export interface RemoteHost {
  /** The ssh config alias of the host (`Host` entry in sshConfig). */
  alias: string;
  sshConfig: string;
  /** Shell text that puts the stand-in tools first on the host, as a user's venv activation would. */
  activation: string;
  /** Scratch folder for the remote work directory and the downloaded profiles. */
  scratch: string;
  /** The kernel of tests/remote and the 1-based lines of its body (what a profile attributes time to). */
  kernelSource: string;
  bodyLines: number[];
  stop(): void;
}

/** Why the remote test cannot run here: starting sshd needs root, as for tests/remote. */
export function remoteUnavailable(): string | undefined {
  return process.getuid?.() === 0
    ? undefined
    : 'the remote-profile test starts sshd on loopback, which needs root (as tests/remote)';
}

export function startRemoteHost(): RemoteHost {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'nki-e2e-remote-'));
  const code = [
    'import json, sys',
    'from pathlib import Path',
    'sys.path.insert(0, sys.argv[1])',
    'import conftest, sshd',
    'h = sshd.start(Path(sys.argv[2]))',
    'print(json.dumps({"alias": sshd.ALIAS, "sshConfig": str(h.ssh_config), "activation": h.activation(), "pidFile": str(h.root / "sshd.pid"),',
    '                  "kernelSource": conftest.KERNEL_SOURCE, "bodyLines": list(conftest.BODY_LINES)}))',
  ].join('\n');
  const out = execFileSync(
    projectPython(),
    ['-c', code, path.join(ROOT, 'tests', 'remote'), path.join(scratch, 'sshd')],
    { encoding: 'utf8' },
  );
  const info = JSON.parse(out.trim().split('\n').pop() ?? '{}') as Omit<RemoteHost, 'scratch' | 'stop'> & {
    pidFile: string;
  };
  return {
    ...info,
    scratch,
    stop: () => {
      try {
        process.kill(Number(fs.readFileSync(info.pidFile, 'utf8').trim()), 'SIGTERM');
      } catch {
        // already gone
      }
      fs.rmSync(scratch, { recursive: true, force: true });
    },
  };
}
