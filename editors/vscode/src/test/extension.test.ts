// extension.ts loaded against fake vscode modules and driven through its
// commands, with a real cline-ls behind the fake language client.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, test } from 'node:test';

import { call, daemonBinary, text, Workspace } from './daemon';
import { channels, changeSettings, FakeLanguageClient, install, registeredCommands, scripted, statusBar, vscode } from './fakeVscode';

install();
// eslint-disable-next-line @typescript-eslint/no-require-imports
const extension: typeof import('../extension') = require('../extension');

const ws = new Workspace({ 'hello.txt': 'hello\n' }, [
  { events: [text('Hi! Editing.'), call('c1', 'editor', { path: 'hello.txt', old_text: 'hello', new_text: 'hello, world' })] },
  { expect: { last_tool_result_contains: 'Edited hello.txt' }, events: [text('Done.')] },
]);

before(async () => {
  // The replay model comes from the daemon's config file, since the
  // extension's settings have no transcript field.
  const config = path.join(ws.dir, 'config', 'cline-ls');
  fs.mkdirSync(config, { recursive: true });
  fs.writeFileSync(path.join(config, 'config.json'), JSON.stringify({ provider: { name: 'replay', transcript: ws.transcript }, stateDir: ws.stateDir }));
  scripted.env = { PATH: process.env.PATH ?? '', HOME: ws.dir, XDG_CONFIG_HOME: path.join(ws.dir, 'config') };
  scripted.settings = { 'cline.path': daemonBinary(), 'cline.approvals': { edit: 'ask' } };
  vscode.workspace.workspaceFolders = [{ uri: vscode.Uri.file(ws.root), name: 'ws' }];
  await extension.activate({ subscriptions: [] } as never);
});

after(async () => {
  await extension.deactivate();
  ws.remove();
});

const output = () => channels.find((c) => c.name === 'Cline')!.text;

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 2400 && !cond(); i++) await new Promise((r) => setTimeout(r, 25));
  assert.ok(cond(), `timed out waiting for ${what}\n--- output ---\n${output()}\nerrors: ${scripted.errors.join('; ')}\n--- daemon log ---\n${FakeLanguageClient.last?.stderr}`);
}

test('activation starts cline-ls with the cline capabilities and the settings', () => {
  const client = FakeLanguageClient.last!;
  assert.equal(client.serverOptions.command, daemonBinary());
  assert.deepEqual(client.spawnedArgs, ['serve', '--stdio']);
  assert.deepEqual(client.initializeParams.capabilities.experimental, { cline: { approvals: true, diffs: true, questions: true } });
  assert.deepEqual(client.initializeParams.initializationOptions, { approvals: { edit: 'ask' } });
  for (const c of ['cline.newTaskAct', 'cline.newTaskPlan', 'cline.switchMode', 'cline.cancelTask']) assert.ok(registeredCommands().includes(c), c);
});

test('Cline: New Task (Act) streams the task to the output and asks approval with a notification', { timeout: 60_000 }, async () => {
  scripted.inputs.push('Greet the world');
  scripted.notifications.push('Allow');
  await vscode.commands.executeCommand('cline.newTaskAct');
  await until(() => output().includes('■ end_turn'), 'the end of the turn');
  const out = output();
  for (const want of ['> [act] Greet the world', 'Hi! Editing.', '? Edit hello.txt: allow', 'Δ hello.txt (+1 −1)', 'Done.']) {
    assert.ok(out.includes(want), `output lacks ${JSON.stringify(want)}\n${out}`);
  }
  assert.ok(scripted.shown.some((s) => s === '(modal) Allow Cline to edit hello.txt? [Allow|Always|Reject|Show Diff]'), scripted.shown.join('\n'));
  // Not open in the editor, so the daemon wrote the file itself.
  assert.equal(ws.disk('hello.txt'), 'hello, world\n');
  assert.match(statusBar.text, /Cline: act/);
  assert.deepEqual(scripted.errors, []);
});

test('Cline: Switch Mode sets the mode of the current task', async () => {
  scripted.quickPicks.push('plan');
  await vscode.commands.executeCommand('cline.switchMode');
  await until(() => output().includes('Mode: plan'), 'the mode update');
  assert.match(statusBar.text, /Cline: plan/);
  assert.ok(FakeLanguageClient.last!.sent.some((m) => m.method === 'session/set_mode'));
});

test('changing a setting sends workspace/didChangeConfiguration with the whole settings object', async () => {
  changeSettings({ 'cline.mode': 'plan', 'cline.model': 'some-model' });
  await until(() => FakeLanguageClient.last!.sent.some((m) => m.method === 'workspace/didChangeConfiguration'), 'didChangeConfiguration');
  const last = FakeLanguageClient.last!.sent.filter((m) => m.method === 'workspace/didChangeConfiguration').pop()!;
  assert.deepEqual(last.params, {
    settings: { provider: { name: null, model: 'some-model', baseUrl: null, apiKeyEnv: null, transcript: null }, mode: 'plan', approvals: { edit: 'ask' } },
  });
});

test('the daemon\'s no-model error says where to choose a model in VS Code', () => {
  const msg = extension.withHint('no model is configured: set provider {name, model, apiKeyEnv} in initializationOptions');
  assert.match(msg, /"cline\.provider" and "cline\.model"/);
  assert.match(msg, /"cline\.transcript"/);
  assert.equal(extension.withHint('something else'), 'something else');
});

test('Cline: Cancel with nothing running is harmless', async () => {
  await vscode.commands.executeCommand('cline.cancelTask');
  assert.deepEqual(scripted.errors, []);
});

test('a daemon that fails to start is reported by its own words, once, in one daemon channel', async () => {
  const bad = path.join(ws.dir, 'bad-cline-ls');
  fs.writeFileSync(bad, '#!/bin/sh\necho "cline-ls: --log-level must be one of debug, info, warn, error" >&2\nexit 2\n', { mode: 0o755 });
  const errorsBefore = scripted.errors.length;
  changeSettings({ 'cline.path': bad });
  await until(() => scripted.errors.length > errorsBefore, 'the start failure');
  await vscode.commands.executeCommand('cline.restart');
  await until(() => scripted.errors.length > errorsBefore + 1, 'the second start failure');
  const shown = scripted.errors.slice(errorsBefore);
  assert.equal(shown.length, 2, shown.join('\n'));
  for (const e of shown) {
    assert.match(e, /--log-level must be one of debug, info, warn, error/);
    assert.doesNotMatch(e, /cline\.path/);
  }
  assert.equal(channels.filter((c) => c.name === 'Cline (daemon)').length, 1);
  // The error is in the output once per failure, not twice.
  assert.equal(output().split('--log-level must be one of').length - 1, 2, output());

  changeSettings({ 'cline.path': path.join(ws.dir, 'no-such-binary') });
  await until(() => scripted.errors.length > errorsBefore + 2, 'the missing binary');
  assert.match(scripted.errors.at(-1)!, /not found.*cline\.path/);
  changeSettings({ 'cline.path': daemonBinary() });
  await until(() => FakeLanguageClient.last!.isRunning() && FakeLanguageClient.last!.serverOptions.command === daemonBinary(), 'the daemon back');
});
