// The chat view's model: what the side bar shows of the current session
// (the user's prompts, the agent's streamed text as markdown, tool calls
// as cards with their status, approvals inside their call's card, applied
// diffs, the plan, notes) and the header's state (mode, model, usage,
// whether a turn runs). It knows nothing of VS Code: it is fed the
// daemon's events and the webview's messages, and posts what changed to
// the webview. Approvals asked here wait until the webview answers them.

import { approvalButtons } from './approvals';
import { renderMarkdown } from './markdown';
import { outcomeOf, toolOutputText } from './session';
import type { ApprovalRequestParams, ApprovalResponseParams, ClineDiffParams, ModeInfo, PlanEntry, SessionUpdateParams } from './types';

export interface ChatApproval {
  approvalId: string;
  command?: string;
  diff?: string;
  buttons: Array<{ optionId: string; label: string; kind: string }>;
  /** answered is what the user decided, once they did ("allow", "reject: why", "cancelled"). */
  answered?: string;
}

export type ChatItem =
  | { id: string; kind: 'user'; text: string; mentions: string[]; turn: number; undone?: boolean }
  | { id: string; kind: 'agent' | 'thought'; text: string; html: string; turn: number; undone?: boolean }
  | {
      id: string;
      kind: 'tool';
      toolCallId: string;
      title: string;
      toolKind?: string;
      /** status is the call's outcome as the user sees it: pending, in_progress, completed, failed, rejected, cancelled. */
      status: string;
      output: string;
      /** notes are what the user's hooks did to the call ("Hook PreToolUse (…): blocked: …"), shown on the card whatever else it shows. */
      notes?: string;
      /** applied is the compact diff of an edit once it landed, with its counts. */
      applied?: { diff: string; added: number; removed: number };
      approval?: ChatApproval;
      turn: number;
      undone?: boolean;
    }
  | { id: string; kind: 'plan'; entries: PlanEntry[]; turn: number; undone?: boolean }
  | { id: string; kind: 'note'; text: string; level: 'info' | 'error'; turn: number; undone?: boolean };

export interface ChatUsage {
  inputTokens: number;
  outputTokens: number;
  costUsd?: number;
  context?: { used: number; size: number };
}

export interface ChatState {
  sessionId?: string;
  /** mode is the session's mode, or the one the next task starts in. */
  mode: string;
  modes: ModeInfo[];
  model: string;
  running: boolean;
  usage: ChatUsage;
  /** pending counts the approvals waiting for the user. */
  pending: number;
  /** meter is usageText of usage, empty without a session. */
  meter: string;
}

/** A mention the prompt box holds: a file, or a selection in one. */
export type Mention =
  | { kind: 'file'; path: string }
  | { kind: 'selection'; path: string; startLine: number; endLine: number; text: string };

/** What the chat model posts to the webview. */
export type ToWebview =
  | { type: 'reset'; state: ChatState; items: ChatItem[] }
  | { type: 'item'; item: ChatItem }
  | { type: 'state'; state: ChatState }
  | { type: 'sessions'; sessions: Array<{ sessionId: string; title: string; updatedAt: string; current: boolean }> }
  | { type: 'mention'; mention: Mention; label: string }
  | { type: 'focus' };

/** What the webview posts to the extension. */
export type FromWebview =
  | { type: 'ready' }
  | { type: 'send'; text: string; mentions: Mention[] }
  | { type: 'answer'; approvalId: string; optionId: string; feedback?: string }
  | { type: 'openDiff'; toolCallId: string }
  | { type: 'cancel' }
  | { type: 'undo' }
  | { type: 'checkpoints' }
  | { type: 'newTask' }
  | { type: 'setMode'; mode: string }
  | { type: 'pickModel' }
  | { type: 'history' }
  | { type: 'resume'; sessionId: string }
  | { type: 'mention'; kind: 'file' | 'selection' };

/** isFromWebview checks a message's shape: the webview is a page, so what it posts is checked before use. */
export function isFromWebview(m: unknown): m is FromWebview {
  if (!m || typeof m !== 'object') return false;
  const o = m as Record<string, unknown>;
  const str = (k: string) => typeof o[k] === 'string';
  switch (o.type) {
    case 'ready':
    case 'cancel':
    case 'undo':
    case 'checkpoints':
    case 'newTask':
    case 'pickModel':
    case 'history':
      return true;
    case 'send':
      return str('text') && Array.isArray(o.mentions) && (o.mentions as unknown[]).every(isMention);
    case 'answer':
      return str('approvalId') && str('optionId') && (o.feedback === undefined || str('feedback'));
    case 'openDiff':
      return str('toolCallId');
    case 'setMode':
      return str('mode');
    case 'resume':
      return str('sessionId');
    case 'mention':
      return o.kind === 'file' || o.kind === 'selection';
  }
  return false;
}

function isMention(m: unknown): m is Mention {
  if (!m || typeof m !== 'object') return false;
  const o = m as Record<string, unknown>;
  if (typeof o.path !== 'string') return false;
  if (o.kind === 'file') return true;
  return o.kind === 'selection' && typeof o.startLine === 'number' && typeof o.endLine === 'number' && typeof o.text === 'string';
}

/** mentionLabel is how a mention is shown: @name or @name:3-5. */
export function mentionLabel(m: Mention, root?: string): string {
  let p = m.path;
  if (root && p.startsWith(root.replace(/\/$/, '') + '/')) p = p.slice(root.replace(/\/$/, '').length + 1);
  if (m.kind === 'file') return `@${p}`;
  return m.startLine === m.endLine ? `@${p}:${m.startLine}` : `@${p}:${m.startLine}-${m.endLine}`;
}

/** ContentBlock is a prompt content block (text, resource_link, resource). */
export type ContentBlock =
  | { type: 'text'; text: string }
  | { type: 'resource_link'; uri: string; name: string }
  | { type: 'resource'; resource: { uri: string; text: string; mimeType?: string } };

/**
 * promptBlocks is the prompt as the daemon takes it: the text, then a
 * resource_link per mentioned file and an embedded resource per selection
 * (its uri names the lines, 1-based, as #L3-5).
 */
export function promptBlocks(text: string, mentions: Mention[]): ContentBlock[] {
  const blocks: ContentBlock[] = [{ type: 'text', text }];
  for (const m of mentions) {
    const uri = fileUri(m.path);
    if (m.kind === 'file') blocks.push({ type: 'resource_link', uri, name: m.path.split('/').pop() ?? m.path });
    else blocks.push({ type: 'resource', resource: { uri: `${uri}#L${m.startLine}-${m.endLine}`, text: m.text, mimeType: 'text/plain' } });
  }
  return blocks;
}

function fileUri(p: string): string {
  return 'file://' + p.split('/').map(encodeURIComponent).join('/');
}

/** usageText is the meter: tokens in and out, cost, and how full the context is. */
export function usageText(u: ChatUsage): string {
  const parts = [`${compact(u.inputTokens)} in`, `${compact(u.outputTokens)} out`];
  if (u.costUsd !== undefined) parts.push(`$${u.costUsd.toFixed(u.costUsd < 1 ? 4 : 2)}`);
  if (u.context && u.context.size > 0) parts.push(`context ${compact(u.context.used)}/${compact(u.context.size)} (${Math.round((100 * u.context.used) / u.context.size)}%)`);
  return parts.join(' · ');
}

function compact(n: number): string {
  if (n >= 1_000_000) return `${(n / 1_000_000).toFixed(1)}M`;
  if (n >= 10_000) return `${Math.round(n / 1000)}k`;
  if (n >= 1000) return `${(n / 1000).toFixed(1)}k`;
  return String(n);
}

interface Waiting {
  req: ApprovalRequestParams;
  resolve: (res: ApprovalResponseParams) => void;
}

/**
 * ChatModel holds the current session's items and state. Every change is
 * posted to the webview as the changed item or state; reset() sends all
 * of it, for a view that was (re)created.
 */
export class ChatModel {
  private items: ChatItem[] = [];
  private readonly byId = new Map<string, ChatItem>();
  private readonly waiting = new Map<string, Waiting>();
  private seq = 0;
  private turn = 0;
  /** stream is the id of the agent or thought item that chunks append to, if any. */
  private stream: string | undefined;
  readonly state: ChatState;

  constructor(
    private readonly post: (m: ToWebview) => void,
    init: { mode: string; model: string },
  ) {
    this.state = { mode: init.mode, modes: [], model: init.model, running: false, usage: { inputTokens: 0, outputTokens: 0 }, pending: 0, meter: '' };
  }

  /** all is every item, oldest first. */
  all(): readonly ChatItem[] {
    return this.items;
  }

  reset(): void {
    this.state.meter = this.meterText();
    this.post({ type: 'reset', state: this.state, items: this.items });
  }

  /** startSession clears the view for a new or resumed session. */
  startSession(sessionId: string, mode: string | undefined, modes: ModeInfo[] | undefined): void {
    this.cancelWaiting();
    this.items = [];
    this.byId.clear();
    this.stream = undefined;
    this.turn = 0;
    this.state.sessionId = sessionId;
    if (mode) this.state.mode = mode;
    if (modes && modes.length) this.state.modes = modes;
    this.state.usage = { inputTokens: 0, outputTokens: 0 };
    this.state.running = false;
    this.reset();
  }

  /** clear forgets the session: the next prompt starts a new task. */
  clear(): void {
    this.cancelWaiting();
    this.items = [];
    this.byId.clear();
    this.stream = undefined;
    this.state.sessionId = undefined;
    this.state.running = false;
    this.state.usage = { inputTokens: 0, outputTokens: 0 };
    this.reset();
    this.post({ type: 'focus' });
  }

  setState(change: Partial<ChatState>): void {
    Object.assign(this.state, change);
    this.state.meter = this.meterText();
    this.post({ type: 'state', state: this.state });
  }

  /** prompt shows the user's prompt and opens a new turn. */
  prompt(text: string, mentions: string[]): void {
    this.turn = this.items.some((i) => i.kind === 'user') ? this.turn + 1 : this.turn;
    this.stream = undefined;
    this.add({ id: this.nextId(), kind: 'user', text, mentions, turn: this.turn });
  }

  /** update folds one session/update of the current session into the view. */
  update(p: SessionUpdateParams): void {
    if (!p?.update || p.sessionId !== this.state.sessionId) return;
    const u = p.update;
    switch (u.sessionUpdate) {
      case 'agent_message_chunk':
      case 'agent_thought_chunk': {
        const text = u.content?.text ?? '';
        if (!text) return;
        const kind = u.sessionUpdate === 'agent_message_chunk' ? 'agent' : 'thought';
        const cur = this.stream ? this.byId.get(this.stream) : undefined;
        if (cur && cur.kind === kind) {
          cur.text += text;
          cur.html = renderMarkdown(cur.text);
          this.post({ type: 'item', item: cur });
        } else {
          const item: ChatItem = { id: this.nextId(), kind, text, html: renderMarkdown(text), turn: this.turn };
          this.stream = item.id;
          this.add(item);
        }
        return;
      }
      case 'user_message_chunk': {
        // A loaded session replays its prompts as user chunks.
        const text = u.content?.text ?? '';
        const last = this.items[this.items.length - 1];
        if (last?.kind === 'user' && this.stream === last.id) {
          last.text += text;
          this.post({ type: 'item', item: last });
        } else {
          this.prompt(text, []);
          this.stream = this.items[this.items.length - 1].id;
        }
        return;
      }
      case 'tool_call': {
        this.stream = undefined;
        const item = this.tool(u.toolCallId, u.title);
        item.title = u.title;
        item.toolKind = u.kind;
        item.status = u.status ?? 'pending';
        this.post({ type: 'item', item });
        return;
      }
      case 'tool_call_update': {
        const item = this.tool(u.toolCallId, u.title ?? u.toolCallId);
        if (u.title) item.title = u.title;
        let out = toolOutputText(u);
        if (!u.status && out) {
          // Content with no status is the daemon's notes for the card,
          // each update carrying them all; the result repeats them first.
          item.notes = out;
          out = '';
        } else if (item.notes && out.startsWith(item.notes)) out = out.slice(item.notes.length).replace(/^\n/, '');
        if (out) item.output = out;
        if (u.status) {
          const decision = item.approval?.answered?.startsWith('reject') ? 'rejected' : item.approval?.answered === 'cancelled' ? 'cancelled' : undefined;
          item.status = outcomeOf(u.status, decision, item.output);
        }
        this.post({ type: 'item', item });
        return;
      }
      case 'plan': {
        this.stream = undefined;
        const cur = this.items.find((i): i is Extract<ChatItem, { kind: 'plan' }> => i.kind === 'plan' && i.turn === this.turn);
        if (cur) {
          cur.entries = u.entries ?? [];
          this.post({ type: 'item', item: cur });
        } else this.add({ id: this.nextId(), kind: 'plan', entries: u.entries ?? [], turn: this.turn });
        return;
      }
      case 'current_mode_update':
        this.setState({ mode: u.currentModeId });
        return;
      case 'compaction':
        // The older turns were replaced to fit the context window; the
        // session file keeps them.
        this.note(`Context compacted: about ${u.before} → ${u.after} tokens${u.historyFile ? `; the replaced turns stay in ${u.historyFile}` : ''}.`);
        return;
      case 'config_option_update': {
        // The daemon says which model the session's next turn uses (the
        // settings changed): the chip shows it without a reload.
        const model = (u.configOptions ?? []).find((o) => o.id === 'model');
        if (model) this.setState({ model: model.currentValue });
        return;
      }
      case 'usage_update': {
        const x = u as typeof u & { session?: { inputTokens?: number; outputTokens?: number; costUsd?: number }; context?: { used: number; size: number } };
        const usage = this.state.usage;
        if (x.session) {
          usage.inputTokens = x.session.inputTokens ?? usage.inputTokens;
          usage.outputTokens = x.session.outputTokens ?? usage.outputTokens;
          if (x.session.costUsd !== undefined) usage.costUsd = x.session.costUsd;
        } else {
          usage.inputTokens += x.inputTokens ?? 0;
          usage.outputTokens += x.outputTokens ?? 0;
          if (x.costUsd !== undefined) usage.costUsd = (usage.costUsd ?? 0) + x.costUsd;
        }
        if (x.context) usage.context = { used: x.context.used, size: x.context.size };
        this.setState({ usage });
        return;
      }
    }
  }

  /** diff attaches an applied edit to its call's card. */
  diff(d: ClineDiffParams): void {
    if (d.sessionId !== this.state.sessionId) return;
    const item = this.tool(d.toolCallId, d.uri);
    item.applied = { diff: d.diff, added: d.added, removed: d.removed };
    this.post({ type: 'item', item });
  }

  /**
   * ask shows an approval in its call's card and resolves with the user's
   * answer from the webview. Nothing answers it but a click on one of its
   * buttons (or the session's cancel).
   */
  ask(req: ApprovalRequestParams): Promise<ApprovalResponseParams> {
    if (req.sessionId !== this.state.sessionId) {
      // Not the session on show (an editor call, or another window's
      // session): it still has to be answered, so show it here.
      this.note(`Approval for another session (${req.sessionId}):`, 'info');
    }
    this.stream = undefined;
    const item = this.tool(req.toolCall.toolCallId, req.toolCall.title);
    if (item.title === item.toolCallId) item.title = req.toolCall.title;
    item.toolKind ??= req.toolCall.kind;
    const buttons = approvalButtons(req)
      .filter((b) => b.option)
      .map((b) => ({ optionId: b.option!.optionId, label: b.label, kind: b.option!.kind }));
    item.approval = { approvalId: req.approvalId, command: req.command, diff: req.diff, buttons };
    this.post({ type: 'item', item });
    return new Promise((resolve) => {
      this.waiting.set(req.approvalId, { req, resolve });
      this.setState({ pending: this.waiting.size });
    });
  }

  /** answer takes the webview's answer to an approval; an unknown or answered one is ignored. */
  answer(approvalId: string, optionId: string, feedback?: string): boolean {
    const w = this.waiting.get(approvalId);
    if (!w) return false;
    const option = w.req.options.find((o) => o.optionId === optionId);
    if (!option) return false;
    this.waiting.delete(approvalId);
    const res: ApprovalResponseParams = { approvalId, outcome: { outcome: 'selected', optionId } };
    const why = feedback?.trim();
    if (why && option.kind.startsWith('reject')) res.feedback = why;
    this.markAnswered(w.req, res.feedback ? `${option.name.toLowerCase()}: ${res.feedback}` : option.name.toLowerCase());
    this.setState({ pending: this.waiting.size });
    w.resolve(res);
    return true;
  }

  /** cancelSession answers the session's waiting approvals as cancelled (the daemon resolved them already). */
  cancelSession(sessionId: string): void {
    for (const [id, w] of this.waiting) {
      if (w.req.sessionId !== sessionId) continue;
      this.waiting.delete(id);
      this.markAnswered(w.req, 'cancelled');
      w.resolve({ approvalId: id, outcome: { outcome: 'cancelled' } });
    }
    this.setState({ pending: this.waiting.size });
  }

  /** waitingApprovals lists the approvals that wait for the user. */
  waitingApprovals(): ApprovalRequestParams[] {
    return [...this.waiting.values()].map((w) => w.req);
  }

  /** toolItem returns a call's card. */
  toolItem(toolCallId: string): Extract<ChatItem, { kind: 'tool' }> | undefined {
    const item = this.byId.get(`tool:${toolCallId}`);
    return item?.kind === 'tool' ? item : undefined;
  }

  stopped(stopReason: string): void {
    this.stream = undefined;
    if (stopReason !== 'end_turn') this.note(`Turn ended: ${stopReason}`, 'info');
  }

  note(text: string, level: 'info' | 'error' = 'info'): void {
    this.stream = undefined;
    this.add({ id: this.nextId(), kind: 'note', text, level, turn: this.turn });
  }

  /**
   * rewound greys out what a restore of the conversation took back: the
   * turn of the earliest of the given tool calls (the calls the restored
   * turn's checkpoints were taken after) and every later turn. Turns are
   * found by their calls, not counted, since a replayed history also shows
   * turns an earlier restore took back. It is false when the chat shows
   * none of the calls.
   */
  rewound(toolCallIds: string[]): boolean {
    const turns = this.items.filter((i) => i.kind === 'tool' && !i.undone && toolCallIds.includes(i.toolCallId)).map((i) => i.turn);
    if (!turns.length) return false;
    this.undone(Math.min(...turns));
    return true;
  }

  /** undone greys out the items of the chat's turn and every later one. */
  private undone(turn: number): void {
    for (const i of this.items) {
      if (i.turn >= turn && !i.undone) {
        i.undone = true;
        this.post({ type: 'item', item: i });
      }
    }
  }

  private meterText(): string {
    return this.state.sessionId ? usageText(this.state.usage) : '';
  }

  private markAnswered(req: ApprovalRequestParams, answered: string): void {
    const item = this.toolItem(req.toolCall.toolCallId);
    if (item?.approval && item.approval.approvalId === req.approvalId) {
      item.approval.answered = answered;
      this.post({ type: 'item', item });
    }
  }

  private cancelWaiting(): void {
    for (const [id, w] of this.waiting) w.resolve({ approvalId: id, outcome: { outcome: 'cancelled' } });
    this.waiting.clear();
    this.state.pending = 0;
  }

  private tool(toolCallId: string, title: string): Extract<ChatItem, { kind: 'tool' }> {
    const have = this.toolItem(toolCallId);
    if (have) return have;
    const item: ChatItem = { id: `tool:${toolCallId}`, kind: 'tool', toolCallId, title, status: 'pending', output: '', turn: this.turn };
    this.add(item);
    return item;
  }

  private add(item: ChatItem): void {
    this.items.push(item);
    this.byId.set(item.id, item);
    this.post({ type: 'item', item });
  }

  private nextId(): string {
    return `i${++this.seq}`;
  }
}
