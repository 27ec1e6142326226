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
  /** heldBy is the pid of another daemon that has the session open. */
  heldBy?: number;
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

/** CheckpointFile is one file of cline/checkpointDiff: what a restore would change. */
export interface CheckpointFile {
  path: string;
  status: 'modified' | 'created' | 'deleted';
  diff: string;
}

/** RestoreScope is what cline/restore takes back. */
export type RestoreScope = 'files' | 'conversation' | 'both';

/** RestoreResult is the answer of cline/restore. */
export interface RestoreResult {
  restored: string[];
  conflicts: Array<{ path: string; reason: string }>;
}

/** CheckpointItem is a checkpoint as the list shows it. */
export interface CheckpointItem {
  label: string;
  description: string;
  detail: string;
  checkpoint: Checkpoint;
}

/**
 * CheckpointUI is how the checkpoints command asks the user: which
 * checkpoint, the preview of what restoring it changes, what to restore
 * (undefined is Cancel), and whether to overwrite files in conflict.
 */
export interface CheckpointUI {
  pickCheckpoint(items: CheckpointItem[]): Promise<CheckpointItem | undefined>;
  showPreview(text: string, checkpoint: Checkpoint, files: CheckpointFile[]): Promise<void>;
  pickRestore(checkpoint: Checkpoint, files: CheckpointFile[]): Promise<RestoreScope | undefined>;
  confirmForce(conflicts: RestoreResult['conflicts']): Promise<boolean>;
}

/** relativePath is path under cwd without the folder, else path itself. */
export function relativePath(path: string, cwd: string | undefined): string {
  return cwd && path.startsWith(cwd + '/') ? path.slice(cwd.length + 1) : path;
}

/** checkpointTime is the checkpoint's time in local time, to the second. */
export function checkpointTime(time: string): string {
  const d = new Date(time);
  if (Number.isNaN(d.getTime())) return time;
  const two = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}

/**
 * checkpointItems lists checkpoints newest first: the time and what made
 * it (the turn, and the tool call for one taken after a call), the title,
 * and the files it records as changed.
 */
export function checkpointItems(checkpoints: Checkpoint[], cwd?: string): CheckpointItem[] {
  return [...checkpoints].reverse().map((c) => ({
    label: c.title || `Turn ${c.turn}`,
    description: `${checkpointTime(c.time)} · turn ${c.turn}${c.toolCallId ? ` · after ${c.toolCallId}` : ''}`,
    detail: c.files.length ? c.files.map((f) => relativePath(f, cwd)).join(', ') : 'no files changed',
    checkpoint: c,
  }));
}

/**
 * checkpointPreview is the text of the preview document: a header naming
 * the checkpoint, then each file's status and compact diff.
 */
export function checkpointPreview(checkpoint: Checkpoint, files: CheckpointFile[], cwd?: string): string {
  const lines = [`# Restoring "${checkpoint.title}" (${checkpointTime(checkpoint.time)}, turn ${checkpoint.turn}) would change:`];
  if (!files.length) lines.push('# nothing: the files are as they were at this checkpoint');
  for (const f of files) {
    const name = relativePath(f.path, cwd);
    lines.push('', `--- ${name} (${f.status === 'created' ? 'created since: would be deleted' : f.status === 'deleted' ? 'deleted since: would be recreated' : 'modified'})`);
    // The daemon's compact diff, without the markdown fence around it.
    for (const l of f.diff.split('\n')) if (!/^```(diff)?$/.test(l) && l !== '') lines.push(l);
  }
  return lines.join('\n') + '\n';
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

/** turnCalls are the tool calls of point's turn that checkpoints were taken after. */
function turnCalls(checkpoints: Checkpoint[], point: Checkpoint): string[] {
  return checkpoints.flatMap((c) => (c.turn === point.turn && c.toolCallId ? [c.toolCallId] : []));
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

  /** models is cline/models: the model in use (the session's, or the settings') and the provider's models. */
  async models(sessionId?: string): Promise<{ current: string; models: Array<{ id: string; name?: string }> }> {
    const res = await this.rpc.request<{ current: string; models: Array<{ id: string; name?: string }> }>(Method.models, sessionId ? { sessionId } : {});
    return { current: res.current ?? '', models: res.models ?? [] };
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
    const res = await this.rpc.request<{ modes?: NewSessionResult['modes'] }>(Method.sessionLoad, { sessionId, cwd: cwd ?? '', mcpServers: [] });
    // The answer names the session's mode (and the modes): the chat and
    // the status bar show it from the start.
    if (res?.modes) {
      st.mode = res.modes.currentModeId;
      if (res.modes.availableModes?.length) st.availableModes = res.modes.availableModes;
      if (this.chat?.state.sessionId === sessionId) this.chat.setState({ mode: st.mode, modes: st.availableModes });
    }
    this.view.line(sessionId, 'Session resumed');
    this.changed(st);
  }

  /**
   * forkSession copies a session up to its turn atTurn (0: all of it)
   * into a new one, which the daemon makes even when another window holds
   * the session, and resumes the fork.
   */
  async forkSession(sessionId = this.tracker.current, atTurn = 0): Promise<string> {
    if (!sessionId) throw new Error('no Cline task to fork');
    const res = await this.rpc.request<{ sessionId: string }>(Method.forkSession, { sessionId, atTurn });
    await this.loadSession(res.sessionId);
    return res.sessionId;
  }

  /**
   * undoLastTurn takes back the last turn: its file changes (open buffers
   * through the editor, others on disk) and its part of the conversation,
   * through the checkpoint taken before its first change. A turn that
   * changed no files has no checkpoint, and nothing is undone.
   */
  async undoLastTurn(sessionId = this.tracker.current): Promise<RestoreResult | undefined> {
    if (!sessionId) throw new Error('no Cline task to undo');
    const st = this.tracker.ensure(sessionId);
    if (st.running) throw new Error('the turn is still running: cancel it first');
    const checkpoints = await this.checkpoints(sessionId);
    const point = undoPoint(checkpoints);
    const shown = this.chat?.state.sessionId === sessionId;
    if (!point) {
      if (shown) this.chat!.note('No turn of this task changed files: there is nothing to undo.');
      return undefined;
    }
    const res = await this.restore(sessionId, point.checkpointId, 'both');
    const what = res.restored.length ? `restored ${res.restored.map((p) => p.split('/').pop()).join(', ')}` : 'no file needed restoring';
    this.view.line(sessionId, `Undid the turn "${point.title.replace(/^Before: /, '')}": ${what}`);
    if (shown) {
      this.chat!.rewound(turnCalls(checkpoints, point));
      this.chat!.note(`Undid the turn "${point.title.replace(/^Before: /, '')}": ${what}.`);
      for (const c of res.conflicts) this.chat!.note(`Not restored: ${c.path}: ${c.reason}`, 'error');
    }
    return res;
  }

  /** checkpoints lists the session's checkpoints, oldest first. */
  async checkpoints(sessionId: string): Promise<Checkpoint[]> {
    const res = await this.rpc.request<{ checkpoints: Checkpoint[] }>(Method.checkpoints, { sessionId });
    return res.checkpoints ?? [];
  }

  /** checkpointDiff is what restoring the checkpoint would change, per file. */
  async checkpointDiff(sessionId: string, checkpointId: string): Promise<CheckpointFile[]> {
    const res = await this.rpc.request<{ files: CheckpointFile[] }>(Method.checkpointDiff, { sessionId, checkpointId });
    return res.files ?? [];
  }

  /** restore restores a checkpoint in scope; files in conflict are kept unless force. */
  async restore(sessionId: string, checkpointId: string, scope: RestoreScope, force = false): Promise<RestoreResult> {
    const params: Record<string, unknown> = { sessionId, checkpointId, scope };
    if (force) params.force = true;
    const res = await this.rpc.request<RestoreResult>(Method.restore, params);
    return { restored: res.restored ?? [], conflicts: res.conflicts ?? [] };
  }

  /**
   * pickCheckpoint is the checkpoints command: the session's checkpoints
   * in a list, the preview of the picked one, then the restore the user
   * chooses. Files in conflict are reported, and overwritten only when the
   * user confirms (a retry of the files alone: the conversation, if asked
   * for, was restored by the first request). It returns what was
   * restored, or undefined when nothing was.
   */
  async pickCheckpoint(ui: CheckpointUI, sessionId = this.tracker.current): Promise<RestoreResult | undefined> {
    if (!sessionId) throw new Error('no Cline task: start one with "Cline: New Task"');
    if (this.tracker.ensure(sessionId).running) throw new Error('the turn is still running: cancel it first');
    const cwd = this.opts.cwd();
    const shown = this.chat?.state.sessionId === sessionId;
    const checkpoints = await this.checkpoints(sessionId);
    if (!checkpoints.length) {
      this.view.line(sessionId, 'No checkpoints: no turn of this task changed files.');
      if (shown) this.chat!.note('No checkpoints: no turn of this task changed files.');
      return undefined;
    }
    const item = await ui.pickCheckpoint(checkpointItems(checkpoints, cwd));
    if (!item) return undefined;
    const point = item.checkpoint;
    const files = await this.checkpointDiff(sessionId, point.checkpointId);
    await ui.showPreview(checkpointPreview(point, files, cwd), point, files);
    const scope = await ui.pickRestore(point, files);
    if (!scope) return undefined;
    let res = await this.restore(sessionId, point.checkpointId, scope);
    if (res.conflicts.length && scope !== 'conversation' && (await ui.confirmForce(res.conflicts))) {
      const forced = await this.restore(sessionId, point.checkpointId, 'files', true);
      res = { restored: [...res.restored, ...forced.restored], conflicts: forced.conflicts };
    }
    if (shown && scope !== 'files') this.chat!.rewound(turnCalls(checkpoints, point));
    const names = res.restored.map((p) => relativePath(p, cwd));
    const what = [
      scope !== 'files' ? 'the conversation' : '',
      scope !== 'conversation' ? (names.length ? names.join(', ') : 'no file needed restoring') : '',
    ].filter(Boolean).join('; ');
    this.view.line(sessionId, `Restored "${point.title}": ${what}`);
    if (shown) this.chat!.note(`Restored "${point.title}": ${what}.`);
    for (const c of res.conflicts) {
      this.view.error(sessionId, `Not restored: ${relativePath(c.path, cwd)}: ${c.reason}`);
      if (shown) this.chat!.note(`Not restored: ${relativePath(c.path, cwd)}: ${c.reason}`, 'error');
    }
    return res;
  }

  /** changed tells the chat first, then onChange: a status bar shows what the chat shows. */
  private changed(st: SessionState): void {
    if (this.chat?.state.sessionId === st.sessionId) this.chat.setState({ running: st.running, mode: st.mode ?? this.chat.state.mode });
    this.opts.onChange?.(st);
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
