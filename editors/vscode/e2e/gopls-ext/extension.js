// Test only (e2e/lsp.mjs): the smallest Go extension, gopls started with
// vscode-languageclient on the Go files of the workspace, so that VS
// Code's own providers (vscode.executeReferenceProvider and friends)
// answer from it as they do with the Go extension. $GOPLS names the
// binary. A status bar item says when gopls has answered initialize, so
// that the test knows the providers are registered.

const vscode = require('vscode');
const { LanguageClient } = require('vscode-languageclient/node');

let client;

exports.activate = async function activate(context) {
  const status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 0);
  status.text = 'gopls: starting';
  status.show();
  context.subscriptions.push(status);
  client = new LanguageClient(
    'gopls-test',
    'gopls (test)',
    {
      command: process.env.GOPLS || 'gopls',
      // No transport: a stdio transport would add --stdio, which gopls refuses.
      // gopls runs go list: with no toolchain or module download.
      options: { env: { ...process.env, GOTOOLCHAIN: 'local', GOPROXY: 'off', GOFLAGS: '' } },
    },
    { documentSelector: [{ scheme: 'file', language: 'go' }] },
  );
  await client.start();
  status.text = 'gopls: ready';
};

exports.deactivate = function deactivate() {
  return client?.stop();
};
