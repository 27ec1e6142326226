// ClineController is the client side of a cline-ls connection without the
// editor: it starts and drives sessions, routes the daemon's notifications
// and requests to the session view and the approval and question prompts,
// and keeps the session state the commands act on. The extension gives it
// VS Code's UI; tests give it a scripted one.

import { ChatModel, Mention, mentionLabel, promptBlocks } from './chat';
import { approvalMessage, Approvals, ApprovalUI, decisionOf, describeDecision } from './approvals';
import { Method } from './methods';
import { answerQuestion, QuestionUI } from './questions';
import { SessionState, SessionTracker, SessionView } from './session';
import type {
  ApprovalRequestParams,
  AskQuestionParams,
  AskQuestionResult,
  ClineDiffParams,
  NewSessionResult,
  PromptResult,
  Rpc,
  SessionUpdateParams,
} from './types';

/** ClineUI is the editor's side of the controller: how it asks for approvals, and questions. */
export type ClineUI = ApprovalUI & QuestionUI;

export interface ControllerOptions {
  rpc: Rpc;
  ui: ClineUI;
  view: SessionView;
  /** cwd is the folder new sessions work in (the first workspace folder). */
  cwd: () => string | undefined;
  /** onChange is called whenever a session's state changes (for a status bar). */
  onChange?: (st: SessionState) => void;
  /** chat is the chat view's model, fed the same events as the view. */
  chat?: ChatModel;
}

/** SessionInfo is one entry of session/list. */
export interface SessionInfo {
  sessionId: string;
  cwd: string;
  title: string;
  updatedAt: string;
}

/** Checkpoint is one entry of cline/checkpoints. */
export interface Checkpoint {
  checkpointId: string;
  turn: number;
  toolCallId?: string;
  time: string;
  title: string;
  files: string[];
}

/**
 * undoPoint picks the checkpoint that takes back the newest turn that
 * changed files: the one taken before that turn's first change (the
 * list is oldest first; the after-call ones carry a toolCallId).
 */
export function undoPoint(checkpoints: Checkpoint[]): Checkpoint | undefined {
  let best: Checkpoint | undefined;
  for (const c of checkpoints) {
    if (c.toolCallId) continue;
    if (!best || c.turn >= best.turn) best = c;
  }
  return best;
}

export class ClineController {
  readonly tracker = new SessionTracker();
  readonly approvals: Approvals;
  private readonly rpc: Rpc;
  private readonly ui: ClineUI;
  private readonly view: SessionView;
  private readonly chat: ChatModel | undefined;

  constructor(private readonly opts: ControllerOptions) {
    this.rpc = opts.rpc;
    this.ui = opts.ui;
    this.view = opts.view;
    this.chat = opts.chat;
    this.approvals = new Approvals(opts.rpc, opts.ui, (req, res) => {
      const tc = this.tracker.get(req.sessionId)?.toolCalls.get(req.toolCall.toolCallId);
      if (tc) tc.decision = decisionOf(req, res);
      this.view.approval(req.sessionId, req.toolCall.title, describeDecision(req, res));
    });
  }

  /** notifications lists the daemon notifications the controller handles. */
  notifications(): Array<[string, (params: any) => void]> {
    return [
      [Method.sessionUpdate, (p: SessionUpdateParams) => this.onSessionUpdate(p)],
      [Method.approvalRequest, (p: ApprovalRequestParams) => void this.onApprovalRequest(p)],
      [Method.clineDiff, (p: ClineDiffParams) => this.onDiff(p)],
    ];
  }

  /** requests lists the daemon requests the controller answers. */
  requests(): Array<[string, (params: any) => Promise<unknown>]> {
    return [[Method.askQuestion, (p: AskQuestionParams) => this.onAskQuestion(p)]];
  }

  onSessionUpdate(p: SessionUpdateParams): void {
    if (!p || !p.update) return;
    const st = this.tracker.apply(p);
    this.view.update(p, st);
    this.chat?.update(p);
    this.opts.onChange?.(st);
  }

  /** onApprovalRequest asks the user; failures are shown, never thrown at the connection. */
  async onApprovalRequest(p: ApprovalRequestParams): Promise<void> {
    try {
      this.view.approvalAsked(p.sessionId, p.toolCall.title, approvalMessage(p).detail);
      await this.approvals.handle(p);
    } catch (err) {
      this.view.error(p.sessionId, `approval ${p.approvalId}: ${errorText(err)}`);
    }
  }

  onDiff(p: ClineDiffParams): void {
    this.view.diff(p);
    this.chat?.diff(p);
  }

  async onAskQuestion(p: AskQuestionParams): Promise<AskQuestionResult> {
    const res = await answerQuestion(p, this.ui);
    this.view.question(p.sessionId, p.question, res.answer);
    return res;
  }

  /** newSession starts a session in mode (the configured one when unset) and makes it current. */
  async newSession(mode?: string): Promise<string> {
    const params: Record<string, unknown> = {};
    const cwd = this.opts.cwd();
    if (cwd) params.cwd = cwd;
    if (mode) params.mode = mode;
    const res = await this.rpc.request<NewSessionResult>(Method.sessionNew, params);
    const st = this.tracker.started(res, mode);
    this.view.line(res.sessionId, `Session started in ${st.mode ?? 'default'} mode`);
    this.chat?.startSession(res.sessionId, st.mode, st.availableModes);
    this.opts.onChange?.(st);
    return res.sessionId;
  }

  /** prompt sends text to a session (the current one by default) and resolves when the turn ends. */
  async prompt(text: string, sessionId = this.tracker.current, mentions: Mention[] = []): Promise<PromptResult> {
    if (!sessionId) throw new Error('no Cline task is running: start one with "Cline: New Task"');
    const st = this.tracker.ensure(sessionId);
    const labels = mentions.map((m) => mentionLabel(m, this.opts.cwd()));
    this.view.prompt(sessionId, labels.length ? `${text}\n${labels.join(' ')}` : text, st.mode);
    const shown = this.chat?.state.sessionId === sessionId;
    if (shown) this.chat!.prompt(text, labels);
    st.running = true;
    this.changed(st);
    try {
      const res = await this.rpc.request<PromptResult>(Method.sessionPrompt, { sessionId, prompt: promptBlocks(text, mentions) });
      this.view.stopped(sessionId, res.stopReason);
      if (shown) this.chat!.stopped(res.stopReason);
      return res;
    } catch (err) {
      this.view.error(sessionId, errorText(err));
      if (shown) this.chat!.note(errorText(err), 'error');
      throw err;
    } finally {
      st.running = false;
      this.changed(st);
    }
  }

  /** newTask starts a session in mode and runs its first turn. */
  async newTask(mode: string, text: string, mentions: Mention[] = []): Promise<{ sessionId: string } & PromptResult> {
    const sessionId = await this.newSession(mode);
    const res = await this.prompt(text, sessionId, mentions);
    return { sessionId, ...res };
  }

  /** listSessions lists the saved sessions of the workspace, newest first. */
  async listSessions(): Promise<SessionInfo[]> {
    const cwd = this.opts.cwd();
    const res = await this.rpc.request<{ sessions: SessionInfo[] }>(Method.sessionList, cwd ? { cwd } : {});
    return [...(res.sessions ?? [])].sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
  }

  /**
   * loadSession resumes a saved session: the chat is cleared and the
   * daemon replays its history as session/update before it answers.
   */
  async loadSession(sessionId: string): Promise<void> {
    const cwd = this.opts.cwd();
    const st = this.tracker.started({ sessionId }, undefined);
    this.chat?.startSession(sessionId, st.mode, st.availableModes);
    await this.rpc.request(Method.sessionLoad, { sessionId, cwd: cwd ?? '', mcpServers: [] });
    this.view.line(sessionId, 'Session resumed');
    this.changed(st);
  }

  /**
   * undoLastTurn takes back the last turn: its file changes (open buffers
   * through the editor, others on disk) and its part of the conversation,
   * through the checkpoint taken before its first change. A turn that
   * changed no files has no checkpoint, and nothing is undone.
   */
  async undoLastTurn(sessionId = this.tracker.current): Promise<{ restored: string[]; conflicts: Array<{ path: string; reason: string }> } | undefined> {
    if (!sessionId) throw new Error('no Cline task to undo');
    const st = this.tracker.ensure(sessionId);
    if (st.running) throw new Error('the turn is still running: cancel it first');
    const { checkpoints } = await this.rpc.request<{ checkpoints: Checkpoint[] }>(Method.checkpoints, { sessionId });
    const point = undoPoint(checkpoints ?? []);
    const shown = this.chat?.state.sessionId === sessionId;
    if (!point) {
      if (shown) this.chat!.note('No turn of this task changed files: there is nothing to undo.');
      return undefined;
    }
    const res = await this.rpc.request<{ restored: string[]; conflicts: Array<{ path: string; reason: string }> }>(Method.restore, {
      sessionId,
      checkpointId: point.checkpointId,
      scope: 'both',
    });
    const what = res.restored.length ? `restored ${res.restored.map((p) => p.split('/').pop()).join(', ')}` : 'no file needed restoring';
    this.view.line(sessionId, `Undid the turn "${point.title.replace(/^Before: /, '')}": ${what}`);
    if (shown) {
      const turn = this.chat!.lastTurnWithChanges();
      if (turn >= 0) this.chat!.undone(turn);
      this.chat!.note(`Undid the turn "${point.title.replace(/^Before: /, '')}": ${what}.`);
      for (const c of res.conflicts) this.chat!.note(`Not restored: ${c.path}: ${c.reason}`, 'error');
    }
    return res;
  }

  private changed(st: SessionState): void {
    this.opts.onChange?.(st);
    if (this.chat?.state.sessionId === st.sessionId) this.chat.setState({ running: st.running, mode: st.mode ?? this.chat.state.mode });
  }

  async setMode(modeId: string, sessionId = this.tracker.current): Promise<void> {
    if (!sessionId) throw new Error('no Cline task to switch: start one with "Cline: New Task"');
    await this.rpc.request(Method.sessionSetMode, { sessionId, modeId });
    const st = this.tracker.ensure(sessionId);
    st.mode = modeId;
    this.changed(st);
  }

  /** cancel stops the session's running turn; its pending approvals are dropped. */
  async cancel(sessionId = this.tracker.current): Promise<void> {
    if (!sessionId) return;
    this.approvals.cancelSession(sessionId);
    this.chat?.cancelSession(sessionId);
    await this.rpc.notify(Method.sessionCancel, { sessionId });
    this.view.line(sessionId, 'Cancelling…');
  }
}

export function errorText(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
