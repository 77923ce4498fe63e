/**
 * End-to-end in a real VS Code: NKI: Profile on Remote Trn2… against a real sshd on loopback whose host runs
 * the stand-in Neuron tools (tests/remote). The command uploads the kernel, compiles and captures it there,
 * downloads the profile and paints it: the bars must be on the kernel's body lines, labelled measured.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type RemoteHost, remoteUnavailable, startRemoteHost } from './remoteHost';
import { type Session, openSession } from './session';
import type { Workbench } from './workbench';

const KERNEL = 'add_act.py';

describe(
  'profile on a remote Trn2 host (loopback sshd, stand-in Neuron tools)',
  { timeout: 300_000, skip: remoteUnavailable() },
  () => {
    let host: RemoteHost;
    let session: Session;
    let wb: Workbench;

    before(async () => {
      host = startRemoteHost();
      // in the workspace from the start: a file written once the workbench is up may not reach the explorer
      const kernel = path.join(host.scratch, KERNEL);
      fs.writeFileSync(kernel, host.kernelSource);
      session = await openSession(
        { [KERNEL]: kernel },
        {
          trusted: true,
          settings: {
            'nki-studio.simulateOnSave': false,
            'nki-studio.heatmap.style': 'bars', // heatBars reads the full bars
            'nki-studio.remote.host': host.alias,
            'nki-studio.remote.sshConfig': host.sshConfig,
            'nki-studio.remote.envActivation': host.activation,
            'nki-studio.remote.workDir': path.join(host.scratch, 'remote'),
            'nki-studio.remote.cacheDir': path.join(host.scratch, 'cache'),
            'nki-studio.remote.timeout': 120,
          },
        },
      );
      ({ wb } = session);
    });

    after(async () => {
      await session?.close('remote-final');
      host?.stop();
    });

    it('profiles the kernel at the cursor on the host and paints the measured heat on its lines', async () => {
      await wb.openFile(KERNEL);
      await wb.goToLine(host.bodyLines[2]);
      await wb.runCommand('NKI: Profile on Remote Trn2…');
      const note = await wb.waitForNotification(
        new RegExp(`${host.alias}: profile loaded|Profile on ${host.alias} failed`),
        180_000,
      );
      assert.match(note, /profile loaded.*heat on 1 file/);
      await wb.page.waitForTimeout(500);
      const bars = await wb.heatBars();
      await wb.screenshot('remote-profile');
      assert.deepEqual([...bars.keys()], host.bodyLines);
      assert.match(await wb.statusBar(), /measured · /);
      assert.ok(
        fs.readdirSync(path.join(host.scratch, 'cache')).length > 0,
        'the profile was downloaded into the cache folder',
      );
    });
  },
);
