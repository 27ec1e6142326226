// The editor's language servers as the agent's tools (PROTOCOL.md §11):
// the daemon asks `cline/lspRequest {method, params}` in LSP shapes, and
// VS Code's own providers answer it (whatever extension supplies them:
// gopls through the Go extension, the built-in TypeScript features, ...),
// through the `vscode.execute*Provider` commands. Their VS Code types are
// turned back into LSP shapes here: 0-based positions in UTF-16 code units
// (VS Code's own counting, and the only encoding vscode-languageclient
// offers the daemon), symbol kinds shifted to LSP's 1-based numbering,
// workspace edits as versioned documentChanges.
//
// The VS Code API is a parameter, not an import, so that the conversions
// are tested in plain Node against an API that answers as VS Code does.

import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as vscode from 'vscode';
import { ErrorCodes, ResponseError } from 'vscode-jsonrpc';

export const lspRequestMethod = 'cline/lspRequest';

/** lspMethods maps the capability's names to the LSP method each stands for. */
export const lspMethods = {
  references: 'textDocument/references',
  definition: 'textDocument/definition',
  rename: 'textDocument/rename',
  documentSymbols: 'textDocument/documentSymbol',
} as const;

/**
 * fillLspCapability declares experimental.cline.lsp: VS Code runs the
 * provider commands for every language, and answers none where no
 * extension provides them.
 */
export function fillLspCapability(caps: { experimental?: unknown }): void {
  const experimental = (caps.experimental && typeof caps.experimental === 'object' ? caps.experimental : {}) as Record<string, unknown>;
  const cline = (experimental.cline && typeof experimental.cline === 'object' ? experimental.cline : {}) as Record<string, unknown>;
  caps.experimental = { ...experimental, cline: { ...cline, lsp: Object.keys(lspMethods) } };
}

/** LspApi is the part of the vscode module the answers use. */
export interface LspApi {
  commands: { executeCommand<T>(command: string, ...rest: unknown[]): Thenable<T> };
  workspace: {
    readonly workspaceFolders: readonly { readonly uri: vscode.Uri }[] | undefined;
    readonly textDocuments: readonly { readonly uri: vscode.Uri; readonly version: number }[];
  };
  Uri: { parse(value: string, strict?: boolean): vscode.Uri };
  Position: new (line: number, character: number) => vscode.Position;
}

export interface LspPosition {
  line: number;
  character: number;
}
export interface LspRange {
  start: LspPosition;
  end: LspPosition;
}
export interface LspLocation {
  uri: string;
  range: LspRange;
}
export interface LspTextEdit {
  range: LspRange;
  newText: string;
}
export interface LspWorkspaceEdit {
  documentChanges: { textDocument: { uri: string; version: number | null }; edits: LspTextEdit[] }[];
}

type Params = Record<string, unknown>;

function invalid(message: string): ResponseError<void> {
  return new ResponseError(ErrorCodes.InvalidParams, `cline/lspRequest: ${message}`);
}

function position(p: vscode.Position): LspPosition {
  return { line: p.line, character: p.character };
}

function range(r: vscode.Range): LspRange {
  return { start: position(r.start), end: position(r.end) };
}

function location(l: vscode.Location | vscode.LocationLink): LspLocation {
  if ('targetUri' in l) return { uri: l.targetUri.toString(), range: range(l.targetSelectionRange ?? l.targetRange) };
  return { uri: l.uri.toString(), range: range(l.range) };
}

function sameLocation(a: LspLocation, b: LspLocation): boolean {
  return a.uri === b.uri && JSON.stringify(a.range) === JSON.stringify(b.range);
}

/** documentSymbol is LSP's DocumentSymbol, or SymbolInformation for a flat provider's. */
function documentSymbol(s: vscode.DocumentSymbol | vscode.SymbolInformation): unknown {
  // VS Code's SymbolKind counts from 0 (File), LSP's from 1.
  const kind = s.kind + 1;
  const tags = s.tags?.length ? { tags: [...s.tags] } : {};
  if ('selectionRange' in s && 'children' in s) {
    return {
      name: s.name,
      ...(s.detail ? { detail: s.detail } : {}),
      kind,
      ...tags,
      range: range(s.range),
      selectionRange: range(s.selectionRange),
      children: (s.children ?? []).map(documentSymbol),
    };
  }
  const info = s as vscode.SymbolInformation;
  return { name: info.name, kind, ...tags, location: location(info.location), ...(info.containerName ? { containerName: info.containerName } : {}) };
}

/** workspaceEdit is a rename's edit as versioned documentChanges. */
function workspaceEdit(api: LspApi, edit: vscode.WorkspaceEdit): LspWorkspaceEdit {
  const documentChanges = edit.entries().map(([uri, edits]) => {
    const key = uri.toString();
    const doc = api.workspace.textDocuments.find((d) => d.uri.toString() === key);
    return {
      // The version the provider saw: the daemon refuses the edit if the
      // buffer has moved on since.
      textDocument: { uri: key, version: doc ? doc.version : null },
      edits: edits.map((e) => {
        if (typeof (e as vscode.TextEdit).newText !== 'string') throw new ResponseError(ErrorCodes.InternalError, `the rename of ${key} is not text edits`);
        return { range: range(e.range), newText: (e as vscode.TextEdit).newText };
      }),
    };
  });
  return { documentChanges };
}

/** realpath is the path with every link resolved, or undefined when it does not exist. */
function realpath(p: string): string | undefined {
  try {
    return fs.realpathSync(p);
  } catch {
    return undefined;
  }
}

/**
 * documentUri is params.textDocument.uri, checked: a file: URI of a file
 * that lies, links resolved, in a workspace folder.
 */
function documentUri(api: LspApi, params: Params): vscode.Uri {
  const td = params.textDocument as { uri?: unknown } | undefined;
  const raw = td && typeof td === 'object' ? td.uri : undefined;
  if (typeof raw !== 'string') throw invalid('params.textDocument.uri must be a string');
  let uri: vscode.Uri;
  try {
    uri = api.Uri.parse(raw, true);
  } catch {
    throw invalid(`${JSON.stringify(raw)} is not a URI`);
  }
  if (uri.scheme !== 'file') throw invalid(`${JSON.stringify(raw)} is not a file: URI`);
  const file = realpath(uri.fsPath);
  if (!file) throw invalid(`${uri.fsPath} does not exist`);
  const inside = (api.workspace.workspaceFolders ?? []).some((f) => {
    const root = f.uri.scheme === 'file' ? realpath(f.uri.fsPath) : undefined;
    return root !== undefined && (file === root || file.startsWith(root.endsWith(path.sep) ? root : root + path.sep));
  });
  if (!inside) throw invalid(`${uri.fsPath} is outside the workspace folders`);
  return uri;
}

function documentPosition(api: LspApi, params: Params): vscode.Position {
  const p = params.position as { line?: unknown; character?: unknown } | undefined;
  const ok = (n: unknown) => typeof n === 'number' && Number.isInteger(n) && n >= 0;
  if (!p || typeof p !== 'object' || !ok(p.line) || !ok(p.character)) {
    throw invalid('params.position must be {line, character}, 0-based integers');
  }
  return new api.Position(p.line as number, p.character as number);
}

/**
 * answerLspRequest answers one cline/lspRequest with what VS Code's
 * providers say, in LSP shapes ({result: null} when none answers); a bad
 * request, or a provider's failure, is a JSON-RPC error.
 */
export async function answerLspRequest(api: LspApi, req: unknown): Promise<{ result: unknown } | ResponseError<void>> {
  try {
    const { method, params } = (req && typeof req === 'object' ? req : {}) as { method?: unknown; params?: unknown };
    if (!Object.values(lspMethods).includes(method as never)) {
      return new ResponseError(ErrorCodes.MethodNotFound, `cline/lspRequest: ${JSON.stringify(method)} is not one of ${Object.values(lspMethods).join(', ')}`);
    }
    if (!params || typeof params !== 'object') throw invalid('params must be an object');
    const p = params as Params;
    const uri = documentUri(api, p);
    const run = <T>(command: string, ...args: unknown[]) => api.commands.executeCommand<T | undefined>(command, uri, ...args);
    switch (method) {
      case lspMethods.references: {
        const pos = documentPosition(api, p);
        const refs = ((await run<vscode.Location[]>('vscode.executeReferenceProvider', pos)) ?? []).map(location);
        // VS Code's command always includes the declaration.
        const ctx = p.context as { includeDeclaration?: unknown } | undefined;
        if (ctx?.includeDeclaration !== false) return { result: refs };
        const defs = ((await run<(vscode.Location | vscode.LocationLink)[]>('vscode.executeDefinitionProvider', pos)) ?? []).map(location);
        return { result: refs.filter((r) => !defs.some((d) => sameLocation(d, r))) };
      }
      case lspMethods.definition: {
        const defs = await run<(vscode.Location | vscode.LocationLink)[]>('vscode.executeDefinitionProvider', documentPosition(api, p));
        return { result: (defs ?? []).map(location) };
      }
      case lspMethods.rename: {
        const pos = documentPosition(api, p);
        if (typeof p.newName !== 'string' || p.newName === '') throw invalid('params.newName must be a non-empty string');
        const edit = await run<vscode.WorkspaceEdit>('vscode.executeDocumentRenameProvider', pos, p.newName);
        return { result: edit ? workspaceEdit(api, edit) : null };
      }
      default: {
        const syms = await run<(vscode.DocumentSymbol | vscode.SymbolInformation)[]>('vscode.executeDocumentSymbolProvider');
        return { result: syms ? syms.map(documentSymbol) : null };
      }
    }
  } catch (err) {
    if (err instanceof ResponseError) return err;
    const msg = err instanceof Error ? err.message : String(err);
    return new ResponseError(ErrorCodes.InternalError, `${(req as { method?: string })?.method ?? 'cline/lspRequest'}: ${msg}`);
  }
}
