import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { changesLines, shiftLine, shiftLines } from '../../src/heat/shift';

const at = (line: number) => ({ line });

describe('edit shifting', () => {
  it('moves lines below an inserted line down', () => {
    const change = { startLine: 3, startCharacter: 10, endLine: 3, text: '\n    x = 1' };
    assert.deepEqual(
      shiftLines([at(1), at(3), at(5)], [change]).map((l) => l.line),
      [1, 3, 6],
    );
  });

  it('moves the line itself when text ending in a newline is inserted at column 0', () => {
    assert.equal(shiftLine(4, { startLine: 4, startCharacter: 0, endLine: 4, text: 'import os\n' }), 5);
    assert.equal(shiftLine(4, { startLine: 4, startCharacter: 2, endLine: 4, text: 'a\n' }), 4);
  });

  it('moves the line when Enter is pressed at the start of its code (in the indentation)', () => {
    // "    x = nl.load(a)": Enter with the cursor before "x" inserts a newline and the indentation
    const enter = { startLine: 4, startCharacter: 4, endLine: 4, text: '\n    ', indentBefore: true };
    assert.deepEqual(
      shiftLines([at(3), at(4), at(9)], [enter]).map((l) => l.line),
      [3, 5, 10],
    );
    // some editors replace the indentation instead: the same edit from column 0
    assert.equal(shiftLine(4, { startLine: 4, startCharacter: 0, endLine: 4, text: '\n    ' }), 5);
    // Enter in the middle of the code splits the line: the heat stays with the statement's first line
    assert.equal(
      shiftLine(4, { startLine: 4, startCharacter: 12, endLine: 4, text: '\n        ', indentBefore: false }),
      4,
    );
    // with the indentation unknown, a newline inserted after column 0 leaves the line where it is
    assert.equal(shiftLine(4, { startLine: 4, startCharacter: 4, endLine: 4, text: '\n    ' }), 4);
  });

  it('drops lines whose content was deleted and moves the rest up', () => {
    const change = { startLine: 2, startCharacter: 0, endLine: 5, text: '' };
    assert.deepEqual(
      shiftLines([at(1), at(2), at(3), at(5), at(9)], [change]).map((l) => l.line),
      [1, 2, 6],
    );
  });

  it('applies several changes of one event (reported against the same document state)', () => {
    const changes = [
      { startLine: 1, startCharacter: 0, endLine: 1, text: 'a\n' },
      { startLine: 6, startCharacter: 0, endLine: 8, text: '' },
    ];
    assert.deepEqual(
      shiftLines([at(0), at(3), at(7), at(10)], changes).map((l) => l.line),
      [0, 4, 9],
    );
  });

  it('keeps everything for typing within a line', () => {
    const change = { startLine: 2, startCharacter: 4, endLine: 2, text: 'abc' };
    assert.equal(changesLines(change), false);
    assert.deepEqual(
      shiftLines([at(2), at(3)], [change]).map((l) => l.line),
      [2, 3],
    );
  });

  it('keeps the other fields of shifted items', () => {
    const [moved] = shiftLines(
      [{ line: 5, busy_ns: 7 }],
      [{ startLine: 0, startCharacter: 0, endLine: 0, text: '\n\n' }],
    );
    assert.deepEqual(moved, { line: 7, busy_ns: 7 });
  });
});
