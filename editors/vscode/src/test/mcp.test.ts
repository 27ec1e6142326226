// What an MCP server's sign-in and questions need from the extension: the
// sign-in page opened in the browser as the daemon wrote its address
// (window/showDocument, external), and the server's questions asked,
// the free-text one in an input box (cline/askQuestion without options,
// as the daemon sends it: options null, no session).

import * as assert from 'node:assert/strict';
import { test } from 'node:test';

import { ExternalOpener, showDocument, ShowDocumentParams } from '../protocol/external';
import { answerQuestion, OtherAnswer, QuestionUI } from '../protocol/questions';
import type { AskQuestionParams } from '../protocol/types';

function opener(result: boolean | Error = true) {
  const opened: string[] = [];
  const refused: string[] = [];
  const o: ExternalOpener = {
    openExternal: async (address) => {
      opened.push(address);
      if (result instanceof Error) throw result;
      return result;
    },
    refused: (address, why) => refused.push(`${address}: ${why}`),
  };
  return { o, opened, refused };
}

const noNext = async (): Promise<never> => {
  throw new Error('an external address went to the editor');
};

test('an external sign-in address opens in the browser exactly as the daemon wrote it', async () => {
  // A resource with a query of its own: its escapes must stay escapes.
  const address =
    'http://127.0.0.1:4000/authorize?client_id=c1&code_challenge=Ab-_9&code_challenge_method=S256&redirect_uri=http%3A%2F%2F127.0.0.1%3A5000%2Fcallback' +
    '&resource=https%3A%2F%2Fmcp.example.com%2Fmcp%3Forg%3Da%26team%3Db&response_type=code&scope=mcp%3Atools+offline&state=x%2By';
  const { o, opened, refused } = opener();
  assert.deepEqual(await showDocument({ uri: address, external: true }, o, noNext), { success: true });
  assert.deepEqual(opened, [address]);
  assert.deepEqual(refused, []);
});

test('a browser that did not open the page is a failure the daemon is told of', async () => {
  const no = opener(false);
  assert.deepEqual(await showDocument({ uri: 'https://auth.example.com/authorize?x=1', external: true }, no.o, noNext), { success: false });
  const broken = opener(new Error('no browser'));
  assert.deepEqual(await showDocument({ uri: 'https://auth.example.com/authorize', external: true }, broken.o, noNext), { success: false });
  assert.deepEqual(broken.refused, ['https://auth.example.com/authorize: no browser']);
});

test('only web addresses open externally; anything else is refused with the reason', async () => {
  for (const [uri, why] of [
    ['file:///usr/bin/xterm', 'not file:'],
    ['command:workbench.action.terminal.new', 'not command:'],
    ['vscode://some.extension/run', 'not vscode:'],
    ['javascript:alert(1)', 'not javascript:'],
    ['not an address', 'it is not an address'],
    ['', 'it is not an address'],
  ]) {
    const { o, opened, refused } = opener();
    assert.deepEqual(await showDocument({ uri, external: true }, o, noNext), { success: false }, uri);
    assert.deepEqual(opened, [], uri);
    assert.equal(refused.length, 1, uri);
    assert.ok(refused[0].endsWith(why), `${uri}: ${refused[0]}`);
  }
  const { o, opened } = opener();
  const weird = { uri: 42, external: true } as unknown as ShowDocumentParams;
  assert.deepEqual(await showDocument(weird, o, noNext), { success: false });
  assert.deepEqual(opened, []);
});

test('a document to show in the editor goes to the language client, not the browser', async () => {
  const { o, opened } = opener();
  const seen: ShowDocumentParams[] = [];
  const params = { uri: 'file:///ws/hello.txt', takeFocus: true };
  assert.deepEqual(await showDocument(params, o, async (p) => (seen.push(p), { success: true })), { success: true });
  assert.deepEqual(seen, [params]);
  assert.deepEqual(opened, []);
});

/** scripted answers pick and input in order, recording what was asked. */
function scripted(answers: Array<string | undefined>) {
  const asked: string[] = [];
  const ui: QuestionUI = {
    pick: async (title, items) => (asked.push(`pick ${title} [${items.join('|')}]`), answers.shift()),
    input: async (prompt) => (asked.push(`input ${prompt}`), answers.shift()),
  };
  return { ui, asked };
}

test("an MCP server's questions: whether to answer, a typed name, a colour from its choices", async () => {
  const q = (question: string, options: string[] | null): AskQuestionParams => ({ sessionId: '', question, options }) as unknown as AskQuestionParams;
  const { ui, asked } = scripted(['Answer', 'Ada', 'red']);
  assert.deepEqual(await answerQuestion(q('MCP server secure asks: Tell me about you.', ['Answer', 'Decline']), ui), { answer: 'Answer' });
  assert.deepEqual(await answerQuestion(q('MCP server secure: Your name', null), ui), { answer: 'Ada' });
  assert.deepEqual(await answerQuestion(q('MCP server secure: colour (default: blue)', ['red', 'blue']), ui), { answer: 'red' });
  assert.deepEqual(asked, [
    `pick MCP server secure asks: Tell me about you. [Answer|Decline|${OtherAnswer}]`,
    // No options: straight to the input box, no list to pick from.
    'input MCP server secure: Your name',
    `pick MCP server secure: colour (default: blue) [red|blue|${OtherAnswer}]`,
  ]);
});

test('a free-text question dismissed is no answer, and an empty one is an empty answer', async () => {
  const q = { sessionId: '', question: 'MCP server secure: Your name', options: null } as unknown as AskQuestionParams;
  assert.deepEqual(await answerQuestion(q, scripted([undefined]).ui), { answer: null });
  assert.deepEqual(await answerQuestion(q, scripted(['']).ui), { answer: '' });
  const missing = { sessionId: '', question: 'MCP server secure: Your name' } as AskQuestionParams;
  assert.deepEqual(await answerQuestion(missing, scripted(['Ada']).ui), { answer: 'Ada' });
});
