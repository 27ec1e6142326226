// The editor's diagnostics for the daemon (PROTOCOL.md §10): every
// source's diagnostics of an open document, as cline/diagnostics in LSP's
// shape, tagged with the document's version (the one its didChange
// carries), so the daemon can tell a report of the text it edited from
// one of the text before. No VS Code types here: the glue passes its
// diagnostics in this structural shape.

/** maxDiagnostics bounds one report: the daemon keeps no more. */
export const maxDiagnostics = 200;

/** EditorDiagnostic is what is read of a vscode.Diagnostic. */
export interface EditorDiagnostic {
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  /** VS Code's DiagnosticSeverity: 0 error, 1 warning, 2 information, 3 hint. */
  severity: number;
  source?: string;
  code?: string | number | { value: string | number };
  message: string;
}

export interface DiagnosticsParams {
  uri: string;
  version: number;
  diagnostics: {
    range: EditorDiagnostic['range'];
    severity: number;
    source?: string;
    code?: string | number;
    message: string;
  }[];
}

/** diagnosticsParams is cline/diagnostics' params for a document's diagnostics. */
export function diagnosticsParams(uri: string, version: number, diags: readonly EditorDiagnostic[]): DiagnosticsParams {
  return {
    uri,
    version,
    diagnostics: diags.slice(0, maxDiagnostics).map((d) => {
      const code = typeof d.code === 'object' && d.code !== null ? d.code.value : d.code;
      return {
        range: {
          start: { line: d.range.start.line, character: d.range.start.character },
          end: { line: d.range.end.line, character: d.range.end.character },
        },
        // LSP counts severities from 1.
        severity: Math.min(Math.max(Math.trunc(d.severity), 0), 3) + 1,
        ...(d.source ? { source: d.source } : {}),
        ...(code !== undefined ? { code } : {}),
        message: String(d.message),
      };
    }),
  };
}
