import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type * as vscode from 'vscode';
import { type RunServerCommand, WRITE_SPEC_CHOICE, addReference, ensureSpec } from '../../src/firstRun';
import type { ReferenceTemplate, SpecGuesses, SpecWrite } from '../../src/protocol.generated';
import { FakeEditor, FakeVsCode } from '../support/fakeVscode';

const URI = 'file:///w/k.py';
const GUESSES: SpecGuesses = {
  kernel: 'k',
  needed: true,
  parameters: [
    { name: 'a', value: 'float32[128,64]', source: 'asserts' },
    { name: 'b', value: 'float32[128,512]', source: 'example' },
  ],
};
const WRITTEN: SpecWrite = {
  edit: { line: 4, replace: false, text: '# nki-studio: simulate a=float32[128,64] b=bfloat16[4,4]\n' },
  problems: [],
};

/** A server double answering the first-run commands and recording each call. */
function server(answers: Record<string, unknown>): { run: RunServerCommand; calls: [string, unknown][] } {
  const calls: [string, unknown][] = [];
  const run: RunServerCommand = (command, args) => {
    calls.push([command, args]);
    return Promise.resolve(answers[command] ?? null);
  };
  return { run, calls };
}

function setUp(): { fake: FakeVsCode; doc: vscode.TextDocument } {
  const fake = new FakeVsCode();
  const doc = new FakeEditor(URI, 'import nki\n').document;
  return { fake, doc: doc as unknown as vscode.TextDocument };
}

describe('first simulation without a spec', () => {
  it('asks for each parameter pre-filled with the guess, then writes the spec the server built', async () => {
    const { fake, doc } = setUp();
    fake.inputBoxAnswer = (o) => (o.value === 'float32[128,512]' ? ' bfloat16[4,4] ' : o.value);
    fake.quickPickAnswer = (items) => items[0];
    const { run, calls } = server({ 'nki-studio.specGuesses': GUESSES, 'nki-studio.writeSpec': WRITTEN });
    assert.equal(await ensureSpec(fake.api(), run, doc, 'k'), true);
    assert.deepEqual(
      fake.inputBoxes.map((o) => [o.value, o.title]),
      [
        ['float32[128,64]', 'NKI: simulate k: shape and dtype of a (1 of 2)'],
        ['float32[128,512]', 'NKI: simulate k: shape and dtype of b (2 of 2)'],
      ],
    );
    assert.match(fake.inputBoxes[1].prompt ?? '', /an example: edit it/);
    assert.deepEqual(calls[1], ['nki-studio.writeSpec', [URI, 'k', { a: 'float32[128,64]', b: 'bfloat16[4,4]' }]]);
    const [edit] = fake.appliedEdits;
    assert.deepEqual(
      edit.edits.map((e) => [e.range.start.line, e.range.end.line, e.text]),
      [[4, 4, WRITTEN.edit?.text]],
    );
  });

  it('runs at once when the kernel has a spec, and stops on Escape or a value that does not parse', async () => {
    const { fake, doc } = setUp();
    const ready = server({ 'nki-studio.specGuesses': { ...GUESSES, needed: false } });
    assert.equal(await ensureSpec(fake.api(), ready.run, doc, 'k'), true);
    assert.equal(fake.inputBoxes.length, 0);

    fake.inputBoxAnswer = () => undefined;
    assert.equal(await ensureSpec(fake.api(), server({ 'nki-studio.specGuesses': GUESSES }).run, doc, 'k'), false);
    assert.equal(fake.inputBoxes.length, 1);

    fake.inputBoxAnswer = (o) => o.value;
    const bad = server({
      'nki-studio.specGuesses': GUESSES,
      'nki-studio.writeSpec': { edit: null, problems: ["b: unknown dtype 'bf'"] },
    });
    assert.equal(await ensureSpec(fake.api(), bad.run, doc, 'k'), false);
    assert.match(fake.errors[0], /cannot write the spec of k: b: unknown dtype 'bf'/);
    assert.equal(fake.appliedEdits.length, 0);
  });

  it('offers to write the spec and writes nothing when declined', async () => {
    const { fake, doc } = setUp();
    fake.inputBoxAnswer = (o) => o.value;
    let offered: unknown[] = [];
    fake.quickPickAnswer = (items) => {
      offered = [...items];
      return undefined;
    };
    const { run } = server({ 'nki-studio.specGuesses': GUESSES, 'nki-studio.writeSpec': WRITTEN });
    assert.equal(await ensureSpec(fake.api(), run, doc, 'k'), false);
    assert.deepEqual(offered, [{ label: WRITE_SPEC_CHOICE, detail: WRITTEN.edit?.text.trim() }]);
    assert.equal(fake.appliedEdits.length, 0);
  });

  it('adds the reference template by replacing the spec line', async () => {
    const { fake, doc } = setUp();
    const template: ReferenceTemplate = {
      function: 'ref_k',
      edit: {
        line: 3,
        replace: true,
        text: 'def ref_k(a):\n    ...\n\n\n# nki-studio: simulate a=f32[4] reference=ref_k\n',
      },
    };
    const { run } = server({ 'nki-studio.referenceTemplate': template });
    assert.equal(await addReference(fake.api(), run, doc, 'k'), 'ref_k');
    const [edit] = fake.appliedEdits;
    assert.deepEqual(
      edit.edits.map((e) => [e.range.start.line, e.range.end.line, e.text]),
      [[3, 4, template.edit.text]],
    );
    assert.match(fake.messages[0], /ref_k added above k/);
  });
});
