// What the scenarios that run a code-server of their own (hooks.mjs,
// mcp.mjs) share: the main flow's user settings in a user data folder of
// their own, stopping their server, and running a palette command.
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * ownUserData copies the main flow's User and Machine settings into
 * tmp/user-data, without its model and transcript: the scenario's daemon
 * takes its own from the environment. It returns the folder.
 */
export function ownUserData(tmp, userData) {
  const data = path.join(tmp, 'user-data');
  for (const dir of ['User', 'Machine']) {
    fs.mkdirSync(path.join(data, dir), { recursive: true });
    const settings = JSON.parse(fs.readFileSync(path.join(userData, dir, 'settings.json'), 'utf8'));
    delete settings['cline.transcript'];
    delete settings['cline.model'];
    fs.writeFileSync(path.join(data, dir, 'settings.json'), JSON.stringify(settings, null, 2));
  }
  return data;
}

/** stopServer ends a code-server: SIGTERM, then SIGKILL after ten seconds. */
export async function stopServer(server) {
  if (server.exitCode !== null || server.signalCode !== null) return;
  const exited = new Promise((r) => server.once('exit', r));
  server.kill('SIGTERM');
  const timer = setTimeout(() => server.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** paletteCommand runs the command title from the palette, its row clicked within ten seconds or not at all. */
export async function paletteCommand(page, title) {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor();
  await input.fill(`>${title}`);
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
  await row.waitFor({ timeout: 10_000 });
  await row.click();
}

/** serverArgs are code-server's flags for a test server on port, opening folder ws. */
export function serverArgs(port, ws) {
  return ['--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust', '--disable-getting-started-override', ws];
}

/** openWorkbench waits for the server at base, opens folder ws in page and waits for the workbench, focused. */
export async function openWorkbench(page, server, base, ws, waitHTTP) {
  await waitHTTP(`${base}/healthz`, server, 60_000);
  await page.goto(`${base}/?folder=${encodeURIComponent(ws)}`);
  await page.locator('.monaco-workbench').waitFor();
  await page.locator('.monaco-workbench').click({ position: { x: 640, y: 400 } }).catch(() => undefined);
}
