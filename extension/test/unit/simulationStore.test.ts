import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderPanel } from '../../src/panel/render';
import { SimulationStore, textDigest } from '../../src/simulationStore';
import { statusText } from '../../src/statusItem';

const URI = 'file:///w/k.py';
const SIMULATED = 'def k(x):\n    return x\n';

/** A store over one open document whose text the test edits; `flips` records each staleness change. */
function storeOn(initial: string | undefined): { store: SimulationStore; edit(text: string): void; flips: string[] } {
  let text = initial;
  const store = new SimulationStore((uri) => (uri === URI ? text : undefined));
  const flips: string[] = [];
  store.onDidChangeStale((uri) => flips.push(uri));
  return {
    store,
    flips,
    edit(next) {
      text = next;
      store.textChanged(URI);
    },
  };
}

const resultOf = (text: string): Record<string, unknown> => ({
  uri: URI,
  kernel: 'k',
  result: { status: 'passed', message: '', textSha256: textDigest(text) },
});

describe('stale simulation results', () => {
  it("matches the server's digest: SHA-256 of the UTF-8 text", () => {
    // Python: hashlib.sha256("é\n".encode()).hexdigest(), as server/lsp/features/simulate.py computes it
    assert.equal(textDigest('é\n'), 'edd3a863872a04239eb29ad4bc12fc892b3d4ae57cc7e786a3697816f8e141c2');
  });

  it('are stale after an edit, and current again when the text returns to the one simulated', () => {
    const doc = storeOn(SIMULATED);
    const result = doc.store.add(resultOf(SIMULATED));
    assert.equal(doc.store.isStale(result), false);
    doc.edit(SIMULATED + '# a comment\n');
    assert.equal(doc.store.isStale(result), true);
    doc.edit(SIMULATED + '# a comment, longer\n');
    assert.deepEqual(doc.flips, [URI], 'told once, when it became stale');
    doc.edit(SIMULATED); // undo
    assert.equal(doc.store.isStale(result), false);
    assert.deepEqual(doc.flips, [URI, URI]);
  });

  it('are stale from the start when the text changed while the run was under way', () => {
    const doc = storeOn(SIMULATED + 'x = 1\n');
    assert.equal(doc.store.isStale(doc.store.add(resultOf(SIMULATED))), true);
  });

  it('are not judged without a digest (older server) or when the document is not open', () => {
    const noDigest = storeOn('other text');
    assert.equal(noDigest.store.isStale(noDigest.store.add({ uri: URI, status: 'passed' })), false);
    const closed = storeOn(undefined);
    const result = closed.store.add(resultOf(SIMULATED));
    closed.store.textChanged(URI); // e.g. a change event of a document closed since
    assert.equal(closed.store.isStale(result), false);
    assert.deepEqual(closed.flips, []);
  });

  it('a newer result replaces a stale one', () => {
    const doc = storeOn(SIMULATED);
    const old = doc.store.add(resultOf(SIMULATED));
    doc.edit('def k(x):\n    return x + 1\n');
    const fresh = doc.store.add(resultOf('def k(x):\n    return x + 1\n'));
    assert.equal(doc.store.isStale(fresh), false);
    assert.equal(doc.store.isStale(old), false, 'no longer the document result');
    assert.equal(doc.store.forUri(URI), fresh);
  });

  it('are marked in the panel and the status item', () => {
    const doc = storeOn(SIMULATED);
    const result = doc.store.add(resultOf(SIMULATED));
    doc.edit('changed');
    const stale = doc.store.isStale(result);
    const html = renderPanel({ simulation: result, simulationStale: stale }, 'n', 'x');
    assert.match(html, /<h2>Simulation <span class="pass">passed<\/span> <span class="stale">· stale<\/span><\/h2>/);
    assert.match(html, /From an earlier version of the file — re-run/);
    assert.doesNotMatch(renderPanel({ simulation: result }, 'n', 'x'), /class="stale"/);
    assert.match(statusText('running', true, result, stale).detail, /k passed · stale: from an earlier version/);
    assert.doesNotMatch(statusText('running', true, result, false).detail, /stale/);
  });
});
