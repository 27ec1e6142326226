// The client capabilities that turn on the plugin side of the protocol
// (PROTOCOL.md §2): approvals as cline/approvalRequest, edit reports as
// cline/diff and questions as cline/askQuestion; diagnostics says the
// client sends the editor's diagnostics as cline/diagnostics (§10). Without them the daemon
// falls back to window/showMessageRequest and window/logMessage, which
// any LSP client shows.

export interface ClineCapabilities {
  approvals: boolean;
  diffs: boolean;
  questions: boolean;
  diagnostics: boolean;
}

export const clineCapabilities: ClineCapabilities = { approvals: true, diffs: true, questions: true, diagnostics: true };

/**
 * fillClineCapabilities adds experimental.cline to an LSP ClientCapabilities
 * object, keeping whatever else is under experimental.
 */
export function fillClineCapabilities(caps: { experimental?: unknown }): void {
  const experimental = (caps.experimental && typeof caps.experimental === 'object' ? caps.experimental : {}) as Record<string, unknown>;
  caps.experimental = { ...experimental, cline: { ...clineCapabilities } };
}
