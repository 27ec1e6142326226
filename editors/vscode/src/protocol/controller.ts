// ClineController is the client side of a cline-ls connection without the
// editor: it starts and drives sessions, routes the daemon's notifications
// and requests to the session view and the approval and question prompts,
// and keeps the session state the commands act on. The extension gives it
// VS Code's UI; tests give it a scripted one.

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

export interface ClineUI extends ApprovalUI, QuestionUI {}

export interface ControllerOptions {
  rpc: Rpc;
  ui: ClineUI;
  view: SessionView;
  /** cwd is the folder new sessions work in (the first workspace folder). */
  cwd: () => string | undefined;
  /** onChange is called whenever a session's state changes (for a status bar). */
  onChange?: (st: SessionState) => void;
}

export class ClineController {
  readonly tracker = new SessionTracker();
  readonly approvals: Approvals;
  private readonly rpc: Rpc;
  private readonly ui: ClineUI;
  private readonly view: SessionView;

  constructor(private readonly opts: ControllerOptions) {
    this.rpc = opts.rpc;
    this.ui = opts.ui;
    this.view = opts.view;
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
    this.opts.onChange?.(st);
    return res.sessionId;
  }

  /** prompt sends text to a session (the current one by default) and resolves when the turn ends. */
  async prompt(text: string, sessionId = this.tracker.current): Promise<PromptResult> {
    if (!sessionId) throw new Error('no Cline task is running: start one with "Cline: New Task"');
    const st = this.tracker.ensure(sessionId);
    this.view.prompt(sessionId, text, st.mode);
    st.running = true;
    this.opts.onChange?.(st);
    try {
      const res = await this.rpc.request<PromptResult>(Method.sessionPrompt, {
        sessionId,
        prompt: [{ type: 'text', text }],
      });
      this.view.stopped(sessionId, res.stopReason);
      return res;
    } catch (err) {
      this.view.error(sessionId, errorText(err));
      throw err;
    } finally {
      st.running = false;
      this.opts.onChange?.(st);
    }
  }

  /** newTask starts a session in mode and runs its first turn. */
  async newTask(mode: string, text: string): Promise<{ sessionId: string } & PromptResult> {
    const sessionId = await this.newSession(mode);
    const res = await this.prompt(text, sessionId);
    return { sessionId, ...res };
  }

  async setMode(modeId: string, sessionId = this.tracker.current): Promise<void> {
    if (!sessionId) throw new Error('no Cline task to switch: start one with "Cline: New Task"');
    await this.rpc.request(Method.sessionSetMode, { sessionId, modeId });
    const st = this.tracker.ensure(sessionId);
    st.mode = modeId;
    this.opts.onChange?.(st);
  }

  /** cancel stops the session's running turn; its pending approvals are dropped. */
  async cancel(sessionId = this.tracker.current): Promise<void> {
    if (!sessionId) return;
    this.approvals.cancelSession(sessionId);
    await this.rpc.notify(Method.sessionCancel, { sessionId });
    this.view.line(sessionId, 'Cancelling…');
  }
}

export function errorText(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
