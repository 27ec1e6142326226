// ScriptedUser is the ClineUI of the tests: a user who answers prompts from
// a script and records what they were shown.

import * as fs from 'node:fs';

import type { DialogueUI } from '../protocol/approvals';
import type { QuestionUI } from '../protocol/questions';
import { DiffUI, ProposedFile, showProposedChange } from '../protocol/diffs';
import type { OutputSink } from '../protocol/session';
import type { ApprovalRequestParams } from '../protocol/types';
import type { MemoryEditor } from './memoryEditor';

export interface Script {
  /** approve answers each approval prompt in turn with a button label. */
  approve?: Array<string | undefined | (() => Promise<string | undefined>)>;
  feedback?: string;
  pick?: (title: string, items: string[]) => string | undefined;
  input?: (prompt: string) => string | undefined;
}

export class ScriptedUser implements DialogueUI, QuestionUI, DiffUI {
  readonly prompts: Array<{ message: string; detail?: string; buttons: string[] }> = [];
  readonly diffs: Array<{ file: ProposedFile; title: string }> = [];
  readonly unifiedDiffs: string[] = [];
  readonly questions: Array<{ title: string; items: string[] }> = [];
  private turn = 0;

  constructor(
    private readonly script: Script,
    private readonly editor: MemoryEditor,
    private readonly root: string,
  ) {}

  async choose(message: string, detail: string | undefined, buttons: string[]): Promise<string | undefined> {
    this.prompts.push({ message, detail, buttons });
    const step = this.script.approve?.[this.turn++];
    return typeof step === 'function' ? step() : step;
  }

  async askFeedback(): Promise<string | undefined> {
    return this.script.feedback;
  }

  async showDiff(req: ApprovalRequestParams): Promise<void> {
    // As the extension does: the open buffer's text, else the disk's.
    const read = async (p: string) => this.editor.text(p) ?? (fs.existsSync(p) ? fs.readFileSync(p, 'utf8') : undefined);
    await showProposedChange(req.diff ?? '', req.toolCall.title, this.root, read, this);
  }

  async openDiff(file: ProposedFile, title: string): Promise<void> {
    this.diffs.push({ file, title });
  }

  async openUnifiedDiff(text: string): Promise<void> {
    this.unifiedDiffs.push(text);
  }

  async pick(title: string, items: string[]): Promise<string | undefined> {
    this.questions.push({ title, items });
    return this.script.pick?.(title, items);
  }

  async input(prompt: string): Promise<string | undefined> {
    return this.script.input?.(prompt);
  }
}

/** StringSink collects the session view's output. */
export class StringSink implements OutputSink {
  text = '';
  append(s: string): void {
    this.text += s;
  }
}
