// extension.ts loaded against fake vscode modules and driven through its
// commands, with a real cline-ls behind the fake language client.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, test } from 'node:test';

import { call, daemonBinary, text, Workspace } from './daemon';
import { channels, changeSettings, FakeLanguageClient, install, memento, registeredCommands, scripted, statusBar, vscode, webviews } from './fakeVscode';

install();
// eslint-disable-next-line @typescript-eslint/no-require-imports
const extension: typeof import('../extension') = require('../extension');

const ws = new Workspace({ 'hello.txt': 'hello\n' }, [
  { events: [text('Hi! Editing.'), call('c1', 'editor', { path: 'hello.txt', old_text: 'hello', new_text: 'hello, world' })] },
  { expect: { last_tool_result_contains: 'Edited hello.txt' }, events: [text('Done.')] },
  // The chat view's follow-up, with hello.txt mentioned.
  // The mention carries the file's text as the editor has it (the edit above, unsaved).
  { expect: { last_user_contains: 'hello.txt">\nhello, world' }, events: [text('Again.'), call('c2', 'editor', { path: 'hello.txt', old_text: 'world', new_text: 'there' })] },
  { expect: { last_tool_result_contains: 'Edited hello.txt' }, events: [text('Done again.')] },
  // Rejected with feedback.
  { events: [call('c3', 'editor', { path: 'hello.txt', old_text: 'hello', new_text: 'bye' })] },
  { expect: { last_tool_result_contains: 'not like that' }, events: [text('Understood.')] },
  // Asked while the chat view is hidden.
  { events: [call('c4', 'editor', { path: 'hello.txt', old_text: 'hello', new_text: 'hey' })] },
  { expect: { last_tool_result_contains: 'Edited hello.txt' }, events: [text('Fine.')] },
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
  await extension.activate({ subscriptions: [], extensionUri: vscode.Uri.file(path.resolve(__dirname, '..', '..')), workspaceState: memento() } as never);
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
  assert.deepEqual(client.initializeParams.capabilities.experimental, { cline: { approvals: true, diffs: true, questions: true, diagnostics: true, lsp: ['references', 'definition', 'rename', 'documentSymbols'] } });
  assert.deepEqual(client.initializeParams.initializationOptions, { approvals: { edit: 'ask' } });
  for (const c of ['cline.newTaskAct', 'cline.newTaskPlan', 'cline.switchMode', 'cline.cancelTask']) assert.ok(registeredCommands().includes(c), c);
});

const page = () => webviews.view!;
/** posted is every item the chat view was sent, latest version last. */
const postedItems = (): any[] => page().posted.flatMap((m) => (m.type === 'item' ? [m.item] : m.type === 'reset' ? m.items : []));
const lastState = (): any => page().posted.filter((m) => m.type === 'state' || m.type === 'reset').pop()?.state;

/** waitingApproval waits for the chat card of toolCallId to ask, and returns its approval. */
async function waitingApproval(toolCallId: string): Promise<{ approvalId: string; buttons: Array<{ optionId: string; kind: string; label: string }> }> {
  const find = () => postedItems().filter((i) => i.kind === 'tool' && i.toolCallId === toolCallId && i.approval && !i.approval.answered).pop()?.approval;
  await until(() => find() !== undefined, `the approval of ${toolCallId} in the chat view`);
  return find();
}

const turnEnded = (n: number) => () => output().split('■ end_turn').length - 1 >= n;

test('Cline: New Task (Act) streams the task to the chat view, where the approval waits for a click', { timeout: 60_000 }, async () => {
  scripted.inputs.push('Greet the world');
  await vscode.commands.executeCommand('cline.newTaskAct');
  // The command revealed the chat view; its page says it is ready.
  assert.ok(webviews.view, 'the chat view was created');
  assert.match(page().html, /Content-Security-Policy" content="default-src 'none'; [^"]*script-src 'nonce-[^']+'/);
  assert.doesNotMatch(page().html, /https?:\/\//, 'the page loads nothing remote');
  page().send({ type: 'ready' });
  const approval = await waitingApproval('c1');
  assert.deepEqual(approval.buttons.map((b) => b.label), ['Allow', 'Always', 'Reject']);
  assert.match(statusBar.text, /1 waiting/);
  // Nothing was asked in a dialog, and nothing is applied while the card waits.
  assert.deepEqual(scripted.shown, []);
  assert.equal(ws.disk('hello.txt'), 'hello\n');
  // A message that is not of the page's shape is ignored.
  page().send({ type: 'answer', approvalId: approval.approvalId });
  page().send({ type: 'answer', approvalId: approval.approvalId, optionId: approval.buttons.find((b) => b.kind === 'allow_once')!.optionId });
  await until(turnEnded(1), 'the end of the turn');
  const out = output();
  for (const want of ['> [act] Greet the world', 'Hi! Editing.', '? Edit hello.txt: writes hello.txt to disk (not open in the editor): allow', 'Δ hello.txt (+1 −1)', 'Done.']) {
    assert.ok(out.includes(want), `output lacks ${JSON.stringify(want)}\n${out}`);
  }
  const items = postedItems();
  assert.ok(items.some((i) => i.kind === 'user' && i.text === 'Greet the world'));
  assert.ok(items.some((i) => i.kind === 'agent' && i.html === '<p>Hi! Editing.</p>'), JSON.stringify(items));
  const card = items.filter((i) => i.kind === 'tool' && i.toolCallId === 'c1').pop();
  assert.equal(card.status, 'completed');
  assert.equal(card.approval.answered, 'allow');
  assert.deepEqual([card.applied.added, card.applied.removed], [1, 1]);
  // Not open in the editor, so the daemon wrote the file itself.
  assert.equal(ws.disk('hello.txt'), 'hello, world\n');
  assert.match(statusBar.text, /idle · act/);
  assert.match(lastState().meter, /in · .* out/);
  assert.deepEqual(scripted.errors, []);
});

test('Cline: Switch Mode sets the mode of the current task', async () => {
  scripted.quickPicks.push('plan');
  await vscode.commands.executeCommand('cline.switchMode');
  await until(() => output().includes('Mode: plan'), 'the mode update');
  assert.match(statusBar.text, /plan/);
  assert.equal(lastState().mode, 'plan');
  assert.ok(FakeLanguageClient.last!.sent.some((m) => m.method === 'session/set_mode'));
});

test('chat view: mode switch, a follow-up with a file mention, undo of the turn, reject with feedback', { timeout: 60_000 }, async () => {
  const hello = path.join(ws.root, 'hello.txt');
  page().send({ type: 'setMode', mode: 'act' });
  await until(() => lastState().mode === 'act', 'act mode');
  page().send({ type: 'send', text: 'Now greet them', mentions: [{ kind: 'file', path: hello }] });
  const a2 = await waitingApproval('c2');
  const prompt = FakeLanguageClient.last!.sent.filter((m) => m.method === 'session/prompt').pop()!.params as any;
  // The file's text goes with the prompt (here from disk: the fake editor has it closed).
  assert.deepEqual(prompt.prompt[1], { type: 'resource', resource: { uri: `file://${hello}`, text: 'hello, world\n', mimeType: 'text/plain' } });
  assert.ok(postedItems().some((i) => i.kind === 'user' && i.mentions[0] === '@hello.txt'));
  // While the turn runs, a second prompt is not sent.
  const prompts = FakeLanguageClient.last!.sent.filter((m) => m.method === 'session/prompt').length;
  page().send({ type: 'send', text: 'too early', mentions: [] });
  page().send({ type: 'answer', approvalId: a2.approvalId, optionId: a2.buttons.find((b) => b.kind === 'allow_once')!.optionId });
  await until(turnEnded(2), 'the end of the follow-up');
  assert.equal(FakeLanguageClient.last!.sent.filter((m) => m.method === 'session/prompt').length, prompts);
  assert.equal(ws.disk('hello.txt'), 'hello, there\n');

  page().send({ type: 'undo' });
  await until(() => postedItems().some((i) => i.kind === 'note' && /^Undid the turn/.test(i.text)), 'the undo');
  assert.equal(ws.disk('hello.txt'), 'hello, world\n');
  const restore = FakeLanguageClient.last!.sent.filter((m) => m.method === 'cline/restore').pop()!.params as any;
  assert.equal(restore.scope, 'both');
  assert.ok(postedItems().some((i) => i.kind === 'tool' && i.toolCallId === 'c2' && i.undone), 'the undone turn is greyed');

  page().send({ type: 'send', text: 'Say bye', mentions: [] });
  const a3 = await waitingApproval('c3');
  page().send({ type: 'answer', approvalId: a3.approvalId, optionId: a3.buttons.find((b) => b.kind === 'reject_once')!.optionId, feedback: 'not like that' });
  await until(turnEnded(3), 'the end of the rejected turn');
  const card = postedItems().filter((i) => i.kind === 'tool' && i.toolCallId === 'c3').pop();
  assert.equal(card.status, 'rejected');
  assert.equal(card.approval.answered, 'reject: not like that');
  assert.equal(ws.disk('hello.txt'), 'hello, world\n');
  assert.deepEqual(scripted.errors, []);
});

test('chat view: the history lists the saved task, and resuming it replays it into the chat', { timeout: 60_000 }, async () => {
  const sessionId = lastState().sessionId;
  page().send({ type: 'history' });
  await until(() => page().posted.some((m) => m.type === 'sessions'), 'the session list');
  const list = page().posted.filter((m) => m.type === 'sessions').pop().sessions;
  assert.ok(list.some((x: any) => x.sessionId === sessionId && x.current && x.title), JSON.stringify(list));
  const before = page().posted.length;
  page().send({ type: 'resume', sessionId });
  await until(() => FakeLanguageClient.last!.sent.some((m) => m.method === 'session/load'), 'session/load');
  await until(() => page().posted.slice(before).some((m) => m.type === 'item' && m.item.kind === 'agent' && /Understood/.test(m.item.text)), 'the replayed history');
  const replayed = page().posted.slice(before).filter((m) => m.type === 'item').map((m) => m.item);
  assert.ok(replayed.some((i) => i.kind === 'user' && /Greet the world/.test(i.text)), JSON.stringify(replayed.map((i) => [i.kind, i.text ?? i.title])));
  assert.deepEqual(scripted.errors, []);
});

test('chat view: an approval asked while the view is hidden is pointed to by a notification, and answered in the view', { timeout: 60_000 }, async () => {
  page().visible = false;
  const shown = scripted.shown.length;
  scripted.notifications.push(undefined); // the notification is dismissed: it answers nothing
  page().send({ type: 'send', text: 'Say hey', mentions: [] });
  const a4 = await waitingApproval('c4');
  await until(() => scripted.shown.length > shown, 'the notification');
  assert.deepEqual(scripted.shown.slice(shown), ['Cline asks to edit hello.txt: writes hello.txt to disk (not open in the editor): answer in the Cline chat. [Open Chat]']);
  assert.equal(ws.disk('hello.txt'), 'hello, world\n', 'dismissing the notification answered nothing');
  page().visible = true;
  page().send({ type: 'answer', approvalId: a4.approvalId, optionId: a4.buttons.find((b) => b.kind === 'allow_once')!.optionId });
  await until(() => postedItems().some((i) => i.kind === 'agent' && i.text === 'Fine.'), 'the end of the turn');
  assert.equal(ws.disk('hello.txt'), 'hey, world\n');
  assert.deepEqual(scripted.errors, []);
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

test('Cline: Checkpoints… previews the picked checkpoint and restores its files', { timeout: 60_000 }, async () => {
  const sent = () => FakeLanguageClient.last!.sent;
  const asked = sent().length;
  scripted.quickPicks.push('Before: Say hey', 'Restore files');
  await vscode.commands.executeCommand('cline.showCheckpoints');
  await until(() => postedItems().some((i) => i.kind === 'note' && /^Restored "Before: Say hey"/.test(i.text)), 'the restore');
  const diff = sent().slice(asked).find((m) => m.method === 'cline/checkpointDiff');
  assert.ok(diff, 'the preview was asked for');
  const restore = sent().slice(asked).find((m) => m.method === 'cline/restore')!.params as any;
  const restoreScope = () => (sent().filter((m) => m.method === 'cline/restore').pop()!.params as any).scope;
  assert.equal(restore.scope, 'files');
  assert.equal(restore.checkpointId, (diff!.params as any).checkpointId);
  assert.equal(restore.force, undefined);
  assert.equal(ws.disk('hello.txt'), 'hello, world\n');

  // The conversation: the turn taken back is greyed in the chat, the ones before it are not.
  scripted.quickPicks.push('Before: Say hey', 'Restore conversation');
  await vscode.commands.executeCommand('cline.showCheckpoints');
  await until(() => postedItems().some((i) => i.kind === 'note' && /^Restored "Before: Say hey": the conversation\.$/.test(i.text)), 'the conversation restore');
  // The chat holds the history replayed by the resume above (turns undone before it included).
  const shown = [...new Map(postedItems().slice(postedItems().map((i) => i.text).lastIndexOf('Greet the world')).map((i) => [i.id, i])).values()];
  const greyed = (kind: string, pick: (i: any) => boolean) => shown.filter((i) => i.kind === kind && pick(i)).map((i) => i.undone === true);
  assert.deepEqual(greyed('user', (i) => i.text === 'Say hey'), [true]);
  assert.deepEqual(greyed('tool', (i) => i.toolCallId === 'c4'), [true]);
  assert.deepEqual(greyed('user', (i) => i.text === 'Say bye'), [false]);
  assert.deepEqual(greyed('tool', (i) => i.toolCallId === 'c3'), [false]);
  assert.equal(restoreScope(), 'conversation');
  assert.equal(ws.disk('hello.txt'), 'hello, world\n');
  assert.deepEqual(scripted.errors, []);
});

test("the daemon's request to open an MCP sign-in page opens the address, as written, in the browser", async () => {
  // The language client runs the middleware for window/showDocument.
  const showDocument = (FakeLanguageClient.last!.clientOptions as any).middleware.window.showDocument;
  const toEditor = async () => {
    throw new Error('an external address went to the editor');
  };
  const address = 'https://auth.example.com/authorize?resource=https%3A%2F%2Fmcp.example.com%2Fmcp%3Forg%3Da%26b&state=x%2By';
  assert.deepEqual(await showDocument({ uri: address, external: true }, toEditor), { success: true });
  // The string itself, not a Uri: VS Code would rebuild a Uri's address with its escapes undone.
  assert.deepEqual(scripted.opened, [address]);
  assert.deepEqual(await showDocument({ uri: 'file:///usr/bin/xterm', external: true }, toEditor), { success: false });
  assert.equal(scripted.opened.length, 1);
  assert.match(scripted.warnings.at(-1) ?? '', /did not open file:\/\/\/usr\/bin\/xterm: only http and https/);
  assert.match(output(), /Did not open file:\/\/\/usr\/bin\/xterm/);
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
