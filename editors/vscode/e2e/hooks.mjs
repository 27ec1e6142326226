// The Claude Code hooks scenario of the real-VS Code test (run.mjs calls
// hooksFlow once its own flow passed): the hook scripts of testdata/hooks
// at the repository's root, configured in the user's config file, run
// unchanged with the extension. vscode_test's TestVSCodeRealEditor writes
// the Go module and the config file (internal/hookstest) and passes them:
//
//   CLINE_HOOK_WS          the folder to open (go.mod, main.go, build/)
//   CLINE_HOOK_CONFIG      XDG_CONFIG_HOME holding cline-ls/config.json
//   CLINE_HOOK_TRANSCRIPT  the replay model's transcript
//   CLINE_HOOK_PROMPT, CLINE_HOOK_BLOCKED, CLINE_HOOK_CONTEXT, CLINE_HOOK_LAST
//                          what the task is and what the cards must say
//
// A code-server of its own (the transcript and the config are the
// daemon's environment), in the same Chromium: the task's rm -rf build is
// refused by the PreToolUse hook, its card failed with the hook's reason;
// the edit of main.go is allowed from its card, and that card shows the
// PostToolUse hook's outcome once done; the model's last words follow
// go vet's report, which its transcript expects.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openWorkbench, ownUserData, paletteCommand, serverArgs, stopServer } from './ownserver.mjs';

function need(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} must be set (TestVSCodeRealEditor sets it)`);
  return v;
}

/**
 * hooksFlow runs the scenario; it throws on a failed check.
 * @param {{chrome: any, node24: string, codeServer: string, common: string[], userData: string,
 *   freePort: () => Promise<number>, waitHTTP: Function, step: (s: string) => void, log: Function}} env
 */
export async function hooksFlow({ chrome, node24, codeServer, common, userData, freePort, waitHTTP, step, log }) {
  const ws = need('CLINE_HOOK_WS');
  const want = { prompt: need('CLINE_HOOK_PROMPT'), blocked: need('CLINE_HOOK_BLOCKED'), context: need('CLINE_HOOK_CONTEXT'), last: need('CLINE_HOOK_LAST') };
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cline-ls-vscode-hooks-'));
  // The main flow's settings, in a user data folder of this server's own.
  const data = ownUserData(tmp, userData);
  const args = common.map((a) => (a === userData ? data : a));
  const port = await freePort();
  const logFile = path.join(tmp, 'code-server.log');
  const out = fs.openSync(logFile, 'w');
  const env = {
    ...process.env,
    CLINE_LS_PROVIDER: 'replay',
    CLINE_LS_TRANSCRIPT: need('CLINE_HOOK_TRANSCRIPT'),
    XDG_STATE_HOME: path.join(tmp, 'state'),
    XDG_CONFIG_HOME: need('CLINE_HOOK_CONFIG'),
  };
  step(`hooks: starting code-server on port ${port}`);
  const server = spawn(
    node24,
    [codeServer, ...args, ...serverArgs(port, ws)],
    { env, stdio: ['ignore', out, out] },
  );
  const page = await chrome.newPage({ viewport: { width: 1280, height: 800 } });
  page.setDefaultTimeout(120_000);
  let ok = false;
  try {
    const base = `http://127.0.0.1:${port}`;
    await openWorkbench(page, server, base, ws, waitHTTP);
    step('hooks: workbench loaded');

    // The palette lists the commands known when it opens: right after
    // the workbench loads, the extension's may not be registered yet, so
    // it is opened again until they are.
    const ask = page.locator('.quick-input-widget', { hasText: 'New Cline task (act mode)' });
    for (let tries = 1; ; tries++) {
      try {
        await paletteCommand(page, 'Cline: New Task (Act)');
        await ask.waitFor({ timeout: 10_000 });
        break;
      } catch (err) {
        if (tries === 12) throw err;
        await page.keyboard.press('Escape');
      }
    }
    await page.locator('.quick-input-widget input').fill(want.prompt);
    await page.keyboard.press('Enter');
    const chat = page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');

    // The refused command: failed, the hook's outcome and reason on its
    // card, and no approval asked for it.
    const command = chat.locator('details.card.status-failed', { hasText: 'rm -rf build' });
    await command.waitFor();
    await command.locator('summary').click();
    await command.locator('.body', { hasText: 'Hook PreToolUse (' }).waitFor();
    await command.locator('.body', { hasText: want.blocked }).waitFor();
    if ((await command.getByRole('button', { name: 'Allow', exact: true }).count()) !== 0) throw new Error('the refused command asked for approval');
    step('hooks: rm -rf refused by the PreToolUse hook, shown on its card');

    // The edit asks; allowed, its card shows the PostToolUse outcome.
    const edit = chat.locator('details.card', { hasText: 'Edit main.go' });
    await edit.getByRole('button', { name: 'Allow', exact: true }).click();
    await chat.locator('.msg.agent', { hasText: want.last }).waitFor();
    const done = chat.locator('details.card.status-completed', { hasText: 'Edit main.go' });
    await done.waitFor();
    if (!(await done.evaluate((el) => el.open))) await done.locator('summary').click();
    await done.locator('.body', { hasText: 'Hook PostToolUse (' }).waitFor({ timeout: 30_000 });
    await done.locator('.body', { hasText: want.context }).waitFor({ timeout: 30_000 });
    step('hooks: the edit card shows the PostToolUse hook; the model saw go vet');
    log('hooks PASS');
    ok = true;
  } catch (err) {
    await page.screenshot({ path: path.join(tmp, 'hooks-failure.png') }).catch(() => undefined);
    log(`hooks: failed; screenshot and code-server log in ${tmp}`);
    log(fs.readFileSync(logFile, 'utf8').slice(-4000));
    throw err;
  } finally {
    await page.close().catch(() => undefined);
    await stopServer(server);
    if (ok) fs.rmSync(tmp, { recursive: true, force: true });
  }
}
