// Session tracking and the text rendering of a session's stream: agent
// text chunks, tool calls and their status, the plan, the mode, usage,
// cline/diff reports and approval decisions. The extension writes it to an
// output channel; tests write it to a string.

import type {
  ClineDiffParams,
  Location,
  ModeInfo,
  NewSessionResult,
  PlanEntry,
  SessionUpdate,
  SessionUpdateParams,
  ToolKind,
  ToolStatus,
} from './types';

export interface ToolCallState {
  toolCallId: string;
  title: string;
  kind?: ToolKind;
  status: ToolStatus;
  locations: Location[];
  /** decision is the user's answer to the call's approval, when one was asked. */
  decision?: 'allowed' | 'rejected' | 'cancelled';
}

export interface SessionState {
  sessionId: string;
  mode?: string;
  availableModes: ModeInfo[];
  toolCalls: Map<string, ToolCallState>;
  plan: PlanEntry[];
  usage: { inputTokens: number; outputTokens: number; costUsd?: number };
  /** running is true while a session/prompt for the session is unanswered. */
  running: boolean;
}

/** SessionTracker keeps what the client knows of each session. */
export class SessionTracker {
  private readonly sessions = new Map<string, SessionState>();
  /** current is the session the commands act on: the last one started. */
  current: string | undefined;

  /** started records a session from its session/new answer and makes it current. */
  started(res: NewSessionResult, mode?: string): SessionState {
    const st = this.ensure(res.sessionId);
    st.mode = res.modes?.currentModeId ?? mode ?? st.mode;
    if (res.modes?.availableModes) st.availableModes = res.modes.availableModes;
    this.current = res.sessionId;
    return st;
  }

  get(sessionId: string | undefined): SessionState | undefined {
    return sessionId === undefined ? undefined : this.sessions.get(sessionId);
  }

  ensure(sessionId: string): SessionState {
    let st = this.sessions.get(sessionId);
    if (!st) {
      st = {
        sessionId,
        availableModes: [],
        toolCalls: new Map(),
        plan: [],
        usage: { inputTokens: 0, outputTokens: 0 },
        running: false,
      };
      this.sessions.set(sessionId, st);
    }
    return st;
  }

  /** apply folds one session/update into the session's state and returns it. */
  apply(p: SessionUpdateParams): SessionState {
    const st = this.ensure(p.sessionId);
    const u = p.update;
    switch (u.sessionUpdate) {
      case 'tool_call':
        st.toolCalls.set(u.toolCallId, {
          toolCallId: u.toolCallId,
          title: u.title,
          kind: u.kind,
          status: u.status ?? 'pending',
          locations: u.locations ?? [],
        });
        break;
      case 'tool_call_update': {
        const tc = st.toolCalls.get(u.toolCallId) ?? { toolCallId: u.toolCallId, title: u.title ?? u.toolCallId, status: 'pending', locations: [] };
        if (u.status) tc.status = u.status;
        if (u.title) tc.title = u.title;
        st.toolCalls.set(u.toolCallId, tc);
        break;
      }
      case 'plan':
        st.plan = u.entries ?? [];
        break;
      case 'current_mode_update':
        st.mode = u.currentModeId;
        break;
      case 'usage_update':
        st.usage.inputTokens += u.inputTokens ?? 0;
        st.usage.outputTokens += u.outputTokens ?? 0;
        if (u.costUsd !== undefined) st.usage.costUsd = (st.usage.costUsd ?? 0) + u.costUsd;
        break;
    }
    return st;
  }
}

/** OutputSink receives the rendered stream; an output channel's append fits. */
export interface OutputSink {
  append(text: string): void;
}

const statusMark: Record<string, string> = {
  pending: '○',
  in_progress: '◐',
  completed: '✓',
  failed: '✗',
  rejected: '⊘',
  cancelled: '⊘',
};

/**
 * outcomeOf names how a finished call ended for the user. The wire has only
 * "failed" for a call that did not succeed, whether it broke, was rejected
 * or was cancelled; the last two are told apart by the user's decision on
 * its approval or by the daemon's "was not run" result text.
 */
export function outcomeOf(status: string, decision: ToolCallState['decision'], output: string): string {
  if (status !== 'failed') return status;
  if (decision === 'rejected' || decision === 'cancelled') return decision;
  if (/^You rejected this\./.test(output) || /was not run: denied by the user/.test(output)) return 'rejected';
  if (/^Cancelled\.$/.test(output) || /was not run: cancelled/.test(output)) return 'cancelled';
  return status;
}

export function formatToolCall(tc: { title: string; kind?: string; status?: string; locations?: Location[] }): string {
  const where = (tc.locations ?? []).map((l) => (l.line ? `${l.path}:${l.line}` : l.path)).join(', ');
  const kind = tc.kind ? ` [${tc.kind}]` : '';
  const loc = where && !tc.title.includes(where) ? ` (${where})` : '';
  return `${statusMark[tc.status ?? 'pending'] ?? '○'} ${tc.title}${kind}${loc}: ${tc.status ?? 'pending'}`;
}

/** toolOutputText is the text content of a tool_call_update, if any. */
export function toolOutputText(u: Extract<SessionUpdate, { sessionUpdate: 'tool_call_update' }>): string {
  const parts: string[] = [];
  for (const c of u.content ?? []) {
    if (c.type === 'content' && c.content?.type === 'text' && c.content.text) parts.push(c.content.text);
    if (c.type === 'diff' && c.path) parts.push(`diff of ${c.path}`);
  }
  return parts.join('\n');
}

export function formatPlan(entries: PlanEntry[]): string {
  const mark = (s?: string) => (s === 'completed' ? '[x]' : s === 'in_progress' ? '[~]' : '[ ]');
  return ['Plan:', ...entries.map((e) => `  ${mark(e.status)} ${e.content}`)].join('\n');
}

export function formatUsage(st: SessionState['usage']): string {
  const cost = st.costUsd !== undefined ? `, $${st.costUsd.toFixed(4)}` : '';
  return `Tokens: ${st.inputTokens} in, ${st.outputTokens} out${cost}`;
}

/** formatClineDiff renders a cline/diff report: a header line and the diff body. */
export function formatClineDiff(d: ClineDiffParams): string {
  const lines = d.diff.split('\n');
  // The compact diff starts with "Edited <path>" and fences the lines.
  const head = lines[0]?.startsWith('Edited ') ? lines.shift()! : `Edited ${d.uri}`;
  const body = lines.filter((l) => !l.startsWith('```'));
  while (body.length > 0 && body[body.length - 1] === '') body.pop();
  const version = d.version === null || d.version === undefined ? '' : `, buffer v${d.version}`;
  return [`Δ ${head.slice('Edited '.length)} (+${d.added} −${d.removed}${version})`, ...body.map((l) => `    ${l}`)].join('\n');
}

/** truncateLines keeps at most n lines of s, saying how many were left out. */
export function truncateLines(s: string, n: number): string {
  const lines = s.replace(/\n+$/, '').split('\n');
  if (lines.length <= n) return lines.join('\n');
  return [...lines.slice(0, n), `… ${lines.length - n} more lines`].join('\n');
}

/**
 * SessionView renders sessions to an OutputSink. Chunks of agent text are
 * appended as they stream; every other event is a line of its own. When the
 * stream moves to another session a header names it.
 */
export class SessionView {
  private midLine = false;
  private stream: string | undefined;
  private lastSession: string | undefined;

  constructor(private readonly out: OutputSink) {}

  /** update renders one session/update; st is the state after tracker.apply. */
  update(p: SessionUpdateParams, st?: SessionState): void {
    const u = p.update;
    switch (u.sessionUpdate) {
      case 'agent_message_chunk':
      case 'agent_thought_chunk':
      case 'user_message_chunk':
        this.chunk(p.sessionId, u.sessionUpdate, u.content?.text ?? '');
        return;
      case 'tool_call':
        this.line(p.sessionId, formatToolCall(u));
        return;
      case 'tool_call_update': {
        const tc = st?.toolCalls.get(u.toolCallId);
        if (!u.status) return;
        const out = toolOutputText(u);
        const status = outcomeOf(u.status, tc?.decision, out);
        let text = formatToolCall({ title: tc?.title ?? u.title ?? u.toolCallId, kind: tc?.kind, status });
        if (status === 'failed' && out) text += '\n' + indent(truncateLines(out, 8));
        this.line(p.sessionId, text);
        return;
      }
      case 'plan':
        this.line(p.sessionId, formatPlan(u.entries ?? []));
        return;
      case 'current_mode_update':
        this.line(p.sessionId, `Mode: ${u.currentModeId}`);
        return;
      case 'usage_update':
        if (st) this.line(p.sessionId, formatUsage(st.usage));
        return;
    }
  }

  /** prompt shows the user's prompt as sent. */
  prompt(sessionId: string, text: string, mode?: string): void {
    this.line(sessionId, `> ${mode ? `[${mode}] ` : ''}${text.replace(/\n/g, '\n  ')}`);
  }

  diff(d: ClineDiffParams): void {
    this.line(d.sessionId, formatClineDiff(d));
  }

  /** approvalAsked shows that an approval waits for the user, with its command or diff. */
  approvalAsked(sessionId: string, title: string, detail?: string): void {
    const text = `? ${title}: waiting for approval`;
    this.line(sessionId, detail ? `${text}\n${indent(truncateLines(detail, 40))}` : text);
  }

  /** approval shows a decision on an approval request. */
  approval(sessionId: string, title: string, decision: string): void {
    this.line(sessionId, `? ${title}: ${decision}`);
  }

  question(sessionId: string, question: string, answer: string | null): void {
    this.line(sessionId, `? ${question}: ${answer === null ? '(no answer)' : answer}`);
  }

  stopped(sessionId: string, stopReason: string): void {
    this.line(sessionId, `■ ${stopReason}`);
  }

  error(sessionId: string | undefined, message: string): void {
    this.line(sessionId, `! ${message}`);
  }

  /** line writes a whole line, ending any chunk stream first. */
  line(sessionId: string | undefined, text: string): void {
    this.switchTo(sessionId);
    this.endLine();
    this.stream = undefined;
    this.out.append(text + '\n');
  }

  private chunk(sessionId: string, kind: string, text: string): void {
    if (!text) return;
    this.switchTo(sessionId);
    if (this.stream !== kind) {
      this.endLine();
      this.stream = kind;
      if (kind === 'agent_thought_chunk') this.out.append('(thinking) ');
      if (kind === 'user_message_chunk') this.out.append('> ');
    }
    this.out.append(text);
    this.midLine = !text.endsWith('\n');
  }

  private endLine(): void {
    if (this.midLine) {
      this.out.append('\n');
      this.midLine = false;
    }
  }

  private switchTo(sessionId: string | undefined): void {
    if (sessionId === undefined || sessionId === this.lastSession) return;
    this.endLine();
    this.stream = undefined;
    this.lastSession = sessionId;
    this.out.append(`── session ${sessionId} ──\n`);
  }
}

function indent(s: string): string {
  return s.split('\n').map((l) => '    ' + l).join('\n');
}
