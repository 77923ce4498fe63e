import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type CommandDeps, registerCommands } from '../../src/commands';
import { CREATE_ENV_COMMAND } from '../../src/privateEnvCommand';
import { CLIENT_COMMANDS } from '../../src/protocol.generated';
import { FakeVsCode } from '../support/fakeVscode';

describe('client commands', () => {
  it('registers every declared command and nothing else (server/protocol/commands.py)', () => {
    const fake = new FakeVsCode();
    // The handlers are not run: the other dependencies are never touched.
    const deps = { vs: fake.api() } as unknown as CommandDeps;
    registerCommands(deps);
    // extension.ts registers the environment command next to these, with its own dependencies.
    const registered = [...fake.registered, CREATE_ENV_COMMAND].sort();
    assert.deepEqual(registered, Object.values(CLIENT_COMMANDS).sort());
  });
});
