import * as assert from 'node:assert/strict';
import { test } from 'node:test';

import { diagnosticsParams, maxDiagnostics } from '../protocol/diagnostics';

const at = (line: number) => ({ start: { line, character: 2 }, end: { line, character: 5 } });

test('diagnostics go out in LSP shape with the document version', () => {
  const p = diagnosticsParams('file:///w/a.ts', 7, [
    { range: at(3), severity: 0, source: 'ts', code: 2304, message: "Cannot find name 'x'." },
    { range: at(9), severity: 1, code: { value: 'no-unused' }, message: 'unused' },
    { range: at(1), severity: 3, message: 'hint' },
  ]);
  assert.equal(p.uri, 'file:///w/a.ts');
  assert.equal(p.version, 7);
  assert.deepEqual(p.diagnostics[0], { range: at(3), severity: 1, source: 'ts', code: 2304, message: "Cannot find name 'x'." });
  assert.deepEqual(p.diagnostics[1], { range: at(9), severity: 2, code: 'no-unused', message: 'unused' });
  assert.equal(p.diagnostics[2].severity, 4);
});

test('a report is bounded', () => {
  const many = Array.from({ length: maxDiagnostics + 50 }, (_, i) => ({ range: at(i), severity: 0, message: `m${i}` }));
  assert.equal(diagnosticsParams('file:///w/a.ts', 1, many).diagnostics.length, maxDiagnostics);
});
