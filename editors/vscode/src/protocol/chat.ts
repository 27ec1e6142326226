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
      applied?: { diff: string; added: number; removed: number; uri: string };
      approval?: ChatApproval;
      turn: number;
      undone?: boolean;
    }
  | { id: string; kind: 'plan'; entries: PlanEntry[]; turn: number; undone?: boolean }
  | { id: string; kind: 'note'; text: string; level: 'info' | 'error'; turn: number; undone?: boolean; actions?: NoteAction[] }
  | { id: string; kind: 'question'; question: string; options: string[]; answered?: string; turn: number; undone?: boolean };

/** NoteAction is a button of a note: clicking it posts the action's id back. */
export interface NoteAction {
  id: string;
  label: string;
}

/** ChatSetup is the first-run panel: shown while no model is configured. */
export interface ChatSetup {
  providers: string[];
  /** provider is the one picked, empty when none is. */
  provider: string;
  models: string[];
  model: string;
  /** keyEnv names the variable the key is read from, and keySet says whether VS Code's environment has it. */
  keyEnv: string;
  keySet: boolean;
}

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
  /** setup is the first-run panel, when no model is configured. */
  setup?: ChatSetup;
}

/**
 * A mention the prompt box holds: a file, or a selection in one. A file's
 * text is filled in when the prompt is sent (the buffer as it is then).
 */
export type Mention =
  | { kind: 'file'; path: string; text?: string }
  | { kind: 'selection'; path: string; startLine: number; endLine: number; text: string };

/** What the chat model posts to the webview. */
export type ToWebview =
  | { type: 'reset'; state: ChatState; items: ChatItem[] }
  | { type: 'item'; item: ChatItem }
  | { type: 'state'; state: ChatState }
  | { type: 'sessions'; sessions: Array<{ sessionId: string; title: string; updatedAt: string; current: boolean }> }
  | { type: 'mention'; mention: Mention; label: string }
  | { type: 'models'; models: string[]; current: string }
  /** sent says the prompt was taken: only then the page clears its box. */
  | { type: 'sent' }
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
  /** models asks for the provider's models, for the model chip's list. */
  | { type: 'models' }
  | { type: 'history' }
  | { type: 'resume'; sessionId: string }
  | { type: 'mention'; kind: 'file' | 'selection' }
  | { type: 'action'; itemId: string; actionId: string }
  | { type: 'answerQuestion'; itemId: string; answer: string | null }
  | { type: 'setModel'; model: string }
  | { type: 'setupProvider'; provider: string }
  | { type: 'setupModel'; model: string }
  | { type: 'openSettings' }
  | { type: 'tryDemo' };

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
    case 'models':
    case 'history':
    case 'openSettings':
    case 'tryDemo':
      return true;
    case 'action':
      return str('itemId') && str('actionId');
    case 'answerQuestion':
      return str('itemId') && (o.answer === null || str('answer'));
    case 'setModel':
      return str('model');
    case 'setupProvider':
      return str('provider');
    case 'setupModel':
      return str('model');
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
  if (o.kind === 'file') return o.text === undefined || typeof o.text === 'string';
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
 * promptBlocks is the prompt as the daemon takes it: the text, then an
 * embedded resource per mentioned file with its text (the buffer's, unsaved
 * changes included: the model need not read it), a resource_link for a file
 * whose text could not be read, and an embedded resource per selection (its
 * uri names the lines, 1-based, as #L3-5).
 */
export function promptBlocks(text: string, mentions: Mention[]): ContentBlock[] {
  const blocks: ContentBlock[] = [{ type: 'text', text }];
  for (const m of mentions) {
    const uri = fileUri(m.path);
    if (m.kind === 'file' && m.text !== undefined) blocks.push({ type: 'resource', resource: { uri, text: m.text, mimeType: 'text/plain' } });
    else if (m.kind === 'file') blocks.push({ type: 'resource_link', uri, name: m.path.split('/').pop() ?? m.path });
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

/**
 * splitMentions takes the mentions out of a prompt as the daemon keeps it
 * (a file's or selection's whole <file uri=…> text, a [file: file:///…]
 * link) and names them as the prompt box showed them: @name, @name:3-5.
 */
export function splitMentions(text: string): { text: string; mentions: string[] } {
  const mentions: string[] = [];
  const name = (uri: string) => {
    const [file, frag] = uri.split('#');
    let n = file.split('/').pop() || file;
    try {
      n = decodeURIComponent(n);
    } catch {
      // shown as it came
    }
    const lines = /^L(\d+)(?:-(\d+))?$/.exec(frag ?? '');
    mentions.push(lines ? `@${n}:${lines[1]}${lines[2] && lines[2] !== lines[1] ? '-' + lines[2] : ''}` : `@${n}`);
    return '';
  };
  const rest = text
    .replace(/\n?<file uri="([^"]*)">[\s\S]*?(?:<\/file>\n?|$)/g, (_, uri: string) => name(uri))
    .replace(/\n?\[file: ([^\]]*)\]\n?/g, (_, uri: string) => name(uri))
    // A mention cut short (a title the daemon shortened) names no file: it goes.
    .replace(/\s*(<file\b|\[file:)[^]*$/, '');
  return { text: rest.trimEnd(), mentions };
}

/**
 * sessionTitle is how a saved task is listed: what the user typed, then
 * its mentions as @name, on one line; a task without a title is named by
 * its time, never by its id.
 */
export function sessionTitle(title: string, updatedAt: string): string {
  const sp = splitMentions(title || '');
  const t = [sp.text, ...sp.mentions].join(' ').replace(/\s+/g, ' ').trim();
  if (t) return t.length > 80 ? t.slice(0, 79) + '…' : t;
  const d = new Date(updatedAt);
  return Number.isNaN(d.getTime()) ? 'Untitled task' : `Untitled task of ${d.toLocaleString()}`;
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
  /** questions wait for their card's answer; actions for a click on a note's button. */
  private readonly questions = new Map<string, (answer: string | null) => void>();
  private readonly actions = new Map<string, (actionId: string) => void>();
  /** rawPrompts are replayed prompts as the daemon sent them, before their mentions are taken out. */
  private readonly rawPrompts = new Map<string, string>();
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
        // A loaded session replays its prompts as user chunks, mentions
        // and all: they are shown as the prompt box showed them.
        const text = u.content?.text ?? '';
        let last = this.items[this.items.length - 1];
        if (!(last?.kind === 'user' && this.stream === last.id)) {
          this.prompt('', []);
          last = this.items[this.items.length - 1];
          this.stream = last.id;
        }
        if (last.kind !== 'user') return;
        const raw = (this.rawPrompts.get(last.id) ?? '') + text;
        this.rawPrompts.set(last.id, raw);
        const sp = splitMentions(raw);
        last.text = sp.text;
        last.mentions = sp.mentions;
        this.post({ type: 'item', item: last });
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
    item.applied = { diff: d.diff, added: d.added, removed: d.removed, uri: d.uri };
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
    if (sessionId === this.state.sessionId) for (const id of [...this.questions.keys()]) this.answerQuestion(id, null);
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

  /**
   * note shows a line of the extension's own; its actions are buttons,
   * and the first click on one runs onAction with its id (the buttons go
   * away: a note's choice is made once).
   */
  note(text: string, level: 'info' | 'error' = 'info', actions?: NoteAction[], onAction?: (actionId: string) => void): string {
    this.stream = undefined;
    const id = this.nextId();
    this.add({ id, kind: 'note', text, level, turn: this.turn, actions: actions?.length ? actions : undefined });
    if (actions?.length && onAction) this.actions.set(id, onAction);
    return id;
  }

  /** act runs a note's action once; false when the note has none waiting. */
  act(itemId: string, actionId: string): boolean {
    const run = this.actions.get(itemId);
    const item = this.byId.get(itemId);
    if (!run || item?.kind !== 'note' || !item.actions?.some((a) => a.id === actionId)) return false;
    this.actions.delete(itemId);
    item.actions = undefined;
    this.post({ type: 'item', item });
    run(actionId);
    return true;
  }

  /**
   * question asks the agent's question in the chat, as a card with its
   * options and a box for another answer; it resolves with the answer, or
   * null when the task is left (a new task, a cancel).
   */
  question(question: string, options: string[]): Promise<string | null> {
    this.stream = undefined;
    const id = this.nextId();
    this.add({ id, kind: 'question', question, options, turn: this.turn });
    return new Promise((resolve) => this.questions.set(id, resolve));
  }

  /** answerQuestion takes the card's answer; an unknown or answered question is ignored. */
  answerQuestion(itemId: string, answer: string | null): boolean {
    const resolve = this.questions.get(itemId);
    const item = this.byId.get(itemId);
    if (!resolve || item?.kind !== 'question') return false;
    this.questions.delete(itemId);
    item.answered = answer === null ? 'dismissed' : answer;
    this.post({ type: 'item', item });
    resolve(answer);
    return true;
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
    for (const resolve of this.questions.values()) resolve(null);
    this.questions.clear();
    this.actions.clear();
    this.state.pending = 0;
  }

  /**
   * detach forgets the session but keeps its items on screen, greyed: the
   * daemon that ran it is gone, so nothing of it can be answered or
   * counted until it is resumed (the meter goes blank rather than show
   * totals no daemon vouches for).
   */
  detach(): void {
    this.cancelWaiting();
    for (const i of this.items) i.undone = true;
    this.stream = undefined;
    this.state.sessionId = undefined;
    this.state.running = false;
    this.state.usage = { inputTokens: 0, outputTokens: 0 };
    this.reset();
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
