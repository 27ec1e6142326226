// The chat view's model and its markdown, without VS Code.

import * as assert from 'node:assert/strict';
import { test } from 'node:test';

import { ChatModel, isFromWebview, mentionLabel, promptBlocks, ToWebview, usageText } from '../protocol/chat';
import { undoPoint } from '../protocol/controller';
import { renderMarkdown } from '../protocol/markdown';
import type { ApprovalRequestParams } from '../protocol/types';

const req = (approvalId: string, toolCallId: string): ApprovalRequestParams => ({
  sessionId: 's1',
  approvalId,
  toolCall: { toolCallId, title: 'Edit a.txt', kind: 'edit' },
  diff: '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n',
  options: [
    { optionId: 'y', name: 'Allow', kind: 'allow_once' },
    { optionId: 'a', name: 'Always allow', kind: 'allow_always' },
    { optionId: 'n', name: 'Reject', kind: 'reject_once' },
  ],
});

function model(): { chat: ChatModel; posted: ToWebview[] } {
  const posted: ToWebview[] = [];
  const chat = new ChatModel((m) => posted.push(JSON.parse(JSON.stringify(m))), { mode: 'act', model: '' });
  chat.startSession('s1', 'act', []);
  return { chat, posted };
}

test('markdown: the model\'s text never becomes markup of its own', () => {
  const html = renderMarkdown('<script>alert(1)</script> **b** <img src=x onerror=alert(1)> [x](javascript:alert(1)) `<i>`');
  assert.ok(!/<script|<img|<i>|href="javascript/.test(html), html);
  assert.ok(html.includes('&lt;script&gt;') && html.includes('<strong>b</strong>') && html.includes('<code>&lt;i&gt;</code>'), html);
  assert.equal(renderMarkdown('[site](https://example.org/a?b=1)'), '<p><a href="https://example.org/a?b=1">site</a></p>');
  assert.equal(renderMarkdown('```go\nx := "<"'), '<pre><code class="language-go">x := &quot;&lt;&quot;</code></pre>', 'an unclosed fence (still streaming) is code');
  assert.equal(renderMarkdown('# T\n- a\n- b\n\n1. c'), '<h3>T</h3><ul><li>a</li><li>b</li></ul><ol><li>c</li></ol>');
});

test('chat: chunks stream into one item until a tool call, whose card takes its updates and diff', () => {
  const { chat, posted } = model();
  chat.prompt('do it', []);
  for (const t of ['Hel', 'lo *there*']) chat.update({ sessionId: 's1', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: t } } });
  chat.update({ sessionId: 's1', update: { sessionUpdate: 'tool_call', toolCallId: 'c1', title: 'Edit a.txt', kind: 'edit', status: 'pending' } });
  chat.update({ sessionId: 's1', update: { sessionUpdate: 'tool_call_update', toolCallId: 'c1', status: 'completed' } });
  chat.diff({ sessionId: 's1', toolCallId: 'c1', uri: 'file:///a.txt', version: 2, diff: 'Edited a.txt\n```diff\n-a\n+b\n```', added: 1, removed: 1 });
  chat.update({ sessionId: 'other', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'not shown' } } });
  const kinds = chat.all().map((i) => i.kind);
  assert.deepEqual(kinds, ['user', 'agent', 'tool']);
  const agent = chat.all()[1] as { html: string };
  assert.equal(agent.html, '<p>Hello <em>there</em></p>');
  const card = chat.toolItem('c1')!;
  assert.equal(card.status, 'completed');
  assert.equal(card.applied?.added, 1);
  assert.ok(posted.every((m) => m.type !== 'item' || m.item.kind !== 'agent' || !m.item.text.includes('not shown')));
});

test('chat: hook notes (content with no status) stay on the card, an edit\'s too, and are not repeated by the result', () => {
  const { chat } = model();
  chat.prompt('do it', []);
  const text = (t: string) => ({ type: 'content' as const, content: { type: 'text' as const, text: t } });
  const note = 'Hook PreToolUse (no-rm-rf.sh): blocked: no';
  chat.update({ sessionId: 's1', update: { sessionUpdate: 'tool_call', toolCallId: 'c1', title: 'Run rm -rf b', kind: 'execute', status: 'pending' } });
  chat.update({ sessionId: 's1', update: { sessionUpdate: 'tool_call_update', toolCallId: 'c1', content: [text(note)] } });
  chat.update({ sessionId: 's1', update: { sessionUpdate: 'tool_call_update', toolCallId: 'c1', status: 'failed', content: [text(note), text('refused: no')] } });
  assert.equal(chat.toolItem('c1')?.notes, note);
  assert.equal(chat.toolItem('c1')?.output, 'refused: no');
  const added = 'Hook PostToolUse (go-vet.py): added context';
  chat.update({ sessionId: 's1', update: { sessionUpdate: 'tool_call', toolCallId: 'c2', title: 'Edit a.go', kind: 'edit', status: 'pending' } });
  chat.update({ sessionId: 's1', update: { sessionUpdate: 'tool_call_update', toolCallId: 'c2', content: [text(added)] } });
  chat.update({ sessionId: 's1', update: { sessionUpdate: 'tool_call_update', toolCallId: 'c2', status: 'completed', content: [text(added), text('Edited a.go')] } });
  chat.diff({ sessionId: 's1', toolCallId: 'c2', uri: 'file:///a.go', version: 2, diff: 'Edited a.go\n```diff\n-a\n+b\n```', added: 1, removed: 1 });
  assert.equal(chat.toolItem('c2')?.notes, added);
  assert.equal(chat.toolItem('c2')?.status, 'completed');
});

test('chat: an approval waits for its own answer; unknown options, second answers and other ids do nothing', async () => {
  const { chat } = model();
  const answer = chat.ask(req('ap1', 'c1'));
  assert.equal(chat.state.pending, 1);
  assert.equal(chat.answer('ap2', 'y'), false, 'another approval');
  assert.equal(chat.answer('ap1', 'zzz'), false, 'an option that was not offered');
  assert.equal(chat.answer('ap1', 'n', '  too broad '), true);
  assert.equal(chat.answer('ap1', 'y'), false, 'already answered');
  assert.deepEqual(await answer, { approvalId: 'ap1', outcome: { outcome: 'selected', optionId: 'n' }, feedback: 'too broad' });
  assert.equal(chat.toolItem('c1')!.approval!.answered, 'reject: too broad');
  assert.equal(chat.state.pending, 0);
  // Feedback goes with rejections only.
  const allowed = chat.ask(req('ap3', 'c2'));
  chat.answer('ap3', 'y', 'ignored');
  assert.equal((await allowed).feedback, undefined);
});

test('chat: cancelling the session answers its waiting approvals as cancelled', async () => {
  const { chat } = model();
  const answer = chat.ask(req('ap1', 'c1'));
  chat.cancelSession('s1');
  assert.deepEqual(await answer, { approvalId: 'ap1', outcome: { outcome: 'cancelled' } });
  assert.equal(chat.toolItem('c1')!.approval!.answered, 'cancelled');
  assert.equal(chat.answer('ap1', 'y'), false);
});

test('chat: usage comes from the session totals, with cost and the context meter', () => {
  const { chat } = model();
  chat.update({ sessionId: 's1', update: { sessionUpdate: 'usage_update', inputTokens: 5, outputTokens: 1, session: { inputTokens: 12_345, outputTokens: 600, costUsd: 0.0123 }, context: { used: 50_000, size: 200_000 } } as never });
  assert.equal(chat.state.meter, '12k in · 600 out · $0.0123 · context 50k/200k (25%)');
  assert.equal(usageText({ inputTokens: 1, outputTokens: 2 }), '1 in · 2 out');
});

test('chat: messages from the page are checked before use', () => {
  assert.ok(isFromWebview({ type: 'send', text: 'x', mentions: [{ kind: 'file', path: '/a' }] }));
  assert.ok(isFromWebview({ type: 'answer', approvalId: 'a', optionId: 'b' }));
  for (const bad of [null, 'send', { type: 'send', text: 1, mentions: [] }, { type: 'send', text: 'x', mentions: [{ kind: 'selection', path: '/a' }] }, { type: 'answer', approvalId: 'a' }, { type: 'eval', code: '1' }]) {
    assert.equal(isFromWebview(bad), false, JSON.stringify(bad));
  }
});

test('chat: mentions become resource blocks of the prompt', () => {
  const sel = { kind: 'selection' as const, path: '/ws/src/a b.ts', startLine: 3, endLine: 5, text: 'x' };
  assert.deepEqual(promptBlocks('look', [{ kind: 'file', path: '/ws/README.md' }, sel]), [
    { type: 'text', text: 'look' },
    { type: 'resource_link', uri: 'file:///ws/README.md', name: 'README.md' },
    { type: 'resource', resource: { uri: 'file:///ws/src/a%20b.ts#L3-5', text: 'x', mimeType: 'text/plain' } },
  ]);
  assert.equal(mentionLabel(sel, '/ws'), '@src/a b.ts:3-5');
  assert.equal(mentionLabel({ kind: 'file', path: '/elsewhere/x' }, '/ws'), '@/elsewhere/x');
});

test('undo: the checkpoint before the newest turn that changed files', () => {
  const c = (id: string, turn: number, toolCallId?: string) => ({ checkpointId: id, turn, toolCallId, time: '', title: id, files: [] });
  assert.equal(undoPoint([c('b0', 0), c('a0', 0, 'x'), c('b2', 2), c('a2', 2, 'y'), c('a2b', 2, 'z')])?.checkpointId, 'b2');
  assert.equal(undoPoint([]), undefined);
});
