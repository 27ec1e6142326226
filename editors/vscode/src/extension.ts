// The VS Code side of the cline-ls client: it starts the daemon through
// vscode-languageclient and wires the protocol glue in ./protocol (which
// knows nothing of VS Code) to VS Code's commands, notifications, quick
// picks, diff editor, output channel and status bar.

import { execFile } from 'node:child_process';
import { constants as fsConstants } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { LanguageClient, LanguageClientOptions, ServerOptions, State, StaticFeature, TransportKind } from 'vscode-languageclient/node';
import type { CancellationToken } from 'vscode-languageclient/node';

import { ChatViewProvider, chatViewId } from './chatView';
import { answerLspRequest, fillLspCapability, lspRequestMethod } from './lspTools';
import { fillClineCapabilities } from './protocol/capabilities';
import { ChatModel, ChatSetup, FromWebview, mentionLabel, Mention, sessionTitle } from './protocol/chat';
import { diagnosticsParams, EditorDiagnostic } from './protocol/diagnostics';
import { CheckpointUI, ClineController, ClineUI, errorText, relativePath, RestoreScope } from './protocol/controller';
import { DiffUI, ProposedFile, showAppliedChange, showProposedChange } from './protocol/diffs';
import { ExternalOpener, showDocument, ShowDocumentResult } from './protocol/external';
import { Method, Modes } from './protocol/methods';
import { SessionState, SessionView } from './protocol/session';
import { didChangeConfigurationParams, ExtensionSettings, initializationOptions, readSettings, restartNeeded } from './protocol/settings';
import type { ApprovalRequestParams, Rpc } from './protocol/types';

const proposedScheme = 'cline-proposed';

/** sessionKey is where the workspace keeps the task on screen, so a reload or a new daemon brings it back. */
const sessionKey = 'cline.sessionId';

/** maxMentionBytes bounds the text a file mention sends; a bigger file goes as a link the model reads. */
const maxMentionBytes = 256 * 1024;

/** setupProviders are the providers the first-run panel offers (cline.provider's choices, replay aside). */
const setupProviders = ['anthropic', 'openai', 'gemini', 'openrouter', 'openai-compatible', 'ollama', 'lmstudio', 'vllm'];

/**
 * providerKeyEnv is the variable the daemon reads a provider's key from
 * when cline.apiKeyEnv names none (rpc/settings.go's defaultModels).
 */
const providerKeyEnv: Record<string, string> = { anthropic: 'ANTHROPIC_API_KEY', openai: 'OPENAI_API_KEY', gemini: 'GEMINI_API_KEY' };

let extension: ClineExtension | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  extension = new ClineExtension(context);
  // A daemon that cannot start is reported; the next command tries again.
  await extension.start().catch((err) => extension?.fail(err));
}

export async function deactivate(): Promise<void> {
  await extension?.stop();
  extension = undefined;
}

function currentSettings(): ExtensionSettings {
  const cfg = vscode.workspace.getConfiguration('cline');
  return readSettings((key) => cfg.get(key));
}

function workspaceRoot(): string | undefined {
  return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
}

/** notCancelled is the token the language client's own showDocument handler is given (and ignores). */
const notCancelled: CancellationToken = { isCancellationRequested: false, onCancellationRequested: () => ({ dispose: () => undefined }) };

/**
 * clineFeature declares experimental.cline in the client capabilities, the
 * language servers' methods (lspTools.ts) among them. It takes back
 * window.workDoneProgress, which the language client declares: the chat
 * and the status bar item show a turn's progress, and the client's own
 * progress item would show the same task a second time.
 */
const clineFeature: StaticFeature = {
  fillClientCapabilities: (caps) => {
    fillClineCapabilities(caps);
    fillLspCapability(caps);
    if (caps.window) caps.window.workDoneProgress = false;
  },
  initialize: () => undefined,
  getState: () => ({ kind: 'static' }),
  clear: () => undefined,
};

/**
 * DaemonLog is the "Cline (daemon)" output channel, made once for every
 * start of the daemon (the language client would make a new one each
 * time). It keeps the tail of what the daemon wrote to stderr, so that a
 * failed start can say why.
 */
class DaemonLog {
  private readonly channel = vscode.window.createOutputChannel('Cline (daemon)');
  private tail = '';

  /** output is the channel as the language client writes to it. */
  readonly output: vscode.OutputChannel = new Proxy(this.channel, {
    get: (target, prop, receiver) => {
      if (prop === 'append' || prop === 'appendLine') {
        return (text: string) => {
          this.keep(prop === 'append' ? text : text + '\n');
          target[prop](text);
        };
      }
      if (prop === 'dispose') return () => undefined; // the extension disposes it, not each client
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });

  /** mark starts a new start attempt: only its output explains its failure. */
  mark(): void {
    this.tail = '';
  }

  /** lastLines is the end of what was written since mark. */
  lastLines(n = 8): string {
    return this.tail.trimEnd().split('\n').slice(-n).join('\n');
  }

  dispose(): void {
    this.channel.dispose();
  }

  private keep(text: string): void {
    this.tail = (this.tail + text).slice(-4000);
  }
}

/**
 * startFailure says why the daemon did not start: the binary is missing,
 * or it ran and said why (its stderr), or the client's own error.
 */
export function startFailure(path: string, err: unknown, stderrTail: string): string {
  const e = err as { code?: string } | undefined;
  const msg = errorText(err);
  if (e?.code === 'ENOENT' || /\bENOENT\b/.test(msg)) {
    return `cline-ls was not found at "${path}". Install it (go install ./cmd/cline-ls) and put it on PATH, or set "cline.path" in your User settings (for a remote window: its Remote settings) to the binary.`;
  }
  if (stderrTail.trim()) return `cline-ls (${path}) did not start: ${stderrTail.trim()}`;
  return `cline-ls (${path}) did not start: ${msg}. See the "Cline (daemon)" output.`;
}

class ClineExtension {
  private readonly output = vscode.window.createOutputChannel('Cline');
  private readonly daemonLog = new DaemonLog();
  private readonly view = new SessionView(this.output);
  private readonly status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 100);
  private readonly chatView: ChatViewProvider;
  private readonly chat: ChatModel;
  private readonly proposed = new Map<string, string>();
  private proposedCount = 0;
  private settings = currentSettings();
  private client: LanguageClient | undefined;
  private controller: ClineController | undefined;
  private readonly diagnosticsSessions = new Set<string>();
  /** stopping is set while the extension itself stops the client: a stop it did not ask for is a crash. */
  private stopping = false;
  /** lost is the task on screen when the daemon died, until the restarted one is offered it. */
  private lost: string | undefined;
  /** setupProvider is the provider picked in the first-run panel, which stays until a model is picked. */
  private setupProvider = '';

  constructor(private readonly context: vscode.ExtensionContext) {
    const cmd = (id: string, run: () => Promise<unknown>) =>
      vscode.commands.registerCommand(id, () => run().catch((err) => this.fail(err)));
    this.chatView = new ChatViewProvider(context.extensionUri, (m) => this.fromChat(m).catch((err) => this.fail(err)));
    this.chat = new ChatModel((m) => this.chatView.post(m), { mode: this.settings.mode || 'act', model: this.settings.model });
    this.chatView.model = this.chat;
    context.subscriptions.push(
      vscode.window.registerWebviewViewProvider(chatViewId, this.chatView, { webviewOptions: { retainContextWhenHidden: true } }),
      vscode.languages.onDidChangeDiagnostics((e) => this.sendDiagnostics(e.uris)),
      this.output,
      this.daemonLog,
      this.status,
      vscode.workspace.registerTextDocumentContentProvider(proposedScheme, {
        provideTextDocumentContent: (uri) => this.proposed.get(uri.toString()) ?? '',
      }),
      cmd('cline.newTaskAct', () => this.newTask('act')),
      cmd('cline.newTaskPlan', () => this.newTask('plan')),
      cmd('cline.sendMessage', () => this.sendMessage()),
      cmd('cline.switchMode', () => this.switchMode()),
      cmd('cline.cancelTask', async () => this.controller?.cancel()),
      cmd('cline.showOutput', async () => this.output.show(true)),
      cmd('cline.openChat', () => this.chatView.reveal()),
      cmd('cline.undoTurn', () => this.undoTurn()),
      cmd('cline.forkTask', () => this.forkSession()),
      cmd('cline.showCheckpoints', () => this.checkpoints()),
      cmd('cline.restart', () => this.restart()),
      vscode.workspace.onDidCloseTextDocument((doc) => {
        if (doc.uri.scheme === proposedScheme) this.proposed.delete(doc.uri.toString());
      }),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('cline')) this.settingsChanged().catch((err) => this.fail(err));
      }),
    );
    this.status.command = 'cline.newTaskAct';
    this.status.text = '$(hubot) Cline';
    this.status.tooltip = 'Cline: start a task';
    this.status.show();
  }

  /** start launches the daemon and connects the glue to it. */
  async start(): Promise<void> {
    const serverOptions: ServerOptions = {
      command: this.settings.path,
      args: ['serve'],
      transport: TransportKind.stdio,
      options: { cwd: workspaceRoot() },
    };
    const clientOptions: LanguageClientOptions = {
      // Every file: the agent reads and edits open buffers of any language.
      documentSelector: [{ scheme: 'file' }],
      initializationOptions: () => initializationOptions(this.settings),
      outputChannel: this.daemonLog.output,
      // An MCP server's sign-in page, opened as the daemon wrote it.
      middleware: {
        window: {
          showDocument: (params, next) => showDocument(params, this.externalOpener(), async (p) => (await next(p as typeof params, notCancelled)) as ShowDocumentResult),
        },
      },
    };
    const client = new LanguageClient('cline', 'Cline', serverOptions, clientOptions);
    client.registerFeature(clineFeature);
    const rpc: Rpc = {
      request: (method, params) => client.sendRequest(method, params),
      notify: (method, params) => client.sendNotification(method, params),
    };
    const controller = new ClineController({
      rpc,
      ui: this.ui(),
      view: this.view,
      chat: this.chat,
      cwd: workspaceRoot,
      onChange: (st) => {
        this.sessionSeen(st.sessionId);
        this.showStatus(st);
        this.remember();
      },
    });
    for (const [method, handler] of controller.notifications()) client.onNotification(method, handler);
    for (const [method, handler] of controller.requests()) client.onRequest(method, handler);
    client.onRequest(lspRequestMethod, (p: unknown) => answerLspRequest(vscode, p));
    this.client = client;
    this.controller = controller;
    this.daemonLog.mark();
    try {
      await client.start();
    } catch (err) {
      this.client = this.controller = undefined;
      await client.dispose().catch(() => undefined);
      throw new Error(startFailure(this.settings.path, err, this.daemonLog.lastLines()));
    }
    // The language client restarts a daemon that died on its own; the
    // task on screen is then unknown to the new one, which is told.
    client.onDidChangeState((e) => {
      if (this.client !== client || this.stopping) return;
      if (e.newState !== State.Running && this.chat.state.sessionId) {
        this.lost = this.chat.state.sessionId;
        this.chat.detach();
        this.refreshStatus();
      } else if (e.newState === State.Running && this.lost) {
        const id = this.lost;
        this.lost = undefined;
        this.offerResume(id);
      }
    });
    await this.refreshSetup();
    await this.resumeRemembered(controller);
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = this.controller = undefined;
    this.stopping = true;
    try {
      if (client?.isRunning()) await client.stop();
    } finally {
      this.stopping = false;
    }
  }

  private async restart(): Promise<void> {
    await this.stop();
    // The new daemon knows no session: the task on screen is loaded anew.
    this.chat.detach();
    await this.start();
    this.view.line(undefined, 'cline-ls restarted');
  }

  /**
   * remember keeps the task on screen in the workspace's state; a task the
   * chat let go of because its daemon died stays remembered until the user
   * starts another (forget).
   */
  private remember(): void {
    const id = this.chat.state.sessionId;
    if (id && this.context.workspaceState.get(sessionKey) !== id) void this.context.workspaceState.update(sessionKey, id);
  }

  private forget(): void {
    void this.context.workspaceState.update(sessionKey, undefined);
  }

  /**
   * resumeRemembered loads the task the workspace had on screen (before a
   * reload of the window, or a restart of the daemon) when the chat shows
   * none: its history is replayed into the chat.
   */
  private async resumeRemembered(controller: ClineController): Promise<void> {
    const id = this.context.workspaceState.get<string>(sessionKey);
    if (!id || this.chat.state.sessionId) return;
    await this.resume(controller, id, true);
  }

  /**
   * resume loads a saved session into the chat. A session another daemon
   * holds (another window) is offered as a fork; while the window that
   * reloaded lets go of it, the hold is waited out a little first.
   */
  private async resume(controller: ClineController, sessionId: string, retryHeld: boolean): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await controller.loadSession(sessionId);
        this.remember();
        return;
      } catch (err) {
        const held = heldBy(err);
        if (held === undefined) {
          this.chat.clear();
          this.chat.note(`Could not resume the task: ${errorText(err)}`, 'error');
          return;
        }
        if (retryHeld && attempt < 20) {
          await new Promise((r) => setTimeout(r, 250));
          continue;
        }
        this.chat.clear();
        this.offerFork(controller, sessionId, held);
        return;
      }
    }
  }

  /** offerFork tells the user another window has the task, and offers a copy of it to go on with. */
  private offerFork(controller: ClineController, sessionId: string, pid: number): void {
    this.chat.note(
      `This task is open in another window (cline-ls process ${pid}), which keeps its history; only one window can add to it. Fork it to go on here with a copy of its history.`,
      'info',
      [
        { id: 'fork', label: 'Fork' },
        { id: 'cancel', label: 'Not now' },
      ],
      (action) => {
        if (action === 'fork') controller.forkSession(sessionId, 0).then(() => this.remember(), (err) => this.chat.note(`Fork failed: ${errorText(err)}`, 'error'));
      },
    );
  }

  /** offerResume tells the user the daemon stopped, and offers the task it had. */
  private offerResume(sessionId: string): void {
    this.chat.note(
      'cline-ls stopped unexpectedly and was restarted. The task is saved: resume it to go on where it was.',
      'error',
      [
        { id: 'resume', label: 'Resume' },
        { id: 'new', label: 'New task' },
      ],
      (action) => {
        if (action === 'resume' && this.controller) void this.resume(this.controller, sessionId, true);
        else {
          this.chat.clear();
          this.forget();
        }
      },
    );
  }

  /**
   * refreshSetup shows the first-run panel while the daemon has no model
   * provider (none in the settings, its config file or the environment),
   * and while a provider picked in the panel waits for its model.
   */
  private async refreshSetup(): Promise<void> {
    const client = this.client;
    if (!client?.isRunning()) return;
    let res: { current: string; models: Array<{ id: string }> };
    try {
      res = await client.sendRequest(Method.models, {});
    } catch {
      return;
    }
    const models = (res.models ?? []).map((m) => m.id);
    const none = !res.current && models.length === 0;
    // The chip names the model a new task would use (a task's own comes
    // with its config_option_update).
    if (!this.chat.state.sessionId && res.current && res.current !== this.chat.state.model) this.chat.setState({ model: res.current });
    const picking = this.setupProvider !== '' && this.settings.provider === this.setupProvider && !this.settings.model;
    if (!none && !picking) {
      this.setupProvider = '';
      if (this.chat.state.setup) this.chat.setState({ setup: undefined });
      return;
    }
    const provider = none ? '' : this.settings.provider;
    const keyEnv = this.settings.apiKeyEnv || providerKeyEnv[provider] || '';
    const setup: ChatSetup = { providers: setupProviders, provider, models, model: this.settings.model, keyEnv, keySet: keyEnv !== '' && !!process.env[keyEnv] };
    this.chat.setState({ setup });
  }

  /** tryDemo makes the daemon's offline demo (a sample project and its recorded session) and opens it in a new window. */
  private async tryDemo(): Promise<void> {
    this.chat.note('Making the offline demo (cline-ls demo --replay --keep)…');
    const out = await new Promise<string>((resolve, reject) =>
      execFile(this.settings.path, ['demo', '--replay', '--keep'], { timeout: 120_000, maxBuffer: 1 << 20, env: { ...process.env, NO_COLOR: '1' } }, (err, stdout) =>
        err ? reject(new Error(startFailure(this.settings.path, err, ''))) : resolve(stdout),
      ),
    );
    const folder = /^folder:\s*(.+)$/m.exec(out)?.[1]?.trim();
    if (!folder) throw new Error('cline-ls demo did not say where it made the demo');
    // The demo leaves its transcript beside the project; the folder's own
    // settings point the replay provider at it.
    await fs.mkdir(path.join(folder, '.vscode'), { recursive: true });
    await fs.writeFile(path.join(folder, '.vscode', 'settings.json'), JSON.stringify({ 'cline.transcript': path.join(path.dirname(folder), 'transcript.json') }, null, 2));
    this.chat.note(`The demo is in ${folder}: in its window, choose plan, send "The greeting test fails. Find out why and propose a fix.", then switch to act.`);
    await vscode.commands.executeCommand('vscode.openFolder', vscode.Uri.file(folder), { forceNewWindow: true });
  }

  /** ready returns the controller, starting the daemon if it is not running. */
  private async ready(): Promise<ClineController> {
    if (!this.controller) await this.start();
    return this.controller!;
  }

  private async settingsChanged(): Promise<void> {
    const next = currentSettings();
    const prev = this.settings;
    this.settings = next;
    if (restartNeeded(prev, next) || !this.client) {
      if (this.client) await this.restart();
      else await this.start();
    } else if (this.client?.isRunning()) {
      await this.client.sendNotification(Method.didChangeConfiguration, didChangeConfigurationParams(next));
      await this.refreshSetup();
    }
  }

  private async newTask(mode: 'act' | 'plan'): Promise<void> {
    const controller = await this.ready();
    const text = await vscode.window.showInputBox({ prompt: `New Cline task (${mode} mode)`, placeHolder: 'What should Cline do?', ignoreFocusOut: true });
    if (!text?.trim()) return;
    await this.chatView.reveal();
    this.runTurn(controller.newTask(mode, text));
  }

  private async sendMessage(): Promise<void> {
    const controller = await this.ready();
    const current = controller.tracker.get(controller.tracker.current);
    if (!current) return this.newTask(this.settings.mode === 'plan' ? 'plan' : 'act');
    if (current.running) {
      vscode.window.showInformationMessage('Cline is still working on this task; wait for it or cancel it first.');
      return;
    }
    const text = await vscode.window.showInputBox({ prompt: `Message to the current Cline task (${current.mode} mode)`, ignoreFocusOut: true });
    if (!text?.trim()) return;
    await this.chatView.reveal();
    this.runTurn(controller.prompt(text, current.sessionId));
  }

  /** runTurn lets a turn run in the background; the output shows its progress and end. */
  private runTurn(turn: Promise<unknown>): void {
    // The controller wrote the error to the output already; only tell.
    turn.catch((err) => vscode.window.showErrorMessage(`Cline: ${withHint(errorText(err))}`));
  }

  private async switchMode(): Promise<void> {
    const controller = await this.ready();
    const current = controller.tracker.get(controller.tracker.current);
    if (!current) {
      vscode.window.showInformationMessage('No Cline task yet: start one with "Cline: New Task".');
      return;
    }
    const modes = current.availableModes.length > 0 ? current.availableModes : Modes.map((id) => ({ id, name: id, description: '' }));
    const picked = await vscode.window.showQuickPick(
      modes.map((m) => ({ label: m.id, description: m.id === current.mode ? '(current)' : m.name !== m.id ? m.name : undefined, detail: m.description || undefined })),
      { title: 'Cline: Switch Mode', placeHolder: `Current mode: ${current.mode}` },
    );
    if (picked && picked.label !== current.mode) await controller.setMode(picked.label, current.sessionId);
  }

  /**
   * sessionSeen sends every open document's diagnostics when a session is
   * first seen: the baseline the daemon compares an edit's with.
   */
  private sessionSeen(sessionId: string): void {
    if (this.diagnosticsSessions.has(sessionId)) return;
    this.diagnosticsSessions.add(sessionId);
    this.sendDiagnostics(vscode.workspace.textDocuments.map((d) => d.uri));
  }

  /**
   * sendDiagnostics sends the daemon the diagnostics of those of uris that
   * are open documents (the daemon mirrors only those), every source's,
   * with the version their didChange carries (PROTOCOL.md §10).
   */
  private sendDiagnostics(uris: readonly vscode.Uri[]): void {
    const client = this.client;
    if (!client?.isRunning()) return;
    for (const uri of uris) {
      if (uri.scheme !== 'file') continue;
      const key = uri.toString();
      const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === key);
      if (!doc) continue;
      const diags = vscode.languages.getDiagnostics(uri) as readonly EditorDiagnostic[];
      client.sendNotification(Method.diagnostics, diagnosticsParams(key, doc.version, diags)).catch(() => undefined);
    }
  }

  /**
   * showStatus is the status bar item: the chat's task, as the chat shows
   * it (its mode, and its totals: a resumed task's as the daemon replayed
   * them).
   */
  private showStatus(st?: SessionState): void {
    if (st && st.sessionId !== this.chat.state.sessionId) return;
    const c = this.chat.state;
    if (!c.sessionId) {
      this.status.text = '$(hubot) Cline';
      this.status.tooltip = 'Cline: start a task';
      this.status.command = 'cline.openChat';
      return;
    }
    const tokens = c.usage.inputTokens + c.usage.outputTokens;
    const state = c.pending ? `$(question) ${c.pending} waiting` : c.running ? '$(loading~spin) working' : '$(hubot) idle';
    this.status.text = `${state} · ${c.mode}${tokens ? ` · ${compactCount(tokens)} tokens` : ''}`;
    this.status.tooltip = `Cline (${c.mode} mode): ${c.meter || 'no usage yet'}. Click to open the chat.`;
    this.status.command = 'cline.openChat';
  }

  /** fromChat runs what the user did in the chat view. */
  private async fromChat(m: FromWebview): Promise<void> {
    switch (m.type) {
      case 'send': {
        // The prompt box keeps the text until the prompt is taken: a
        // daemon that cannot start says so in the chat, and the text waits
        // for the fix.
        let controller: ClineController;
        try {
          controller = await this.ready();
        } catch (err) {
          this.failInChat(err);
          return;
        }
        const sessionId = this.chat.state.sessionId;
        const current = controller.tracker.get(sessionId);
        if (current?.running) {
          this.chat.note('Cline is still working on this task: wait for it or cancel it first.');
          return;
        }
        const mentions = await Promise.all(m.mentions.map(withText));
        this.chatView.post({ type: 'sent' });
        this.runTurn(sessionId ? controller.prompt(m.text, sessionId, mentions) : controller.newTask(this.chat.state.mode, m.text, mentions));
        return;
      }
      case 'action':
        if (!this.chat.act(m.itemId, m.actionId)) this.chat.note('That choice was already made.');
        return;
      case 'answerQuestion':
        this.chat.answerQuestion(m.itemId, m.answer);
        return;
      case 'openSettings':
        await vscode.commands.executeCommand('workbench.action.openSettings', '@ext:cline-ls.cline-ls');
        return;
      case 'tryDemo':
        await this.tryDemo();
        return;
      case 'setupProvider':
        this.setupProvider = m.provider;
        await vscode.workspace.getConfiguration('cline').update('provider', m.provider, vscode.ConfigurationTarget.Global);
        return;
      case 'setupModel':
        this.setupProvider = '';
        await vscode.workspace.getConfiguration('cline').update('model', m.model, vscode.ConfigurationTarget.Global);
        return;
      case 'models': {
        const controller = await this.ready();
        const res = await controller.models(this.chat.state.sessionId);
        this.chatView.post({ type: 'models', models: res.models.map((x) => x.id), current: res.current || this.chat.state.model });
        return;
      }
      case 'setModel':
        await this.setModel(m.model);
        return;
      case 'answer':
        if (!this.chat.answer(m.approvalId, m.optionId, m.feedback)) this.chat.note('That approval was already answered or cancelled.');
        this.refreshStatus();
        return;
      case 'openDiff': {
        const item = this.chat.toolItem(m.toolCallId);
        if (!item) return;
        if (item.approval?.diff && !item.approval.answered) {
          await showProposedChange(item.approval.diff, item.title, workspaceRoot(), readCurrentText, this.diffUI());
        } else if (item.applied) {
          await showAppliedChange(vscode.Uri.parse(item.applied.uri).fsPath, item.applied.diff, item.title, readCurrentText, this.diffUI());
        }
        return;
      }
      case 'cancel':
        await this.controller?.cancel(this.chat.state.sessionId);
        return;
      case 'undo':
        await this.undoTurn();
        return;
      case 'checkpoints':
        await this.checkpoints();
        return;
      case 'newTask':
        this.chat.clear();
        this.forget();
        this.showStatus();
        return;
      case 'setMode': {
        const sessionId = this.chat.state.sessionId;
        if (sessionId && this.controller) await this.controller.setMode(m.mode, sessionId);
        else this.chat.setState({ mode: m.mode });
        return;
      }
      case 'pickModel': {
        const model = await vscode.window.showInputBox({
          title: 'Cline: model',
          prompt: 'Model name (cline.model): the task\'s next request uses it; empty for the provider\'s default',
          value: this.settings.model,
          ignoreFocusOut: true,
        });
        if (model !== undefined) await this.setModel(model.trim());
        return;
      }
      case 'history': {
        const controller = await this.ready();
        const sessions = await controller.listSessions();
        this.chatView.post({
          type: 'sessions',
          sessions: sessions.map((s) => ({
            sessionId: s.sessionId,
            title: sessionTitle(s.title, s.updatedAt) + (s.heldBy ? ' (open in another window)' : ''),
            updatedAt: s.updatedAt,
            current: s.sessionId === this.chat.state.sessionId,
          })),
        });
        return;
      }
      case 'resume': {
        const controller = await this.ready();
        await this.resume(controller, m.sessionId, false);
        return;
      }
      case 'mention': {
        const mention = m.kind === 'file' ? await pickFile() : selectionMention();
        if (mention) this.chatView.post({ type: 'mention', mention, label: mentionLabel(mention, workspaceRoot()) });
        else if (m.kind === 'selection') vscode.window.showInformationMessage('Cline: select some text in an editor first.');
        return;
      }
    }
  }

  /**
   * setModel is the model switcher: cline.model, which the daemon applies
   * from the next request of the open task too (it answers with the
   * session's config_option_update, which the chip shows).
   */
  private async setModel(model: string): Promise<void> {
    await vscode.workspace.getConfiguration('cline').update('model', model, vscode.ConfigurationTarget.Global);
    this.chat.setState({ model });
  }

  private async undoTurn(): Promise<void> {
    const controller = await this.ready();
    await controller.undoLastTurn(this.chat.state.sessionId ?? controller.tracker.current);
  }

  /** forkSession is "Cline: Fork Task…": up to the turn given, or all. */
  private async forkSession(): Promise<void> {
    const controller = await this.ready();
    const turn = await vscode.window.showInputBox({
      title: 'Cline: fork this task',
      prompt: 'Fork up to turn (empty: all of it)',
      validateInput: (v) => (v.trim() === '' || /^[1-9][0-9]*$/.test(v.trim()) ? undefined : 'a turn number, from 1'),
    });
    if (turn === undefined) return;
    await controller.forkSession(this.chat.state.sessionId ?? controller.tracker.current, turn.trim() === '' ? 0 : Number(turn));
  }

  /** checkpoints is "Cline: Checkpoints…": list, preview, restore. */
  private async checkpoints(): Promise<void> {
    const controller = await this.ready();
    await controller.pickCheckpoint(this.checkpointUI(), this.chat.state.sessionId ?? controller.tracker.current);
  }

  private checkpointUI(): CheckpointUI {
    return {
      pickCheckpoint: async (items) =>
        vscode.window.showQuickPick(items, {
          title: 'Cline: checkpoints of this task',
          placeHolder: 'Checkpoint to preview and restore (newest first)',
          matchOnDescription: true,
          matchOnDetail: true,
        }),
      // A read-only virtual document, its tab named after the files it
      // restores (the .diff ending gives it the diff language).
      showPreview: async (text, checkpoint, files) => {
        const uri = vscode.Uri.file(`/${checkpointTabName(checkpoint, files)}.diff`).with({ scheme: proposedScheme, query: `checkpoint-${++this.proposedCount}` });
        this.proposed.set(uri.toString(), text);
        await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri), { preview: true });
      },
      pickRestore: async (checkpoint, files) => {
        const picked = await vscode.window.showQuickPick(restoreChoices(files.length), {
          title: `Cline: restore "${checkpoint.title}"`,
          placeHolder: files.length ? `${files.length} file${files.length > 1 ? 's' : ''} would change (see the preview)` : 'No file would change',
          ignoreFocusOut: true,
        });
        return picked?.scope;
      },
      confirmForce: async (conflicts) => {
        const detail = conflicts.map((c) => `${relativePath(c.path, workspaceRoot())}: ${c.reason}`).join('\n');
        // The first button of a modal dialog is its default (Enter): it
        // keeps the user's changes; overwriting them is the one chosen
        // only by a click on it.
        const keep = { title: 'Keep my changes', isCloseAffordance: false };
        const overwrite = { title: 'Overwrite my changes', isCloseAffordance: false };
        const answer = await vscode.window.showWarningMessage(
          `Cline kept ${conflicts.length === 1 ? 'a file' : `${conflicts.length} files`} you changed after the checkpoint. Overwrite with the checkpoint's text?`,
          { modal: true, detail },
          keep,
          overwrite,
        );
        return answer === overwrite;
      },
    };
  }

  private refreshStatus(): void {
    this.showStatus();
  }

  /**
   * approvalShown tells of an approval when the chat view is hidden: a
   * notification that only points to the view (it answers nothing).
   */
  private async approvalShown(req: ApprovalRequestParams): Promise<void> {
    this.refreshStatus();
    if (await this.chatView.shownSoon()) return;
    const open = await vscode.window.showInformationMessage(`Cline asks to ${req.toolCall.title.charAt(0).toLowerCase()}${req.toolCall.title.slice(1)}: answer in the Cline chat.`, 'Open Chat');
    if (open) await this.chatView.reveal();
  }

  fail(err: unknown): void {
    const msg = errorText(err);
    this.view.error(undefined, msg);
    this.failInChat(err);
    vscode.window.showErrorMessage(`Cline: ${withHint(msg)}`);
  }

  /**
   * failInChat says in the chat what went wrong and how to fix it, with a
   * way to the setting that fixes a daemon that did not start.
   */
  private failInChat(err: unknown): void {
    const msg = withHint(errorText(err));
    // A second try that fails the same way is said once.
    const last = this.chat.all().at(-1);
    if (last?.kind === 'note' && last.text === msg) return;
    if (/did not start|was not found/.test(msg)) {
      this.chat.note(msg, 'error', [{ id: 'settings', label: 'Open Settings (cline.path)' }], () => {
        void vscode.commands.executeCommand('workbench.action.openSettings', 'cline.path');
      });
    } else this.chat.note(msg, 'error');
  }

  private diffUI(): DiffUI {
    return { openDiff: (file, title) => this.openDiff(file, title) };
  }

  /** ui is the glue's view of VS Code's prompts and diff editor. */
  private ui(): ClineUI {
    return {
      // Approvals are answered in the chat view's card, which stays until
      // a click answers it: no key typed in the editor reaches it, and it
      // has no default button.
      decide: (req) => {
        const answer = this.chat.ask(req);
        void this.approvalShown(req);
        return answer.finally(() => this.refreshStatus());
      },
      pick: (title, items) => vscode.window.showQuickPick(items, { title: `Cline asks: ${title}`, placeHolder: title, ignoreFocusOut: true }),
      input: (prompt) => vscode.window.showInputBox({ prompt: `Cline asks: ${prompt}`, ignoreFocusOut: true }),
      // Questions are asked in the chat, beside the task they belong to.
      ask: async (question, options) => {
        const answer = this.chat.question(question, options);
        if (!(await this.chatView.shownSoon())) {
          void vscode.window.showInformationMessage('Cline asks a question: answer it in the Cline chat.', 'Open Chat').then((open) => open && this.chatView.reveal());
        }
        return answer;
      },
    };
  }

  /** externalOpener opens addresses in the user's browser through VS Code. */
  private externalOpener(): ExternalOpener {
    return {
      // The API declares a Uri, but its implementation takes the string
      // too and keeps it as given, where a Uri would come out with its
      // escapes decoded (see protocol/external.ts).
      openExternal: (address) => vscode.env.openExternal(address as unknown as vscode.Uri),
      refused: (address, why) => {
        this.view.error(undefined, `Did not open ${address}: ${why}`);
        vscode.window.showWarningMessage(`Cline: did not open ${address}: ${why}`);
      },
    };
  }

  /** openDiff shows a file against its proposed text in VS Code's diff editor. */
  private async openDiff(file: ProposedFile, title: string): Promise<void> {
    const id = ++this.proposedCount;
    const virtual = (text: string, label: string) => {
      const uri = vscode.Uri.file(file.path).with({ scheme: proposedScheme, query: `${label}-${id}` });
      this.proposed.set(uri.toString(), text);
      return uri;
    };
    if (file.applied) {
      // An edit that landed: the text before it against the file itself.
      await vscode.commands.executeCommand('vscode.diff', virtual(file.original, 'before'), vscode.Uri.file(file.path), title, { preview: true });
      return;
    }
    // The left side is the file itself (its open buffer, if any) unless it
    // does not exist yet.
    const left = file.original === '' && !(await exists(file.path)) ? virtual('', 'new') : vscode.Uri.file(file.path);
    const right = virtual(file.proposed ?? '', file.proposed === null ? 'deleted' : 'proposed');
    await vscode.commands.executeCommand('vscode.diff', left, right, title, { preview: true });
  }
}

/** heldBy is the pid of the daemon holding a session, for a load refused with -32002 (PROTOCOL.md §12), else undefined. */
export function heldBy(err: unknown): number | undefined {
  const e = err as { code?: number; data?: { heldBy?: unknown } } | undefined;
  if (e?.code !== -32002) return undefined;
  return typeof e.data?.heldBy === 'number' ? e.data.heldBy : 0;
}

/** checkpointTabName names a checkpoint's preview after the files a restore changes, else after its title. */
export function checkpointTabName(checkpoint: { title: string }, files: Array<{ path: string }>): string {
  const names = files.map((f) => path.basename(f.path));
  const base = names.length === 0 ? 'no changes' : names.length <= 2 ? names.join(', ') : `${names[0]} and ${names.length - 1} more`;
  return `Restore ${base}`.replace(/[\\/]/g, '_');
}

/** restoreChoices are the answers to what to restore; dismissing the pick is Cancel too. */
function restoreChoices(changedFiles: number): Array<{ label: string; description: string; scope: RestoreScope | undefined }> {
  return [
    { label: 'Restore files', description: changedFiles ? 'the files as they were at the checkpoint' : 'no file would change', scope: 'files' },
    { label: 'Restore conversation', description: 'the task goes back to this turn; files stay', scope: 'conversation' },
    { label: 'Restore both', description: 'files and conversation', scope: 'both' },
    { label: 'Cancel', description: '', scope: undefined },
  ];
}

/** withHint adds how to fix an error in VS Code, where the daemon's words are generic. */
export function withHint(msg: string): string {
  if (msg.includes('no model is configured')) {
    return `${msg}. In VS Code: set "cline.provider" and "cline.model" (and "cline.apiKeyEnv") in Settings, or "cline.provider": "replay" with "cline.transcript" to try it offline.`;
  }
  return msg;
}

function compactCount(n: number): string {
  return n >= 1000 ? `${(n / 1000).toFixed(n >= 10_000 ? 0 : 1)}k` : String(n);
}

/** pickFile asks for a workspace file to mention. */
async function pickFile(): Promise<Mention | undefined> {
  const files = await vscode.workspace.findFiles('**/*', '**/{node_modules,.git}/**', 5000);
  const root = workspaceRoot();
  const items = files.map((f) => ({ label: root && f.fsPath.startsWith(root + '/') ? f.fsPath.slice(root.length + 1) : f.fsPath, path: f.fsPath }));
  items.sort((a, b) => a.label.localeCompare(b.label));
  const picked = await vscode.window.showQuickPick(items, { title: 'Cline: mention a file', placeHolder: 'File to mention' });
  return picked ? { kind: 'file', path: picked.path } : undefined;
}

/** selectionMention is the active editor's selection, as lines 1-based. */
function selectionMention(): Mention | undefined {
  const ed = vscode.window.activeTextEditor;
  if (!ed || ed.selection.isEmpty || ed.document.uri.scheme !== 'file') return undefined;
  const sel = ed.selection;
  return { kind: 'selection', path: ed.document.uri.fsPath, startLine: sel.start.line + 1, endLine: sel.end.line + 1, text: ed.document.getText(sel) };
}

/**
 * readCurrentText is a file's text as the daemon sees it: the open
 * buffer's, else the disk's when it is a regular file of at most
 * maxMentionBytes; undefined otherwise.
 */
async function readCurrentText(file: string): Promise<string | undefined> {
  const doc = vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'file' && d.uri.fsPath === file);
  if (doc) return doc.getText();
  let h: fs.FileHandle | undefined;
  try {
    // Non-blocking, so that a FIFO in the workspace cannot hang the read.
    h = await fs.open(file, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
    const st = await h.stat();
    if (!st.isFile() || st.size > maxMentionBytes) return undefined;
    const buf = Buffer.alloc(maxMentionBytes + 1);
    const { bytesRead } = await h.read(buf, 0, buf.length, 0);
    if (bytesRead > maxMentionBytes) return undefined;
    return buf.subarray(0, bytesRead).toString('utf8');
  } catch {
    return undefined;
  } finally {
    await h?.close();
  }
}

/**
 * withText fills a file mention with the file's text as it is now (the
 * open buffer's, unsaved changes included) when it is small enough to
 * send; others go as they are.
 */
async function withText(m: Mention): Promise<Mention> {
  if (m.kind !== 'file') return m;
  // The page names the path: only a workspace file's text is read, by
  // its name and by where its links lead.
  const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath.replace(/\/$/, ''));
  const real = await fs.realpath(m.path).catch(() => undefined);
  const realFolders = await Promise.all(folders.map((f) => fs.realpath(f).catch(() => f)));
  const under = (p: string, dirs: string[]) => dirs.some((d) => p.startsWith(d + path.sep));
  if (!under(m.path, folders) || real === undefined || !under(real, realFolders)) return { kind: 'file', path: m.path };
  const text = await readCurrentText(m.path);
  if (text === undefined || Buffer.byteLength(text) > maxMentionBytes) return { kind: 'file', path: m.path };
  return { kind: 'file', path: m.path, text };
}

async function exists(path: string): Promise<boolean> {
  try {
    await fs.stat(path);
    return true;
  } catch {
    return false;
  }
}
