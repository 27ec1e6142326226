// window/showDocument with external: true, which the daemon sends to open
// an MCP server's sign-in page in the user's browser (PROTOCOL.md, MCP).
// vscode-languageclient's own handler would do it with
// env.openExternal(Uri.parse(uri)); VS Code turns such a Uri back into an
// address with its escapes decoded (encodeURI(uri.toString(true))), so a
// %26, %3D or %2B inside a query value (a resource URL with a query of
// its own) reaches the browser as a bare &, = or +, and the
// authorization server reads another request. The address is opened as
// the daemon wrote it instead, and only web addresses are: a daemon
// that asked for file: or another scheme would have VS Code hand it to
// the system's opener.

export interface ShowDocumentParams {
  uri: string;
  external?: boolean;
  takeFocus?: boolean;
  selection?: unknown;
}

export interface ShowDocumentResult {
  success: boolean;
}

/** ExternalOpener is what opening an address needs from the editor. */
export interface ExternalOpener {
  /** openExternal opens address, unchanged, in the user's browser; false when it did not. */
  openExternal(address: string): PromiseLike<boolean>;
  /** refused tells the user an address was not opened, and why. */
  refused(address: string, why: string): void;
}

/**
 * showDocument answers window/showDocument: an external http(s) address
 * is opened as written, any other external address refused, and a
 * document in the editor left to next (the language client's handler).
 */
export async function showDocument(
  params: ShowDocumentParams,
  opener: ExternalOpener,
  next: (params: ShowDocumentParams) => PromiseLike<ShowDocumentResult>,
): Promise<ShowDocumentResult> {
  if (params.external !== true) return next(params);
  const address = typeof params.uri === 'string' ? params.uri : '';
  let scheme = '';
  try {
    scheme = new URL(address).protocol;
  } catch {
    opener.refused(address, 'it is not an address');
    return { success: false };
  }
  if (scheme !== 'http:' && scheme !== 'https:') {
    opener.refused(address, `only http and https addresses open in the browser, not ${scheme}`);
    return { success: false };
  }
  try {
    return { success: await opener.openExternal(address) };
  } catch (err) {
    opener.refused(address, err instanceof Error ? err.message : String(err));
    return { success: false };
  }
}
