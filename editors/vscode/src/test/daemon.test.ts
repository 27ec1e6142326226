// End-to-end tests: the extension's protocol glue as the client of the real
// cline-ls daemon, with the replay model, an in-memory editor standing in
// for VS Code's documents and a scripted user answering the prompts.

import * as assert from 'node:assert/strict';
import { before, test } from 'node:test';

import { fillClineCapabilities } from '../protocol/capabilities';
import { promptCommand } from '../protocol/commands';
import { CheckpointFile, CheckpointItem, CheckpointUI, ClineController, RestoreResult, RestoreScope } from '../protocol/controller';
import { OtherAnswer } from '../protocol/questions';
import { SessionView } from '../protocol/session';
import { didChangeConfigurationParams, initializationOptions, readSettings } from '../protocol/settings';
import { call, Daemon, daemonBinary, Deferred, Reply, text, Workspace } from './daemon';
import { MemoryEditor } from './memoryEditor';
import { Script, ScriptedUser, StringSink } from './scriptedUser';

const timeout = 120_000; // a failure guard only; each test takes well under a second

const hello = { 'hello.txt': 'hello\n' };
const editHello = call('c1', 'editor', { path: 'hello.txt', old_text: 'hello', new_text: 'hello, world' });

interface Harness {
  ws: Workspace;
  daemon: Daemon;
  editor: MemoryEditor;
  user: ScriptedUser;
  sink: StringSink;
  controller: ClineController;
  init: any;
}

const settings = readSettings((key) => ({ mode: 'act' } as Record<string, unknown>)[key]);

/**
 * run starts a daemon on a fresh workspace, connects the glue as the
 * plugin would (or as a stock client when plugin is false), runs body and
 * shuts down. A failure carries the session output and the daemon log.
 */
async function run(
  files: Record<string, string>,
  replies: Reply[],
  script: Script,
  body: (h: Harness) => Promise<void>,
  plugin = true,
): Promise<void> {
  const ws = new Workspace(files, replies);
  const daemon = new Daemon(ws);
  const editor = new MemoryEditor(daemon.conn);
  const user = new ScriptedUser(script, editor, ws.root);
  const sink = new StringSink();
  const controller = new ClineController({ rpc: daemon.rpc(), ui: user, view: new SessionView(sink), cwd: () => ws.root });
  for (const [method, handler] of controller.notifications()) daemon.record(method, handler);
  for (const [method, handler] of controller.requests()) daemon.conn.onRequest(method, handler);
  daemon.record('window/logMessage');
  let failed = false;
  try {
    const caps: { experimental?: unknown } = {};
    if (plugin) fillClineCapabilities(caps);
    const init = await daemon.initialize(caps.experimental as Record<string, unknown> | undefined, initializationOptions(settings, ws.replaySettings()));
    await body({ ws, daemon, editor, user, sink, controller, init });
    if (process.env.CLINE_TEST_VERBOSE) console.log(sink.text);
  } catch (err) {
    failed = true;
    const e = err as Error;
    throw new Error(`${e.stack ?? e.message}\n--- session output ---\n${sink.text}\n${daemon.log()}`);
  } finally {
    const code = await daemon.stop();
    if (!failed) assert.equal(code, 0, `daemon exit code after shutdown/exit\n${daemon.log()}`);
    ws.remove();
  }
}

before(() => {
  daemonBinary(); // build once, outside the tests' timing
});

// vscode-languageclient registers every command the daemon advertises
// (executeCommandProvider) as a VS Code command: one the extension
// registers itself under the same id makes the client fail to start.
test('no command of the extension has the id of a command the daemon advertises', { timeout }, async () => {
  const fs = await import('node:fs');
  const path = await import('node:path');
  const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8'));
  const ours: string[] = pkg.contributes.commands.map((c: { command: string }) => c.command);
  await run(hello, [], {}, async ({ init }) => {
    const advertised: string[] = init.capabilities.executeCommandProvider.commands;
    assert.ok(advertised.length > 0, 'the daemon advertises no commands');
    assert.deepEqual(ours.filter((c) => advertised.includes(c)), []);
  });
});

test('plugin: an approved edit lands in the open buffer, not on disk, until the user saves', { timeout }, async () => {
  const replies: Reply[] = [
    { events: [text('Editing hello.txt.'), editHello] },
    { expect: { last_tool_result_contains: 'Edited hello.txt' }, events: [text('Done: it greets the world.')] },
  ];
  await run(hello, replies, { approve: ['Show Diff', 'Allow'] }, async ({ ws, daemon, editor, user, sink, controller, init }) => {
    assert.equal(init.capabilities.experimental.cline.protocolVersion, 3);
    const file = ws.path('hello.txt');
    await editor.open(file);
    // An unsaved change of the user's: the agent must see and keep it.
    await editor.type(file, [{ range: { start: { line: 1, character: 0 }, end: { line: 1, character: 0 } }, newText: '// unsaved note\n' }]);

    const res = await controller.newTask('act', 'Make it greet the world');
    assert.equal(res.stopReason, 'end_turn');

    assert.equal(editor.text(file), 'hello, world\n// unsaved note\n', 'buffer');
    assert.equal(ws.disk('hello.txt'), 'hello\n', 'disk must be untouched until the user saves');

    // The approval: Allow / Always / Reject and Show Diff, with the diff.
    assert.equal(user.prompts.length, 2, 'asked again after Show Diff');
    assert.deepEqual(user.prompts[0].buttons, ['Allow', 'Always', 'Reject', 'Show Diff']);
    assert.equal(user.prompts[0].message, 'Allow Cline to edit hello.txt?');
    assert.match(user.prompts[0].detail ?? '', /^\+hello, world$/m);
    // Show Diff opened the proposed text against the buffer's.
    assert.equal(user.diffs.length, 1);
    assert.equal(user.diffs[0].file.path, file);
    assert.equal(user.diffs[0].file.original, 'hello\n// unsaved note\n');
    assert.equal(user.diffs[0].file.proposed, 'hello, world\n// unsaved note\n');

    // cline/diff for the edit, naming the buffer's version after it.
    const diffs = daemon.of('cline/diff');
    assert.equal(diffs.length, 1);
    assert.equal(diffs[0].uri, new URL(`file://${file}`).href);
    assert.equal(diffs[0].version, editor.version(file));
    assert.equal(diffs[0].added, 1);
    assert.equal(diffs[0].removed, 1);
    assert.equal(daemon.of('window/logMessage').filter((m) => /hello, world/.test(m.message)).length, 0, 'diff went to cline/diff, not logMessage');

    // The streamed session as the output channel shows it.
    const out = sink.text;
    for (const want of ['> [act] Make it greet the world', 'Editing hello.txt.', '✓ Edit hello.txt [edit]', '? Edit hello.txt: allow', 'Δ hello.txt (+1 −1', '    +1: hello, world', 'Done: it greets the world.', '■ end_turn']) {
      assert.ok(out.includes(want), `output lacks ${JSON.stringify(want)}`);
    }
    const st = controller.tracker.get(res.sessionId)!;
    assert.equal(st.mode, 'act');
    assert.equal([...st.toolCalls.values()][0].status, 'completed');

    await editor.save(file);
    assert.equal(ws.disk('hello.txt'), 'hello, world\n// unsaved note\n', 'disk after save');
  });
});

test('plugin: a rejected edit leaves buffer and disk unchanged, and the model hears why', { timeout }, async () => {
  const replies: Reply[] = [
    { events: [text('Editing.'), editHello] },
    { expect: { last_tool_result_contains: "denied by the user.\nThe user's feedback: keep it short" }, events: [text('Leaving it as it is.')] },
  ];
  await run(hello, replies, { approve: ['Reject'], feedback: 'keep it short' }, async ({ ws, daemon, editor, sink, controller }) => {
    const file = ws.path('hello.txt');
    await editor.open(file);
    const res = await controller.newTask('act', 'Make it greet the world');
    assert.equal(res.stopReason, 'end_turn');
    assert.equal(editor.text(file), 'hello\n');
    assert.equal(editor.version(file), 1);
    assert.equal(ws.disk('hello.txt'), 'hello\n');
    assert.equal(editor.applyEdits.length, 0);
    assert.equal(daemon.of('cline/diff').length, 0);
    const st = controller.tracker.get(res.sessionId)!;
    assert.equal([...st.toolCalls.values()][0].status, 'failed');
    assert.ok(sink.text.includes('? Edit hello.txt: reject (“keep it short”)'), 'output shows the rejection');
    // The wire says "failed"; the output says what happened.
    assert.ok(sink.text.includes('⊘ Edit hello.txt [edit]: rejected') || /⊘ Edit hello\.txt.*: rejected/.test(sink.text), sink.text);
    assert.ok(!/✗ Edit hello\.txt.*failed/.test(sink.text), 'a rejected edit is not shown as failed');
    assert.ok(sink.text.includes('Leaving it as it is.'));
  });
});

test('stock client: cline.prompt through workspace/executeCommand, approval through window/showMessageRequest', { timeout }, async () => {
  const replies: Reply[] = [
    { events: [text('Editing.'), editHello] },
    { expect: { last_tool_result_contains: 'Edited hello.txt' }, events: [text('Done.')] },
  ];
  await run(hello, replies, {}, async ({ ws, daemon, editor, user }) => {
    const asked: any[] = [];
    // The scripted user of a client with no plugin picks "Allow".
    daemon.conn.onRequest('window/showMessageRequest', (p: any) => {
      asked.push(p);
      return p.actions.find((a: { title: string }) => a.title === 'Allow') ?? null;
    });
    const file = ws.path('hello.txt');
    await editor.open(file);
    const res = await promptCommand(daemon.rpc(), 'Make it greet the world');
    assert.match(res.sessionId, /\S/, 'cline.prompt answers at once with the session');
    // The turn runs on; its end comes as window/showMessage with the stop reason.
    for (let i = 0; i < 2400 && !daemon.of('window/showMessage').some((m) => /turn ended \(end_turn\)/.test(m.message)); i++) {
      await new Promise((r) => setTimeout(r, 25));
    }
    assert.ok(daemon.of('window/showMessage').some((m) => /turn ended \(end_turn\)/.test(m.message)), 'the turn ends with end_turn');

    assert.equal(asked.length, 1);
    assert.deepEqual(asked[0].actions.map((a: { title: string }) => a.title), ['Reject', 'Allow', 'Always allow edits of hello.txt']);
    assert.match(asked[0].message, /\+hello, world/);
    assert.equal(user.prompts.length, 0, 'no cline/approvalRequest without the capability');

    assert.equal(editor.text(file), 'hello, world\n');
    assert.equal(ws.disk('hello.txt'), 'hello\n');
    assert.equal(daemon.of('cline/diff').length, 0);
    assert.ok(daemon.of('window/logMessage').some((m) => m.message.includes('+1: hello, world')), 'the diff comes as window/logMessage');
    assert.ok(daemon.of('session/update').length > 0);

    await editor.save(file);
    assert.equal(ws.disk('hello.txt'), 'hello, world\n');
  }, false);
});

test('plugin: plan mode asks a question and makes a plan, then act mode edits', { timeout }, async () => {
  const replies: Reply[] = [
    { events: [text('Let me ask first.'), call('q1', 'ask_question', { question: 'Which greeting?', options: ['hello, world', 'hi there'] })] },
    {
      expect: { last_tool_result_contains: 'hello, world' },
      events: [call('p1', 'update_plan', { entries: [{ content: 'Edit hello.txt', status: 'pending' }, { content: 'Check it', status: 'pending' }] })],
    },
    { events: [call('r1', 'plan_mode_respond', { response: 'Plan: change hello to hello, world.' })] },
    { expect: { last_user_contains: 'go ahead', tools: ['editor'] }, events: [text('Editing.'), editHello] },
    { events: [text('Done.')] },
  ];
  const script: Script = { pick: (_title, items) => items[0], approve: ['Allow'] };
  await run(hello, replies, script, async ({ ws, editor, user, sink, controller }) => {
    const file = ws.path('hello.txt');
    await editor.open(file);
    const plan = await controller.newTask('plan', 'Make it greet the world');
    assert.equal(plan.stopReason, 'end_turn');
    assert.deepEqual(user.questions, [{ title: 'Which greeting?', items: ['hello, world', 'hi there', OtherAnswer] }]);
    const st = controller.tracker.get(plan.sessionId)!;
    assert.equal(st.mode, 'plan');
    assert.deepEqual(st.plan.map((e) => e.content), ['Edit hello.txt', 'Check it']);
    assert.equal(editor.text(file), 'hello\n', 'plan mode does not edit');

    await controller.setMode('act');
    assert.equal(st.mode, 'act');
    const act = await controller.prompt('go ahead');
    assert.equal(act.stopReason, 'end_turn');
    assert.equal(editor.text(file), 'hello, world\n');
    assert.equal(ws.disk('hello.txt'), 'hello\n');

    const out = sink.text;
    for (const want of ['? Which greeting?: hello, world', 'Plan:\n  [ ] Edit hello.txt\n  [ ] Check it', 'Plan: change hello to hello, world.', 'Mode: act', '> [act] go ahead']) {
      assert.ok(out.includes(want), `output lacks ${JSON.stringify(want)}`);
    }
  });
});

test('plugin: Cancel during a pending approval ends the turn and drops the late answer', { timeout }, async () => {
  const replies: Reply[] = [{ events: [text('Editing.'), editHello] }, { events: [text('not reached')] }];
  const shown = new Deferred<void>();
  const answer = new Deferred<string | undefined>();
  const script: Script = {
    approve: [
      () => {
        shown.resolve();
        return answer.promise;
      },
    ],
  };
  await run(hello, replies, script, async ({ ws, daemon, editor, sink, controller }) => {
    const file = ws.path('hello.txt');
    await editor.open(file);
    const turn = controller.newTask('act', 'Make it greet the world');
    await shown.promise;
    assert.equal(controller.approvals.pendingCount, 1);
    await controller.cancel();
    const res = await turn;
    assert.equal(res.stopReason, 'cancelled');
    answer.resolve('Allow'); // the user clicks after all
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(controller.approvals.pendingCount, 0);
    assert.ok(!/^! /m.test(sink.text), 'no error shown for the late answer');
    assert.ok(!sink.text.includes('not reached'));
    assert.equal(editor.text(file), 'hello\n');
    assert.equal(ws.disk('hello.txt'), 'hello\n');
    assert.equal(daemon.of('cline/diff').length, 0);
    assert.ok(sink.text.includes('■ cancelled'));
    assert.ok(!/✗ .*failed/.test(sink.text), `a cancelled edit is not shown as failed:\n${sink.text}`);
  });
});

test('plugin: settings changed through workspace/didChangeConfiguration apply to new sessions', { timeout }, async () => {
  await run(hello, [{ events: [text('unused')] }], {}, async ({ ws, daemon, controller }) => {
    const first = await controller.newSession();
    assert.equal(controller.tracker.get(first)!.mode, 'act');
    await daemon.conn.sendNotification('workspace/didChangeConfiguration', didChangeConfigurationParams({ ...settings, mode: 'plan' }, ws.replaySettings()));
    const second = await controller.newSession();
    assert.equal(controller.tracker.get(second)!.mode, 'plan');
    assert.equal(controller.tracker.current, second);
  });
});

/** CheckpointUser answers the checkpoints command and records what it was shown. */
class CheckpointUser implements CheckpointUI {
  items: CheckpointItem[] = [];
  preview = '';
  files: CheckpointFile[] = [];
  conflicts: RestoreResult['conflicts'] = [];
  constructor(
    private readonly choose: (items: CheckpointItem[]) => CheckpointItem | undefined,
    private readonly scope: RestoreScope | undefined,
    private readonly force: boolean,
  ) {}
  async pickCheckpoint(items: CheckpointItem[]): Promise<CheckpointItem | undefined> {
    this.items = items;
    return this.choose(items);
  }
  async showPreview(text: string): Promise<void> {
    this.preview = text;
  }
  async pickRestore(_c: unknown, files: CheckpointFile[]): Promise<RestoreScope | undefined> {
    this.files = files;
    return this.scope;
  }
  async confirmForce(conflicts: RestoreResult['conflicts']): Promise<boolean> {
    this.conflicts = conflicts;
    return this.force;
  }
}

test('plugin: the checkpoint list previews a turn\'s edits and restores the files, a buffer in conflict only when forced', { timeout }, async () => {
  const replies: Reply[] = [
    { events: [text('Editing both.'), editHello] },
    { expect: { last_tool_result_contains: 'Edited hello.txt' }, events: [call('c2', 'editor', { path: 'notes.txt', old_text: 'draft', new_text: 'final' })] },
    { expect: { last_tool_result_contains: 'Edited notes.txt' }, events: [text('Done.')] },
  ];
  await run({ ...hello, 'notes.txt': 'draft\n' }, replies, { approve: ['Allow', 'Allow'] }, async ({ ws, editor, sink, controller }) => {
    const file = ws.path('hello.txt');
    await editor.open(file);
    const { sessionId } = await controller.newTask('act', 'Greet the world and finish the notes');
    assert.equal(editor.text(file), 'hello, world\n');
    assert.equal(ws.disk('notes.txt'), 'final\n');

    // Cancel at the restore choice: the list and the preview, nothing restored.
    const before = (items: CheckpointItem[]) => items.find((i) => !i.checkpoint.toolCallId);
    const look = new CheckpointUser(before, undefined, false);
    assert.equal(await controller.pickCheckpoint(look, sessionId), undefined);
    const point = before(look.items);
    assert.ok(point, `no checkpoint before the turn in ${JSON.stringify(look.items)}`);
    assert.deepEqual(look.files.map((f) => [f.path, f.status]).sort(), [[file, 'modified'], [ws.path('notes.txt'), 'modified']]);
    assert.match(look.preview, /^--- hello\.txt \(modified\)$/m);
    assert.match(look.preview, /^--- notes\.txt \(modified\)$/m);
    assert.match(look.preview, /^-1: hello, world\n\+1: hello$/m);
    assert.match(look.preview, /^-1: final\n\+1: draft$/m);
    assert.doesNotMatch(look.preview, /```/, 'the preview is a diff document, without markdown fences');
    // Newest first, the time and what made each; the after-call ones name their file.
    assert.deepEqual(look.items.map((i) => i.checkpoint.toolCallId ?? ''), ['c2', 'c1', '']);
    assert.match(look.items[0].description, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d · turn \d+ · after c2$/);
    assert.equal(look.items[0].detail, 'notes.txt');
    assert.equal(editor.text(file), 'hello, world\n');
    assert.equal(ws.disk('notes.txt'), 'final\n');

    // The user changes the buffer after the checkpoint: restoring the files
    // keeps it (a conflict) and restores the rest; confirmed, it is forced.
    await editor.type(file, [{ range: { start: { line: 1, character: 0 }, end: { line: 1, character: 0 } }, newText: 'mine\n' }]);
    const restore = new CheckpointUser(before, 'files', true);
    const res = await controller.pickCheckpoint(restore, sessionId);
    assert.deepEqual(restore.conflicts.map((c) => c.path), [file]);
    assert.deepEqual(res?.conflicts, []);
    assert.equal(ws.disk('notes.txt'), 'draft\n');
    assert.equal(editor.text(file), 'hello\n');
    assert.ok(sink.text.includes('Restored "'), sink.text);
  });
});
