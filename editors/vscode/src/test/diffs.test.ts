import * as assert from 'node:assert/strict';
import { test } from 'node:test';

import { applyPatch, parseUnifiedDiff, proposedFiles, showAppliedChange, showProposedChange, splitLines } from '../protocol/diffs';

// A preview as the daemon writes it for an edit (tools/edittools.go editPreview).
const preview = `--- a/src/greet.go
+++ b/src/greet.go
@@ -1,5 +1,6 @@
 package greet
 
+// Greet greets.
 func Greet() string {
-\treturn "hi"
+\treturn "hello"
 }
`;
const greet = 'package greet\n\nfunc Greet() string {\n\treturn "hi"\n}\n';

test('parseUnifiedDiff reads headers and hunks by their counts', () => {
  const [f, ...rest] = parseUnifiedDiff(preview);
  assert.equal(rest.length, 0);
  assert.equal(f.oldPath, 'src/greet.go');
  assert.equal(f.newPath, 'src/greet.go');
  assert.equal(f.hunks.length, 1);
  assert.deepEqual(
    f.hunks[0].lines.map((l) => l.op),
    [' ', ' ', '+', ' ', '-', '+', ' '],
  );
});

test('applyPatch produces the proposed text', () => {
  const [f] = parseUnifiedDiff(preview);
  assert.equal(applyPatch(greet, f), 'package greet\n\n// Greet greets.\nfunc Greet() string {\n\treturn "hello"\n}\n');
});

test('applyPatch finds a hunk that moved, and refuses one that is gone', () => {
  const [f] = parseUnifiedDiff(preview);
  assert.equal(applyPatch('// header\n// more\n' + greet, f), '// header\n// more\npackage greet\n\n// Greet greets.\nfunc Greet() string {\n\treturn "hello"\n}\n');
  assert.equal(applyPatch(greet.replace('"hi"', '"hey"'), f), undefined);
});

test('removed lines that look like headers stay in their hunk', () => {
  const d = '--- a/x.md\n+++ b/x.md\n@@ -1,2 +1,1 @@\n--- not a header\n+++ b/neither\n';
  const files = parseUnifiedDiff(d);
  assert.equal(files.length, 1);
  // One removed line "-- not a header", one added "++ b/neither".
  assert.deepEqual(files[0].hunks[0].lines, [
    { op: '-', text: '-- not a header\n' },
    { op: '+', text: '++ b/neither\n' },
  ]);
  assert.equal(files[0].hunks[0].oldCount, 2);
});

test('no newline at end of file, CRLF lines, new and deleted files', () => {
  const noEOL = '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-hello\n\\ No newline at end of file\n+hello, world\n\\ No newline at end of file\n';
  assert.equal(applyPatch('hello', parseUnifiedDiff(noEOL)[0]), 'hello, world');

  const crlf = '--- a/w.txt\n+++ b/w.txt\n@@ -1,2 +1,2 @@\n one\r\n-two\r\n+2\r\n';
  assert.equal(applyPatch('one\r\ntwo\r\n', parseUnifiedDiff(crlf)[0]), 'one\r\n2\r\n');

  const created = '--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n';
  const [c] = parseUnifiedDiff(created);
  assert.equal(c.oldPath, null);
  assert.equal(applyPatch('', c), 'a\nb\n');

  const deleted = '--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n';
  const [d] = parseUnifiedDiff(deleted);
  assert.equal(d.newPath, null);
  assert.equal(applyPatch('bye\n', d), '');
});

test('splitLines keeps terminators', () => {
  assert.deepEqual(splitLines('a\nb\r\nc'), ['a\n', 'b\r\n', 'c']);
  assert.deepEqual(splitLines(''), []);
});

test('proposedFiles resolves paths against the root and reads the current text', async () => {
  const two = preview + '--- /dev/null\n+++ b/notes.txt\n@@ -0,0 +1 @@\n+note\n';
  const read = async (p: string) => (p === '/ws/src/greet.go' ? greet : undefined);
  const files = await proposedFiles(two, '/ws', read);
  assert.ok(files);
  assert.deepEqual(files.map((f) => [f.path, f.displayPath, f.original]), [
    ['/ws/src/greet.go', 'src/greet.go', greet],
    ['/ws/notes.txt', 'notes.txt', ''],
  ]);
  assert.equal(files[1].proposed, 'note\n');
});

test('showProposedChange always opens the diff editor, the proposal placed in the text as it is now', async () => {
  const shown: string[] = [];
  const ui = { openDiff: async (f: { path: string; proposed: string | null }, title: string) => void shown.push(`${f.path}|${f.proposed}|${title}`) };
  await showProposedChange(preview, 'Edit', '/ws', async () => greet, ui);
  // Typed in a context line: the change still lands where its removed line is.
  await showProposedChange(preview, 'Edit', '/ws', async () => 'package greet // typed\n\nfunc Greet() string {\n\treturn "hi"\n}\n', ui);
  // The changed lines themselves are gone: the file against itself, said so.
  await showProposedChange(preview, 'Edit', '/ws', async () => 'changed meanwhile\n', ui);
  await showProposedChange(preview, 'Edit', '/ws', async () => undefined, ui);
  assert.equal(shown.length, 4);
  assert.ok(shown[0].startsWith('/ws/src/greet.go|package greet\n\n// Greet greets.\n'), shown[0]);
  assert.ok(shown[1].includes('\treturn "hello"') && shown[1].includes('// typed') && shown[1].includes('(1 of 1 changes no longer fit') === false, shown[1]);
  assert.ok(shown[2].startsWith('/ws/src/greet.go|changed meanwhile\n|') && shown[2].includes('1 of 1 changes no longer fit'), shown[2]);
  assert.ok(shown[3].startsWith('/ws/src/greet.go|'), shown[3]);
});

test('showAppliedChange takes the edit back from the text as it is now', async () => {
  const shown: Array<{ original: string; proposed: string | null; title: string }> = [];
  const ui = { openDiff: async (f: { original: string; proposed: string | null }, title: string) => void shown.push({ original: f.original, proposed: f.proposed, title }) };
  const diff = 'Edited hello.txt\n```diff\n-1: hello\n+1: hello, world\n```';
  await showAppliedChange('/ws/hello.txt', diff, 'Edit', async () => 'hello, world\nTyped.\n', ui);
  assert.deepEqual(shown[0], { original: 'hello\nTyped.\n', proposed: 'hello, world\nTyped.\n', title: 'hello.txt: Edit' });
  await showAppliedChange('/ws/hello.txt', diff, 'Edit', async () => 'hi there\n', ui);
  assert.equal(shown[1].original, 'hi there\n');
  assert.ok(shown[1].title.includes('can no longer be taken apart'), shown[1].title);
});
