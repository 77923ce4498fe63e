import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { serverSettings } from '../../src/settings';

describe('settings the server reads and VS Code used to lack', () => {
  it('sends remote.transfer and profileIgnoreSchemaVersion', () => {
    const values: Record<string, unknown> = { 'remote.transfer': 'rsync', profileIgnoreSchemaVersion: true };
    const s = serverSettings({ get: <T>(key: string) => values[key] as T | undefined }, true, 'info');
    assert.deepEqual(s.remote, { transfer: 'rsync' });
    assert.equal(s.profileIgnoreSchemaVersion, true);
  });
});
