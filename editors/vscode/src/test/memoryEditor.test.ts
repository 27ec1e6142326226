import * as assert from 'node:assert/strict';
import { test } from 'node:test';

import { applyTextEdits, offsetAt } from './memoryEditor';

const r = (l1: number, c1: number, l2: number, c2: number) => ({ start: { line: l1, character: c1 }, end: { line: l2, character: c2 } });

test('offsetAt counts UTF-16 code units and clamps like VS Code', () => {
  const text = 'a😀b\r\nxyz';
  assert.equal(offsetAt(text, { line: 0, character: 3 }), 3); // after the surrogate pair
  assert.equal(offsetAt(text, { line: 0, character: 99 }), 4); // end of line, before \r\n
  assert.equal(offsetAt(text, { line: 1, character: 1 }), 7);
  assert.equal(offsetAt(text, { line: 9, character: 0 }), text.length);
});

test('applyTextEdits applies edits against the original text and orders them for didChange', () => {
  const { text, ordered } = applyTextEdits('hello\nworld\n', [
    { range: r(0, 0, 0, 5), newText: 'goodbye' },
    { range: r(1, 5, 1, 5), newText: '!' },
  ]);
  assert.equal(text, 'goodbye\nworld!\n');
  assert.deepEqual(ordered.map((e) => e.newText), ['!', 'goodbye']);
  // Replaying ordered as sequential content changes gives the same text.
  let seq = 'hello\nworld\n';
  for (const e of ordered) seq = applyTextEdits(seq, [e]).text;
  assert.equal(seq, text);
  assert.throws(() => applyTextEdits('abc', [{ range: r(0, 0, 0, 2), newText: '' }, { range: r(0, 1, 0, 3), newText: '' }]), /overlapping/);
});
