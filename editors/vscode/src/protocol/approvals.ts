// Approvals: a cline/approvalRequest notification becomes a prompt with
// Allow / Always / Reject (and Show Diff for edits), and the user's choice
// becomes the cline/approvalResponse request (PROTOCOL.md §4).

import { Method } from './methods';
import type { ApprovalOption, ApprovalRequestParams, ApprovalResponseParams, Rpc } from './types';

/**
 * DialogueUI asks in the editor's own prompts: a message with buttons,
 * then feedback for a rejection, with the diff shown on demand.
 */
export interface DialogueUI {
  /**
   * choose shows message with one button per label and resolves with the
   * label picked, or undefined when the prompt is dismissed.
   */
  choose(message: string, detail: string | undefined, buttons: string[]): PromiseLike<string | undefined>;
  /** askFeedback asks for optional text; undefined or '' means none. */
  askFeedback(prompt: string): PromiseLike<string | undefined>;
  /** showDiff shows the request's proposed change. */
  showDiff(req: ApprovalRequestParams): PromiseLike<void>;
}

/** CardUI answers a request in a view of its own (the chat view's card). */
export interface CardUI {
  decide(req: ApprovalRequestParams): PromiseLike<ApprovalResponseParams>;
}

/** ApprovalUI is what approvals need from the editor: one of the two ways to ask. */
export type ApprovalUI = DialogueUI | CardUI;

export const ShowDiff = 'Show Diff';

/** Button labels per option kind; reject_always is left to rules. */
const labels: Record<string, string> = {
  allow_once: 'Allow',
  allow_always: 'Always',
  reject_once: 'Reject',
};

export interface ApprovalButton {
  label: string;
  option?: ApprovalOption;
  showDiff?: boolean;
}

/**
 * approvalButtons lists the buttons for a request: one per offered option
 * of a known kind, in the order allow, always, reject, then Show Diff when
 * the request carries a diff.
 */
export function approvalButtons(req: ApprovalRequestParams): ApprovalButton[] {
  const out: ApprovalButton[] = [];
  for (const kind of ['allow_once', 'allow_always', 'reject_once']) {
    const option = req.options.find((o) => o.kind === kind);
    if (option) out.push({ label: labels[kind], option });
  }
  if (req.diff) out.push({ label: ShowDiff, showDiff: true });
  return out;
}

/** approvalMessage is the prompt's one-line message and its detail (command or diff). */
export function approvalMessage(req: ApprovalRequestParams): { message: string; detail?: string } {
  const title = req.toolCall.title;
  const message = `Allow Cline to ${title.charAt(0).toLowerCase()}${title.slice(1)}?`;
  if (req.command) return { message, detail: `$ ${req.command}` };
  if (req.diff) return { message, detail: req.diff };
  return { message };
}

/**
 * decideApproval asks the user until they pick an option: Show Diff opens
 * the diff and asks again, Reject asks for optional feedback for the model.
 * A dismissed prompt rejects, as a dismissed window/showMessageRequest does.
 */
export async function decideApproval(req: ApprovalRequestParams, ui: DialogueUI): Promise<ApprovalResponseParams> {
  const buttons = approvalButtons(req);
  const { message, detail } = approvalMessage(req);
  const reject = req.options.find((o) => o.kind === 'reject_once');
  for (;;) {
    const picked = await ui.choose(message, detail, buttons.map((b) => b.label));
    const b = buttons.find((x) => x.label === picked);
    if (b?.showDiff) {
      await ui.showDiff(req);
      continue;
    }
    const option = b?.option ?? reject;
    if (!option) return { approvalId: req.approvalId, outcome: { outcome: 'cancelled' } };
    const res: ApprovalResponseParams = { approvalId: req.approvalId, outcome: { outcome: 'selected', optionId: option.optionId } };
    if (b && option.kind.startsWith('reject')) {
      const feedback = (await ui.askFeedback('Why reject? (optional, sent to the model)'))?.trim();
      if (feedback) res.feedback = feedback;
    }
    return res;
  }
}

/** decisionOf classifies a response: allowed, rejected or cancelled. */
export function decisionOf(req: ApprovalRequestParams, res: ApprovalResponseParams): 'allowed' | 'rejected' | 'cancelled' {
  if (res.outcome.outcome === 'cancelled') return 'cancelled';
  const { optionId } = res.outcome;
  const kind = req.options.find((o) => o.optionId === optionId)?.kind ?? '';
  return kind.startsWith('allow') ? 'allowed' : 'rejected';
}

/** describeDecision says in words what a response decided, for the session view. */
export function describeDecision(req: ApprovalRequestParams, res: ApprovalResponseParams): string {
  if (res.outcome.outcome === 'cancelled') return 'cancelled';
  const { optionId } = res.outcome;
  const option = req.options.find((o) => o.optionId === optionId);
  const name = (option?.name ?? optionId).toLowerCase();
  return res.feedback ? `${name} (“${res.feedback}”)` : name;
}

/**
 * Approvals answers cline/approvalRequest notifications. Requests of a
 * cancelled session are dropped: the daemon resolved them already, and
 * a late answer would only earn an "unknown approvalId" error.
 */
export class Approvals {
  private readonly pending = new Map<string, ApprovalRequestParams>();

  constructor(
    private readonly rpc: Rpc,
    private readonly ui: ApprovalUI,
    private readonly onDecided?: (req: ApprovalRequestParams, res: ApprovalResponseParams) => void,
  ) {}

  /** handle asks the user and sends the answer; it resolves once the daemon took it. */
  async handle(req: ApprovalRequestParams): Promise<ApprovalResponseParams | undefined> {
    this.pending.set(req.approvalId, req);
    let res: ApprovalResponseParams;
    try {
      res = 'decide' in this.ui ? await this.ui.decide(req) : await decideApproval(req, this.ui);
    } catch (err) {
      this.pending.delete(req.approvalId);
      throw err;
    }
    if (!this.pending.delete(req.approvalId)) return undefined; // cancelled meanwhile
    this.onDecided?.(req, res);
    await this.rpc.request(Method.approvalResponse, res);
    return res;
  }

  /** cancelSession forgets the session's pending requests. */
  cancelSession(sessionId: string): void {
    for (const [id, req] of this.pending) {
      if (req.sessionId === sessionId) this.pending.delete(id);
    }
  }

  /** pendingCount is the number of requests waiting for the user. */
  get pendingCount(): number {
    return this.pending.size;
  }
}
