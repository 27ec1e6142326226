// Questions: cline/askQuestion from the model's ask_question tool, answered
// by picking one of its options or typing another answer (PROTOCOL.md §6).

import type { AskQuestionParams, AskQuestionResult } from './types';

/** QuestionUI is what questions need from the editor. */
export interface QuestionUI {
  /** pick offers items and resolves with the one picked, or undefined when dismissed. */
  pick(title: string, items: string[]): PromiseLike<string | undefined>;
  /** input asks for free text; undefined when dismissed. */
  input(prompt: string): PromiseLike<string | undefined>;
  /**
   * ask, when the editor has it, puts the whole question to the user at
   * once (its options and a free answer, in the chat); null is dismissed.
   */
  ask?(question: string, options: string[]): PromiseLike<string | null>;
}

export const OtherAnswer = 'Other answer…';

/**
 * answerQuestion asks the user. With options, they are offered with a last
 * item for a typed answer; without, the answer is typed. Dismissing gives
 * a null answer, which the model is told as "dismissed".
 */
export async function answerQuestion(p: AskQuestionParams, ui: QuestionUI): Promise<AskQuestionResult> {
  const options = p.options ?? [];
  if (ui.ask) return { answer: await ui.ask(p.question, options) };
  if (options.length > 0) {
    const picked = await ui.pick(p.question, [...options, OtherAnswer]);
    if (picked === undefined) return { answer: null };
    if (picked !== OtherAnswer) return { answer: picked };
  }
  const typed = await ui.input(p.question);
  return { answer: typed === undefined ? null : typed };
}
