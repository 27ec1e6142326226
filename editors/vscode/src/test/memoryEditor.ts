// MemoryEditor stands in for VS Code's documents in the tests: it holds open
// buffers in memory, applies workspace/applyEdit the way VS Code does
// (versions checked, edits applied, one didChange sent), and saves only
// when told to. Positions are UTF-16 code units, VS Code's encoding.

import * as fs from 'node:fs';
import { pathToFileURL, fileURLToPath } from 'node:url';
import type { MessageConnection } from 'vscode-jsonrpc/node';

export interface Position {
  line: number;
  character: number;
}
export interface Range {
  start: Position;
  end: Position;
}
export interface TextEdit {
  range: Range;
  newText: string;
}

export interface ApplyWorkspaceEditParams {
  label?: string;
  edit: {
    documentChanges?: Array<{ textDocument: { uri: string; version: number | null }; edits: TextEdit[] }>;
    changes?: Record<string, TextEdit[]>;
  };
}

/** offsetAt converts an LSP position (UTF-16) to an index into text, clamping like VS Code. */
export function offsetAt(text: string, pos: Position): number {
  let start = 0;
  for (let line = 0; line < pos.line; line++) {
    const nl = text.indexOf('\n', start);
    if (nl < 0) return text.length;
    start = nl + 1;
  }
  let end = text.indexOf('\n', start);
  if (end < 0) end = text.length;
  if (end > start && text[end - 1] === '\r') end--;
  return Math.min(start + Math.max(0, pos.character), end);
}

/**
 * applyTextEdits applies edits that all refer to text as given (LSP
 * semantics), refusing overlapping ones. It returns the new text and the
 * edits in the order a didChange must list them (last first, so each
 * range is still valid when its turn comes).
 */
export function applyTextEdits(text: string, edits: TextEdit[]): { text: string; ordered: TextEdit[] } {
  const withOffsets = edits.map((e, i) => ({ e, i, start: offsetAt(text, e.range.start), end: offsetAt(text, e.range.end) }));
  withOffsets.sort((a, b) => a.start - b.start || a.end - b.end || a.i - b.i);
  for (let k = 1; k < withOffsets.length; k++) {
    if (withOffsets[k].start < withOffsets[k - 1].end) throw new Error('overlapping edits');
  }
  let out = text;
  for (let k = withOffsets.length - 1; k >= 0; k--) {
    const { e, start, end } = withOffsets[k];
    out = out.slice(0, start) + e.newText + out.slice(end);
  }
  return { text: out, ordered: withOffsets.reverse().map((x) => x.e) };
}

interface Doc {
  uri: string;
  path: string;
  text: string;
  version: number;
}

export class MemoryEditor {
  private readonly docs = new Map<string, Doc>();
  /** applyEdits records every workspace/applyEdit received. */
  readonly applyEdits: ApplyWorkspaceEditParams[] = [];

  constructor(private readonly conn: MessageConnection) {
    conn.onRequest('workspace/applyEdit', (p: ApplyWorkspaceEditParams) => this.applyWorkspaceEdit(p));
  }

  /** open reads the file from disk into a buffer and sends didOpen. */
  async open(path: string, languageId = 'plaintext'): Promise<string> {
    const uri = pathToFileURL(path).href;
    const text = fs.readFileSync(path, 'utf8');
    this.docs.set(uri, { uri, path, text, version: 1 });
    await this.conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId, version: 1, text } });
    return uri;
  }

  text(path: string): string | undefined {
    return this.doc(path)?.text;
  }

  version(path: string): number | undefined {
    return this.doc(path)?.version;
  }

  /** type is the user editing a buffer: edits applied and sent as didChange. */
  async type(path: string, edits: TextEdit[]): Promise<void> {
    const d = this.doc(path);
    if (!d) throw new Error(`${path} is not open`);
    await this.change(d, edits);
  }

  /** save writes the buffer to disk and sends didSave. */
  async save(path: string): Promise<void> {
    const d = this.doc(path);
    if (!d) throw new Error(`${path} is not open`);
    fs.writeFileSync(d.path, d.text);
    await this.conn.sendNotification('textDocument/didSave', { textDocument: { uri: d.uri } });
  }

  /** applyWorkspaceEdit does what VS Code does with workspace/applyEdit for open buffers. */
  async applyWorkspaceEdit(p: ApplyWorkspaceEditParams): Promise<{ applied: boolean; failureReason?: string }> {
    this.applyEdits.push(p);
    const changes: Array<{ uri: string; version: number | null; edits: TextEdit[] }> = [];
    for (const dc of p.edit.documentChanges ?? []) changes.push({ uri: dc.textDocument.uri, version: dc.textDocument.version, edits: dc.edits });
    for (const [uri, edits] of Object.entries(p.edit.changes ?? {})) changes.push({ uri, version: null, edits });
    for (const c of changes) {
      const d = this.docs.get(c.uri);
      if (!d) return { applied: false, failureReason: `${c.uri} is not open` };
      if (c.version !== null && c.version !== d.version) return { applied: false, failureReason: 'version mismatch' };
    }
    for (const c of changes) await this.change(this.docs.get(c.uri)!, c.edits);
    return { applied: true };
  }

  private async change(d: Doc, edits: TextEdit[]): Promise<void> {
    const { text, ordered } = applyTextEdits(d.text, edits);
    d.text = text;
    d.version++;
    await this.conn.sendNotification('textDocument/didChange', {
      textDocument: { uri: d.uri, version: d.version },
      contentChanges: ordered.map((e) => ({ range: e.range, text: e.newText })),
    });
  }

  private doc(path: string): Doc | undefined {
    for (const d of this.docs.values()) {
      if (d.path === path || fileURLToPath(d.uri) === path) return d;
    }
    return undefined;
  }
}
