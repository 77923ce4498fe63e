import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MANAGE_TRUST, SERVER_SIMULATE_COMMAND, lensesFor, refuseUntrusted } from '../../src/trust';
import { FakeVsCode } from '../support/fakeVscode';

const lens = (command: string) => ({ command: { title: command, command } });

describe('restricted mode', () => {
  it('offers no Simulate CodeLens in an untrusted workspace, and every lens in a trusted one', () => {
    const lenses = [lens(SERVER_SIMULATE_COMMAND), lens('nki-studio.other')];
    assert.deepEqual(lensesFor(lenses, false), [lens('nki-studio.other')]);
    assert.deepEqual(lensesFor(lenses, true), lenses);
    assert.equal(lensesFor(undefined, false), undefined);
  });

  it('refuses a run with a button that opens the Workspace Trust editor', async () => {
    const fake = new FakeVsCode();
    fake.isTrusted = false;
    fake.warningAnswer = MANAGE_TRUST;
    assert.equal(refuseUntrusted(fake.api()), true);
    assert.deepEqual(fake.warnings.at(-1)?.slice(1), [MANAGE_TRUST]);
    await new Promise((resolve) => setImmediate(resolve)); // the button's answer arrives asynchronously
    assert.deepEqual(fake.executed.at(-1), ['workbench.trust.manage']);
    fake.isTrusted = true;
    assert.equal(refuseUntrusted(fake.api()), false);
    assert.equal(fake.warnings.length, 1);
  });
});
