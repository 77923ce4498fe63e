import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findKernels, kernelAt } from '../../src/kernels';

const SOURCE = `import nki
import nki.language as nl

def helper(x):
    return x

# nki-studio: simulate a=float32[128,512]
@nki.jit
def add_kernel(a_input,
               b_input):
    out = nl.ndarray(a_input.shape, dtype=a_input.dtype, buffer=nl.shared_hbm)

# a comment at column 0 inside the body
    for i in nl.affine_range(4):
        pass
    return out

@nki.jit(mode="simulation")
@other_decorator
def second(x):
    return x

@jit
def third(x): return x
`;

describe('kernel discovery', () => {
  const kernels = findKernels(SOURCE);

  it('finds decorated kernels only, with their extent', () => {
    assert.deepEqual(
      kernels.map((k) => [k.name, k.startLine, k.defLine, k.endLine]),
      [
        ['add_kernel', 7, 8, 15],
        ['second', 17, 19, 20],
        ['third', 22, 23, 23],
      ],
    );
  });

  it('picks the kernel under the cursor, including its decorators', () => {
    assert.equal(kernelAt(kernels, 7)?.name, 'add_kernel');
    assert.equal(kernelAt(kernels, 13)?.name, 'add_kernel');
    assert.equal(kernelAt(kernels, 19)?.name, 'second');
    assert.equal(kernelAt(kernels, 3), undefined);
  });

  it('copes with half-typed text', () => {
    assert.deepEqual(findKernels('@nki.jit\n'), []);
    assert.deepEqual(
      findKernels('@nki.jit\ndef k(').map((k) => k.name),
      ['k'],
    );
  });
});
