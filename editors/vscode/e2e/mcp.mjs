// The MCP scenario of the real-VS Code test (run.mjs calls mcpFlow once
// its own flow passed): an MCP server behind OAuth (internal/mcptest,
// started in-process by TestVSCodeRealEditor, its endpoint in
// $CLINE_MCP_URL) signs in from VS Code, and its elicitation is asked
// in VS Code.
//
// A code-server of its own, since the server must be in the daemon's
// config file before the daemon starts. Opening the chat starts the
// daemon, which asks VS Code to open the sign-in page
// (window/showDocument, external); VS Code asks whether to open the site
// (the server is on 127.0.0.2, not an address VS Code takes for this
// machine) and, on Open, opens it in a new tab of the browser. The
// authorization server checks that the address reached it unchanged (the
// resource it names is the endpoint, an escaped & in its query) and
// redirects that tab to the daemon's loopback listener, which says
// "Signed in to secure". Once the daemon's log says
// the server runs with its tools, a task makes the model call whoami
// and ask; the questions are answered in the chat as a user would (Answer, "Ada", red), and the model's last request
// holds the answer (its transcript expects it).
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openWorkbench, ownUserData, paletteCommand, serverArgs, stopServer } from './ownserver.mjs';

const transcript = {
  model: 'replay-vscode-mcp',
  chunk_size: 4,
  replies: [
    {
      expect: { last_user_contains: 'who am I', tools: ['secure__mcp__whoami', 'secure__mcp__ask'] },
      events: [{ tool_call: { id: 'm1', name: 'secure__mcp__whoami', args: {} } }],
    },
    { expect: { last_tool_result_contains: 'signed in as ada' }, events: [{ tool_call: { id: 'm2', name: 'secure__mcp__ask', args: {} } }] },
    { expect: { last_tool_result_contains: 'accept {"colour":"red","name":"Ada"}' }, events: [{ text: 'Hello, Ada.' }] },
  ],
};

/**
 * mcpFlow runs the scenario; it throws on a failed check.
 * @param {{chrome: any, node24: string, codeServer: string, common: string[], userData: string,
 *   freePort: () => Promise<number>, waitHTTP: Function, step: (s: string) => void, log: Function}} env
 */
export async function mcpFlow({ chrome, node24, codeServer, common, userData, freePort, waitHTTP, step, log }) {
  const url = process.env.CLINE_MCP_URL;
  if (!url) throw new Error('CLINE_MCP_URL must be set (TestVSCodeRealEditor sets it)');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cline-ls-vscode-mcp-'));
  const ws = path.join(tmp, 'ws');
  fs.mkdirSync(ws);
  fs.writeFileSync(path.join(ws, 'notes.txt'), 'MCP\n');
  // The main flow's settings, in a user data folder of this server's own.
  const data = ownUserData(tmp, userData);
  // The server in the user's config file, as a user configures it; its
  // calls run without asking, so that the questions are the server's.
  const config = path.join(tmp, 'config');
  fs.mkdirSync(path.join(config, 'cline-ls'), { recursive: true });
  fs.writeFileSync(
    path.join(config, 'cline-ls', 'config.json'),
    JSON.stringify({ mcpServers: [{ name: 'secure', type: 'http', url, headers: [] }], approvals: { mcp: 'allow' } }),
  );
  const transcriptFile = path.join(tmp, 'transcript.json');
  fs.writeFileSync(transcriptFile, JSON.stringify(transcript));

  const args = common.map((a) => (a === userData ? data : a));
  const port = await freePort();
  const logFile = path.join(tmp, 'code-server.log');
  const out = fs.openSync(logFile, 'w');
  const env = {
    ...process.env,
    CLINE_LS_PROVIDER: 'replay',
    CLINE_LS_TRANSCRIPT: transcriptFile,
    XDG_STATE_HOME: path.join(tmp, 'state'),
    XDG_CONFIG_HOME: config,
  };
  step(`mcp: starting code-server on port ${port}`);
  const server = spawn(
    node24,
    [codeServer, ...args, ...serverArgs(port, ws)],
    { env, stdio: ['ignore', out, out] },
  );
  const context = await chrome.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  page.setDefaultTimeout(120_000);
  let ok = false;
  try {
    const base = `http://127.0.0.1:${port}`;
    await openWorkbench(page, server, base, ws, waitHTTP);
    step('mcp: workbench loaded');

    // Any tab the workbench opens from now on is the sign-in page.
    const opened = context.waitForEvent('page', { timeout: 120_000 });
    // Opening the chat starts the daemon. The palette lists the commands
    // known when it opens, so it is opened again until ours are there.
    for (let tries = 1; ; tries++) {
      try {
        await paletteCommand(page, 'Cline: Open Chat');
        break;
      } catch (err) {
        if (tries === 12) throw err;
        await page.keyboard.press('Escape');
      }
    }
    const chat = page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
    await chat.locator('#input').waitFor();
    step('mcp: chat open, daemon started');

    // VS Code may ask before it opens a site: the user says Open.
    const openSite = page.locator('.monaco-dialog-box', { hasText: 'open the external website' }).getByRole('button', { name: 'Open', exact: true });
    const tab = await Promise.race([
      opened,
      openSite.waitFor().then(async () => {
        step('mcp: VS Code asked to open the sign-in page; Open');
        await openSite.click();
        return opened;
      }),
    ]);
    await tab.waitForLoadState();
    await tab
      .locator('body', { hasText: 'Signed in to secure' })
      .waitFor({ timeout: 60_000 })
      .catch(async (err) => {
        const said = await tab.locator('body').innerText().catch(() => '');
        throw new Error(`the sign-in tab, at ${tab.url()}, says ${JSON.stringify(said.slice(0, 500))}: ${err.message}`);
      });
    if (!tab.url().startsWith('http://127.0.0.1:')) throw new Error(`the sign-in ended at ${tab.url()}, not the daemon's loopback listener`);
    step(`mcp: the sign-in page opened in a new tab and ended at the daemon: ${new URL(tab.url()).origin}`);
    await tab.close();

    // The server's tools are offered from the model request after it
    // runs: the daemon's log, in the Output panel, says when.
    await paletteCommand(page, 'Output: Show Output Channels...');
    const channel = page.locator('.quick-input-list .monaco-list-row', { hasText: 'Cline (daemon)' }).first();
    await channel.click();
    await page.locator('.output-view .view-lines', { hasText: 'name=secure state=running tools=2' }).waitFor({ timeout: 60_000 });
    step('mcp: the daemon runs the server with its two tools');

    await chat.locator('#input').fill('who am I, and ask me');
    await chat.locator('#input').press('Enter');

    // The questions, in the chat: a card with the options as buttons and
    // a box for an answer of one's own.
    const question = (text) => chat.locator('.question:not(.answered)', { hasText: text });
    const pick = async (text, answer) => {
      await question(text).waitFor({ timeout: 60_000 });
      await question(text).getByRole('button', { name: answer, exact: true }).click();
    };
    await pick('MCP server secure asks: Tell me about you.', 'Answer');
    const name = question('MCP server secure: Your name');
    await name.waitFor({ timeout: 60_000 });
    await name.locator('input.other').fill('Ada');
    await name.locator('input.other').press('Enter');
    await pick('MCP server secure: colour (default: blue)', 'red');
    step('mcp: the server\'s questions answered in VS Code');

    await chat.locator('.msg.agent', { hasText: 'Hello, Ada.' }).waitFor();
    await chat.locator('details.card.status-completed', { hasText: 'whoami' }).first().waitFor();
    step('mcp: the model read whoami and the answers');
    log('mcp PASS');
    ok = true;
  } catch (err) {
    for (const p of context.pages()) await p.screenshot({ path: path.join(tmp, `mcp-failure-${context.pages().indexOf(p)}.png`) }).catch(() => undefined);
    log(`mcp: failed; screenshots and code-server log in ${tmp}`);
    log(fs.readFileSync(logFile, 'utf8').slice(-4000));
    throw err;
  } finally {
    await context.close().catch(() => undefined);
    await stopServer(server);
    if (ok) fs.rmSync(tmp, { recursive: true, force: true });
  }
}
