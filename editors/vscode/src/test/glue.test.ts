import * as assert from 'node:assert/strict';
import { test } from 'node:test';

import { approvalButtons, approvalMessage, Approvals, decideApproval, describeDecision } from '../protocol/approvals';
import { clineCapabilities, fillClineCapabilities } from '../protocol/capabilities';
import { checkpointItems, checkpointPreview } from '../protocol/controller';
import { answerQuestion, OtherAnswer } from '../protocol/questions';
import { formatClineDiff, SessionTracker, SessionView } from '../protocol/session';
import { didChangeConfigurationParams, initializationOptions, readSettings } from '../protocol/settings';
import type { ApprovalRequestParams, Rpc } from '../protocol/types';
import { StringSink } from './scriptedUser';

const options = [
  { optionId: 'allow_once', name: 'Allow', kind: 'allow_once' },
  { optionId: 'allow_always', name: 'Always allow', kind: 'allow_always' },
  { optionId: 'reject_once', name: 'Reject', kind: 'reject_once' },
  { optionId: 'reject_always', name: 'Always reject', kind: 'reject_always' },
];

function request(extra: Partial<ApprovalRequestParams> = {}): ApprovalRequestParams {
  return {
    sessionId: 's1',
    approvalId: 'a1',
    toolCall: { toolCallId: 'c1', title: 'Run tests', kind: 'execute', locations: [] },
    options,
    ...extra,
  };
}

/** ui answers choose() from a list and records the calls. */
function ui(answers: Array<string | undefined>, feedback?: string) {
  const calls: string[] = [];
  return {
    calls,
    choose: async (message: string, detail: string | undefined, buttons: string[]) => {
      calls.push(`choose ${buttons.join('|')}`);
      return answers.shift();
    },
    askFeedback: async () => {
      calls.push('feedback');
      return feedback;
    },
    showDiff: async () => void calls.push('diff'),
  };
}

test('capabilities: experimental.cline is added next to other experimental entries', () => {
  const caps: { experimental?: unknown } = { experimental: { other: 1 } };
  fillClineCapabilities(caps);
  assert.deepEqual(caps.experimental, { other: 1, cline: { approvals: true, diffs: true, questions: true, diagnostics: true } });
  const empty: { experimental?: unknown } = {};
  fillClineCapabilities(empty);
  assert.deepEqual(empty.experimental, { cline: clineCapabilities });
});

test('settings: only what is set is sent, unknown modes and policies are dropped', () => {
  const values: Record<string, unknown> = {
    path: '  ',
    provider: 'anthropic',
    model: 'claude-sonnet-4-5',
    baseUrl: '',
    apiKeyEnv: 'MY_KEY',
    mode: 'plan',
    approvals: { edit: 'ask', execute: 'sometimes', bogus: 'allow' },
  };
  const s = readSettings((k) => values[k]);
  assert.equal(s.path, 'cline-ls');
  assert.deepEqual(initializationOptions(s), {
    provider: { name: 'anthropic', model: 'claude-sonnet-4-5', apiKeyEnv: 'MY_KEY' },
    mode: 'plan',
    approvals: { edit: 'ask' },
  });
  assert.deepEqual(initializationOptions(readSettings(() => undefined)), {});
  assert.deepEqual(initializationOptions({ ...s, mode: 'turbo' }).mode, undefined);
  // Extras merge in, the provider field by field; a change sends what is
  // unset as null, so the daemon drops its earlier value.
  assert.deepEqual(didChangeConfigurationParams(s, { provider: { transcript: '/t.json' }, stateDir: '/st' }).settings, {
    provider: { name: 'anthropic', model: 'claude-sonnet-4-5', baseUrl: null, apiKeyEnv: 'MY_KEY', transcript: '/t.json' },
    mode: 'plan',
    approvals: { edit: 'ask' },
    stateDir: '/st',
  });
});

test('settings: a cleared setting reaches the daemon as null; an empty model is the provider default', () => {
  const before = readSettings((k) => ({ provider: 'anthropic', model: 'claude-sonnet-4-5', mode: 'plan', approvals: { edit: 'ask' } })[k]);
  const cleared = readSettings((k) => ({ provider: 'anthropic', model: '' })[k]);
  assert.equal(initializationOptions(before).provider?.model, 'claude-sonnet-4-5');
  // At start an empty model is left out, not sent as "" nor refused.
  assert.deepEqual(initializationOptions(cleared), { provider: { name: 'anthropic' } });
  assert.deepEqual(didChangeConfigurationParams(cleared).settings, {
    provider: { name: 'anthropic', model: null, baseUrl: null, apiKeyEnv: null, transcript: null },
    mode: null,
    approvals: null,
  });
  // cline.transcript picks the replay model's recording.
  const replay = readSettings((k) => ({ provider: 'replay', transcript: '/rec.json' })[k]);
  assert.deepEqual(initializationOptions(replay), { provider: { name: 'replay', transcript: '/rec.json' } });
});

test('approvals: Allow / Always / Reject, and Show Diff only with a diff', () => {
  assert.deepEqual(approvalButtons(request()).map((b) => b.label), ['Allow', 'Always', 'Reject']);
  assert.deepEqual(approvalButtons(request({ diff: '--- a/x\n' })).map((b) => b.label), ['Allow', 'Always', 'Reject', 'Show Diff']);
});

test('approvals: the message names the action; commands and diffs are its detail', () => {
  assert.deepEqual(approvalMessage(request({ command: 'make test' })), { message: 'Allow Cline to run tests?', detail: '$ make test' });
  assert.deepEqual(approvalMessage(request({ diff: '--- a/x\n' })), { message: 'Allow Cline to run tests?', detail: '--- a/x\n' });
  assert.deepEqual(approvalMessage(request()), { message: 'Allow Cline to run tests?' });
});

test('approvals: Show Diff asks again; Always picks allow_always', async () => {
  const u = ui(['Show Diff', 'Always']);
  const res = await decideApproval(request({ diff: '--- a/x\n' }), u);
  assert.deepEqual(res, { approvalId: 'a1', outcome: { outcome: 'selected', optionId: 'allow_always' } });
  assert.deepEqual(u.calls, ['choose Allow|Always|Reject|Show Diff', 'diff', 'choose Allow|Always|Reject|Show Diff']);
});

test('approvals: Reject asks for feedback; dismissing rejects without asking', async () => {
  const rejected = await decideApproval(request(), ui(['Reject'], '  use make test  '));
  assert.deepEqual(rejected, { approvalId: 'a1', outcome: { outcome: 'selected', optionId: 'reject_once' }, feedback: 'use make test' });
  assert.equal(describeDecision(request(), rejected), 'reject (“use make test”)');
  const u = ui([undefined]);
  const dismissed = await decideApproval(request(), u);
  assert.deepEqual(dismissed, { approvalId: 'a1', outcome: { outcome: 'selected', optionId: 'reject_once' } });
  assert.deepEqual(u.calls, ['choose Allow|Always|Reject']);
  // No reject option at all: the only honest answer is cancelled.
  const none = await decideApproval(request({ options: [options[0]] }), ui([undefined]));
  assert.deepEqual(none.outcome, { outcome: 'cancelled' });
});

test('approvals: the answer is sent as cline/approvalResponse, unless the session was cancelled', async () => {
  const sent: Array<[string, unknown]> = [];
  const rpc: Rpc = {
    request: async <R>(m: string, p: unknown) => {
      sent.push([m, p]);
      return {} as R;
    },
    notify: () => undefined,
  };
  let release!: (s: string) => void;
  const gate = new Promise<string>((r) => (release = r));
  const a = new Approvals(rpc, { choose: () => gate, askFeedback: async () => undefined, showDiff: async () => undefined });
  const first = a.handle(request());
  release('Allow');
  assert.deepEqual(await first, { approvalId: 'a1', outcome: { outcome: 'selected', optionId: 'allow_once' } });
  assert.deepEqual(sent, [['cline/approvalResponse', { approvalId: 'a1', outcome: { outcome: 'selected', optionId: 'allow_once' } }]]);

  const never = new Approvals(rpc, { choose: async () => 'Allow', askFeedback: async () => undefined, showDiff: async () => undefined });
  const late = never.handle(request({ approvalId: 'a2' }));
  never.cancelSession('s1');
  assert.equal(await late, undefined);
  assert.equal(sent.length, 1);
});

test('questions: pick an option, type another answer, or dismiss', async () => {
  const q = { sessionId: 's1', question: 'Which?', options: ['a', 'b'] };
  const seen: string[][] = [];
  const pickUI = (picked: string | undefined, typed?: string) => ({
    pick: async (_t: string, items: string[]) => {
      seen.push(items);
      return picked;
    },
    input: async () => typed,
  });
  assert.deepEqual(await answerQuestion(q, pickUI('b')), { answer: 'b' });
  assert.deepEqual(seen[0], ['a', 'b', OtherAnswer]);
  assert.deepEqual(await answerQuestion(q, pickUI(OtherAnswer, 'c')), { answer: 'c' });
  assert.deepEqual(await answerQuestion(q, pickUI(undefined)), { answer: null });
  assert.deepEqual(await answerQuestion({ ...q, options: [] }, pickUI('x', 'free text')), { answer: 'free text' });
});

test('session view: chunks stream on one line, events get their own lines, sessions get headers', () => {
  const sink = new StringSink();
  const view = new SessionView(sink);
  const tracker = new SessionTracker();
  const send = (sessionId: string, update: any) => {
    const p = { sessionId, update };
    view.update(p, tracker.apply(p));
  };
  send('s1', { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Let me ' } });
  send('s1', { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'look.' } });
  send('s1', { sessionUpdate: 'tool_call', toolCallId: 't1', title: 'read_files', kind: 'read', status: 'pending', locations: [{ path: 'a.go', line: 3 }] });
  send('s1', { sessionUpdate: 'tool_call_update', toolCallId: 't1', status: 'in_progress', title: 'Read a.go' });
  send('s1', { sessionUpdate: 'tool_call_update', toolCallId: 't1', status: 'failed', content: [{ type: 'content', content: { type: 'text', text: 'no such file' } }] });
  send('s2', { sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: 'hmm' } });
  send('s2', { sessionUpdate: 'plan', entries: [{ content: 'one', status: 'completed' }, { content: 'two', status: 'in_progress' }, { content: 'three' }] });
  send('s2', { sessionUpdate: 'current_mode_update', currentModeId: 'act' });
  send('s2', { sessionUpdate: 'usage_update', inputTokens: 10, outputTokens: 2 });
  send('s2', { sessionUpdate: 'usage_update', inputTokens: 5, outputTokens: 1, costUsd: 0.5 });
  assert.equal(
    sink.text,
    [
      '── session s1 ──',
      'Let me look.',
      '○ read_files [read] (a.go:3): pending',
      '◐ Read a.go [read]: in_progress',
      '✗ Read a.go [read]: failed',
      '    no such file',
      '── session s2 ──',
      '(thinking) hmm',
      'Plan:',
      '  [x] one',
      '  [~] two',
      '  [ ] three',
      'Mode: act',
      'Tokens: 10 in, 2 out',
      'Tokens: 15 in, 3 out, $0.5000',
      '',
    ].join('\n'),
  );
  assert.equal(tracker.get('s2')!.mode, 'act');
  assert.equal(tracker.get('s1')!.toolCalls.get('t1')!.status, 'failed');
});

test('cline/diff renders as a header and the changed lines', () => {
  const text = formatClineDiff({
    sessionId: 's1',
    toolCallId: 'c1',
    uri: 'file:///ws/hello.txt',
    version: 4,
    diff: 'Edited hello.txt\n```diff\n-1: hello\n+1: hello, world\n```\n',
    added: 1,
    removed: 1,
  });
  assert.equal(text, 'Δ hello.txt (+1 −1, buffer v4)\n    -1: hello\n    +1: hello, world');
});

test('checkpoint list and preview: newest first, paths in the folder, statuses said in words, no markdown fences', () => {
  const cps = [
    { checkpointId: 'a', turn: 0, time: '2026-01-02T03:04:05Z', title: 'Before: fix it', files: [] },
    { checkpointId: 'b', turn: 0, toolCallId: 'c1', time: '2026-01-02T03:04:06Z', title: 'After: Edit a.go', files: ['/ws/a.go', '/elsewhere/b.go'] },
  ];
  const items = checkpointItems(cps, '/ws');
  assert.deepEqual(items.map((i) => i.checkpoint.checkpointId), ['b', 'a']);
  assert.match(items[0].description, / · turn 0 · after c1$/);
  assert.equal(items[0].detail, 'a.go, /elsewhere/b.go');
  assert.equal(items[1].detail, 'no files changed');
  const text = checkpointPreview(cps[0], [
    { path: '/ws/a.go', status: 'modified', diff: 'Edited /ws/a.go\n```diff\n-1: new\n+1: old\n```' },
    { path: '/ws/n.go', status: 'created', diff: '' },
    { path: '/ws/d.go', status: 'deleted', diff: '' },
  ], '/ws');
  assert.match(text, /^--- a\.go \(modified\)\nEdited \/ws\/a\.go\n-1: new\n\+1: old$/m);
  assert.match(text, /^--- n\.go \(created since: would be deleted\)$/m);
  assert.match(text, /^--- d\.go \(deleted since: would be recreated\)$/m);
  assert.doesNotMatch(text, /```/);
  assert.match(checkpointPreview(cps[0], []), /nothing: the files are as they were/);
});
