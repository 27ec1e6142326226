// lspTools.ts against an API that answers as VS Code's provider commands
// do: Uri, Position and Range objects, Location and LocationLink,
// WorkspaceEdit.entries(), DocumentSymbol with children and VS Code's
// 0-based SymbolKind. The real providers answer in the VS Code end-to-end
// test (e2e/lsp.mjs, gopls).

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ResponseError } from 'vscode-jsonrpc';
import { answerLspRequest, fillLspCapability, LspApi } from '../lspTools';

class Uri {
  constructor(
    readonly scheme: string,
    readonly fsPath: string,
    private readonly text: string,
  ) {}
  static parse(value: string, strict?: boolean): Uri {
    const m = /^([a-zA-Z][\w+.-]*):/.exec(value);
    if (!m) {
      if (strict) throw new Error(`[UriError]: Scheme is missing: {scheme: "", path: "${value}"}`);
      return Uri.file(value);
    }
    const scheme = m[1].toLowerCase();
    return new Uri(scheme, scheme === 'file' ? fileURLToPath(value) : value.slice(m[0].length), value);
  }
  static file(p: string): Uri {
    return new Uri('file', p, pathToFileURL(p).href);
  }
  toString(): string {
    return this.text;
  }
}

class Position {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
}

class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(l1: number, c1: number, l2: number, c2: number) {
    this.start = new Position(l1, c1);
    this.end = new Position(l2, c2);
  }
}

class Location {
  constructor(
    readonly uri: Uri,
    readonly range: Range,
  ) {}
}

class WorkspaceEdit {
  private readonly edits = new Map<string, [Uri, { range: Range; newText: string }[]]>();
  replace(uri: Uri, range: Range, newText: string): void {
    const e = this.edits.get(uri.toString()) ?? [uri, []];
    e[1].push({ range, newText });
    this.edits.set(uri.toString(), e);
  }
  entries(): [Uri, { range: Range; newText: string }[]][] {
    return [...this.edits.values()];
  }
}

// VS Code's SymbolKind: File 0, ..., Function 11, Variable 12.
const vsFunction = 11;
const vsVariable = 12;

interface Call {
  command: string;
  args: unknown[];
}

function workspace(): { root: string; main: string; other: string; api: LspApi; calls: Call[]; answers: Map<string, (...args: any[]) => unknown> } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'lsptools-'));
  const main = path.join(root, 'main.go');
  const other = path.join(root, 'other.go');
  fs.writeFileSync(main, 'package main\n');
  fs.writeFileSync(other, 'package main\n');
  const calls: Call[] = [];
  const answers = new Map<string, (...args: any[]) => unknown>();
  const api = {
    commands: {
      executeCommand: async (command: string, ...args: unknown[]) => {
        calls.push({ command, args });
        const answer = answers.get(command);
        return answer ? answer(...args) : undefined;
      },
    },
    workspace: { workspaceFolders: [{ uri: Uri.file(root) }], textDocuments: [{ uri: Uri.file(main), version: 7 }] },
    Uri,
    Position,
  } as unknown as LspApi;
  return { root, main, other, api, calls, answers };
}

const at = (line: number, character: number) => ({ line, character });
const span = (l1: number, c1: number, l2: number, c2: number) => ({ start: at(l1, c1), end: at(l2, c2) });

test('capability: experimental.cline.lsp names the four, beside what is there', () => {
  const caps: { experimental?: unknown } = { experimental: { other: 1, cline: { approvals: true } } };
  fillLspCapability(caps);
  assert.deepEqual(caps.experimental, { other: 1, cline: { approvals: true, lsp: ['references', 'definition', 'rename', 'documentSymbols'] } });
  const bare: { experimental?: unknown } = {};
  fillLspCapability(bare);
  assert.deepEqual(bare.experimental, { cline: { lsp: ['references', 'definition', 'rename', 'documentSymbols'] } });
});

test('references: VS Code Locations as LSP Locations, asked with a Uri and a Position', async () => {
  const w = workspace();
  const mainUri = pathToFileURL(w.main).href;
  const otherUri = pathToFileURL(w.other).href;
  w.answers.set('vscode.executeReferenceProvider', () => [
    new Location(Uri.file(w.main), new Range(2, 5, 2, 10)),
    new Location(Uri.file(w.other), new Range(2, 28, 2, 33)),
  ]);
  w.answers.set('vscode.executeDefinitionProvider', () => [
    { targetUri: Uri.file(w.main), targetRange: new Range(2, 0, 2, 35), targetSelectionRange: new Range(2, 5, 2, 10) },
  ]);
  const params = { textDocument: { uri: mainUri }, position: at(2, 6), context: { includeDeclaration: true } };
  assert.deepEqual(await answerLspRequest(w.api, { method: 'textDocument/references', params }), {
    result: [
      { uri: mainUri, range: span(2, 5, 2, 10) },
      { uri: otherUri, range: span(2, 28, 2, 33) },
    ],
  });
  const [call] = w.calls;
  assert.equal(call.command, 'vscode.executeReferenceProvider');
  assert.ok(call.args[0] instanceof Uri && (call.args[0] as Uri).fsPath === w.main);
  assert.ok(call.args[1] instanceof Position);
  assert.deepEqual({ ...(call.args[1] as Position) }, at(2, 6));

  // VS Code's command always includes the declaration: without it, the
  // definition's place is left out.
  const without = { ...params, context: { includeDeclaration: false } };
  assert.deepEqual(await answerLspRequest(w.api, { method: 'textDocument/references', params: without }), {
    result: [{ uri: otherUri, range: span(2, 28, 2, 33) }],
  });
});

test('definition: Locations and LocationLinks as LSP Locations (the link at its name)', async () => {
  const w = workspace();
  w.answers.set('vscode.executeDefinitionProvider', () => [
    new Location(Uri.file(w.other), new Range(1, 0, 1, 4)),
    { originSelectionRange: new Range(4, 18, 4, 23), targetUri: Uri.file(w.main), targetRange: new Range(2, 0, 2, 35), targetSelectionRange: new Range(2, 5, 2, 10) },
    { targetUri: Uri.file(w.main), targetRange: new Range(3, 0, 3, 9) },
  ]);
  const res = await answerLspRequest(w.api, { method: 'textDocument/definition', params: { textDocument: { uri: pathToFileURL(w.main).href }, position: at(4, 19) } });
  assert.deepEqual(res, {
    result: [
      { uri: pathToFileURL(w.other).href, range: span(1, 0, 1, 4) },
      { uri: pathToFileURL(w.main).href, range: span(2, 5, 2, 10) },
      { uri: pathToFileURL(w.main).href, range: span(3, 0, 3, 9) },
    ],
  });
  w.answers.delete('vscode.executeDefinitionProvider');
  assert.deepEqual(await answerLspRequest(w.api, { method: 'textDocument/definition', params: { textDocument: { uri: pathToFileURL(w.main).href }, position: at(0, 0) } }), { result: [] });
});

test('rename: the WorkspaceEdit as documentChanges, versioned where the document is open', async () => {
  const w = workspace();
  w.answers.set('vscode.executeDocumentRenameProvider', (_uri: Uri, _pos: Position, newName: string) => {
    const e = new WorkspaceEdit();
    e.replace(Uri.file(w.main), new Range(2, 5, 2, 10), newName);
    e.replace(Uri.file(w.main), new Range(4, 18, 4, 23), newName);
    e.replace(Uri.file(w.other), new Range(2, 28, 2, 33), newName);
    return e;
  });
  const res = await answerLspRequest(w.api, {
    method: 'textDocument/rename',
    params: { textDocument: { uri: pathToFileURL(w.main).href }, position: at(2, 6), newName: 'salute' },
  });
  assert.deepEqual(res, {
    result: {
      documentChanges: [
        {
          textDocument: { uri: pathToFileURL(w.main).href, version: 7 },
          edits: [
            { range: span(2, 5, 2, 10), newText: 'salute' },
            { range: span(4, 18, 4, 23), newText: 'salute' },
          ],
        },
        { textDocument: { uri: pathToFileURL(w.other).href, version: null }, edits: [{ range: span(2, 28, 2, 33), newText: 'salute' }] },
      ],
    },
  });
  assert.deepEqual(w.calls[0].args.slice(2), ['salute']);

  // No provider: no edit.
  w.answers.delete('vscode.executeDocumentRenameProvider');
  assert.deepEqual(await answerLspRequest(w.api, { method: 'textDocument/rename', params: { textDocument: { uri: pathToFileURL(w.main).href }, position: at(0, 0), newName: 'x' } }), { result: null });
});

test('documentSymbols: kinds in LSP numbering, children nested; flat providers as SymbolInformation', async () => {
  const w = workspace();
  const mainUri = pathToFileURL(w.main).href;
  w.answers.set('vscode.executeDocumentSymbolProvider', () => [
    {
      name: 'greet',
      detail: 'func() string',
      kind: vsFunction,
      tags: [],
      range: new Range(2, 0, 2, 35),
      selectionRange: new Range(2, 5, 2, 10),
      children: [{ name: 'x', detail: '', kind: vsVariable, tags: [1], range: new Range(2, 20, 2, 21), selectionRange: new Range(2, 20, 2, 21), children: [] }],
    },
  ]);
  const params = { textDocument: { uri: mainUri } };
  assert.deepEqual(await answerLspRequest(w.api, { method: 'textDocument/documentSymbol', params }), {
    result: [
      {
        name: 'greet',
        detail: 'func() string',
        kind: 12,
        range: span(2, 0, 2, 35),
        selectionRange: span(2, 5, 2, 10),
        children: [{ name: 'x', kind: 13, tags: [1], range: span(2, 20, 2, 21), selectionRange: span(2, 20, 2, 21), children: [] }],
      },
    ],
  });
  assert.equal(w.calls[0].args.length, 1, 'the document symbol command takes the Uri only');
  w.answers.set('vscode.executeDocumentSymbolProvider', () => [{ name: 'greet', kind: vsFunction, containerName: 'main', location: new Location(Uri.file(w.main), new Range(2, 5, 2, 10)) }]);
  assert.deepEqual(await answerLspRequest(w.api, { method: 'textDocument/documentSymbol', params }), {
    result: [{ name: 'greet', kind: 12, location: { uri: mainUri, range: span(2, 5, 2, 10) }, containerName: 'main' }],
  });
});

test('bad requests get an error that names what is wrong, and no provider is asked', async () => {
  const w = workspace();
  const main = pathToFileURL(w.main).href;
  fs.symlinkSync('/etc/hostname', path.join(w.root, 'link.go'));
  const refs = (textDocument: unknown, position: unknown = at(0, 0)) => ({ method: 'textDocument/references', params: { textDocument, position } });
  const cases: [string, unknown, number, string][] = [
    ['another method', { method: 'workspace/executeCommand', params: { command: 'x' } }, -32601, 'is not one of'],
    ['no method', {}, -32601, 'is not one of'],
    ['not an object', 'textDocument/references', -32601, 'is not one of'],
    ['no params', { method: 'textDocument/references' }, -32602, 'params must be an object'],
    ['no textDocument', { method: 'textDocument/documentSymbol', params: {} }, -32602, 'textDocument.uri must be a string'],
    ['a uri that is a number', refs({ uri: 3 }), -32602, 'textDocument.uri must be a string'],
    ['no scheme', refs({ uri: w.main }), -32602, 'is not a URI'],
    ['untitled:', refs({ uri: 'untitled:Untitled-1' }), -32602, 'is not a file: URI'],
    ['https:', refs({ uri: 'https://example.com/main.go' }), -32602, 'is not a file: URI'],
    ['outside the workspace', refs({ uri: 'file:///etc/hostname' }), -32602, 'is outside the workspace folders'],
    ['a .. out', refs({ uri: pathToFileURL(w.root).href + '/../' + path.basename(w.root) + '-not/x.go' }), -32602, 'does not exist'],
    ['a link out', refs({ uri: pathToFileURL(path.join(w.root, 'link.go')).href }), -32602, 'is outside the workspace folders'],
    ['a missing file', refs({ uri: pathToFileURL(path.join(w.root, 'gone.go')).href }), -32602, 'does not exist'],
    ['no position', { method: 'textDocument/definition', params: { textDocument: { uri: main } } }, -32602, 'params.position must be'],
    ['a negative line', refs({ uri: main }, at(-1, 0)), -32602, 'params.position must be'],
    ['a fractional character', refs({ uri: main }, at(0, 1.5)), -32602, 'params.position must be'],
    ['a string line', refs({ uri: main }, { line: '1', character: 0 }), -32602, 'params.position must be'],
    ['rename without newName', { method: 'textDocument/rename', params: { textDocument: { uri: main }, position: at(0, 0) } }, -32602, 'newName must be a non-empty string'],
    ['rename to ""', { method: 'textDocument/rename', params: { textDocument: { uri: main }, position: at(0, 0), newName: '' } }, -32602, 'newName must be a non-empty string'],
  ];
  for (const [name, req, code, text] of cases) {
    const res = await answerLspRequest(w.api, req);
    assert.ok(res instanceof ResponseError, `${name}: ${JSON.stringify(res)}`);
    assert.equal(res.code, code, name);
    assert.match(res.message, new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')), name);
  }
  assert.deepEqual(w.calls, [], 'a provider was asked for a bad request');
});

test("a provider's failure is the request's error, with its message", async () => {
  const w = workspace();
  w.answers.set('vscode.executeDocumentRenameProvider', () => {
    throw new Error("The element can't be renamed.");
  });
  const res = await answerLspRequest(w.api, {
    method: 'textDocument/rename',
    params: { textDocument: { uri: pathToFileURL(w.main).href }, position: at(0, 0), newName: 'x' },
  });
  assert.ok(res instanceof ResponseError);
  assert.equal(res.code, -32603);
  assert.equal(res.message, "textDocument/rename: The element can't be renamed.");
});
