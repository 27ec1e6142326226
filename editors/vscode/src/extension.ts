// The VS Code side of the cline-ls client: it starts the daemon through
// vscode-languageclient and wires the protocol glue in ./protocol (which
// knows nothing of VS Code) to VS Code's commands, notifications, quick
// picks, diff editor, output channel and status bar.

import * as fs from 'node:fs/promises';
import * as vscode from 'vscode';
import { LanguageClient, LanguageClientOptions, ServerOptions, StaticFeature, TransportKind } from 'vscode-languageclient/node';
import type { CancellationToken } from 'vscode-languageclient/node';

import { ChatViewProvider, chatViewId } from './chatView';
import { fillClineCapabilities } from './protocol/capabilities';
import { ChatModel, FromWebview, mentionLabel, Mention } from './protocol/chat';
import { diagnosticsParams, EditorDiagnostic } from './protocol/diagnostics';
import { CheckpointUI, ClineController, ClineUI, errorText, relativePath, RestoreScope } from './protocol/controller';
import { DiffUI, ProposedFile, showProposedChange } from './protocol/diffs';
import { ExternalOpener, showDocument, ShowDocumentResult } from './protocol/external';
import { Method, Modes } from './protocol/methods';
import { SessionState, SessionView } from './protocol/session';
import { didChangeConfigurationParams, ExtensionSettings, initializationOptions, readSettings, restartNeeded } from './protocol/settings';
import type { ApprovalRequestParams, Rpc } from './protocol/types';

const proposedScheme = 'cline-proposed';

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

/** clineFeature declares experimental.cline in the client capabilities. */
const clineFeature: StaticFeature = {
  fillClientCapabilities: (caps) => fillClineCapabilities(caps),
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
    return `cline-ls was not found at "${path}". Install it (go install ./cmd/cline-ls) or set "cline.path" in your User settings (for a remote window: its Remote settings) to the binary.`;
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

  constructor(context: vscode.ExtensionContext) {
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
      },
    });
    for (const [method, handler] of controller.notifications()) client.onNotification(method, handler);
    for (const [method, handler] of controller.requests()) client.onRequest(method, handler);
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
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = this.controller = undefined;
    if (client?.isRunning()) await client.stop();
  }

  private async restart(): Promise<void> {
    await this.stop();
    await this.start();
    this.view.line(undefined, 'cline-ls restarted');
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
    if (restartNeeded(prev, next)) {
      await this.restart();
    } else if (this.client?.isRunning()) {
      await this.client.sendNotification(Method.didChangeConfiguration, didChangeConfigurationParams(next));
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

  private showStatus(st: SessionState): void {
    if (st.sessionId !== this.controller?.tracker.current) return;
    const pending = this.chat.state.pending;
    const tokens = st.usage.inputTokens + st.usage.outputTokens;
    const state = pending ? `$(question) ${pending} waiting` : st.running ? '$(loading~spin) working' : '$(hubot) idle';
    this.status.text = `${state} · ${st.mode ?? ''}${tokens ? ` · ${compactCount(tokens)} tokens` : ''}`;
    this.status.tooltip = `Cline (${st.mode ?? ''} mode): ${this.chat.state.meter || 'no usage yet'}. Click to open the chat.`;
    this.status.command = 'cline.openChat';
  }

  /** fromChat runs what the user did in the chat view. */
  private async fromChat(m: FromWebview): Promise<void> {
    switch (m.type) {
      case 'send': {
        const controller = await this.ready();
        const sessionId = this.chat.state.sessionId;
        const current = controller.tracker.get(sessionId);
        if (current?.running) {
          this.chat.note('Cline is still working on this task: wait for it or cancel it first.');
          return;
        }
        this.runTurn(sessionId ? controller.prompt(m.text, sessionId, m.mentions) : controller.newTask(this.chat.state.mode, m.text, m.mentions));
        return;
      }
      case 'answer':
        if (!this.chat.answer(m.approvalId, m.optionId, m.feedback)) this.chat.note('That approval was already answered or cancelled.');
        this.refreshStatus();
        return;
      case 'openDiff': {
        const item = this.chat.toolItem(m.toolCallId);
        const diff = item?.approval?.diff ?? item?.applied?.diff;
        if (!item || !diff) return;
        if (item.approval?.diff && !item.approval.answered) {
          await showProposedChange(item.approval.diff, item.title, workspaceRoot(), readCurrentText, this.diffUI());
        } else {
          const doc = await vscode.workspace.openTextDocument({ content: diff, language: 'diff' });
          await vscode.window.showTextDocument(doc, { preview: true });
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
          prompt: 'Model name for new requests (cline.model); empty for the provider\'s default',
          value: this.settings.model,
          ignoreFocusOut: true,
        });
        if (model === undefined) return;
        await vscode.workspace.getConfiguration('cline').update('model', model.trim(), vscode.ConfigurationTarget.Global);
        this.chat.setState({ model: model.trim() });
        return;
      }
      case 'history': {
        const controller = await this.ready();
        const sessions = await controller.listSessions();
        this.chatView.post({
          type: 'sessions',
          sessions: sessions.map((s) => ({ sessionId: s.sessionId, title: s.title, updatedAt: s.updatedAt, current: s.sessionId === this.chat.state.sessionId })),
        });
        return;
      }
      case 'resume': {
        const controller = await this.ready();
        await controller.loadSession(m.sessionId);
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
      // A read-only virtual document (the .diff name gives it the diff language).
      showPreview: async (text, checkpoint) => {
        const uri = vscode.Uri.file(`/${checkpoint.checkpointId}.diff`).with({ scheme: proposedScheme, query: `checkpoint-${++this.proposedCount}` });
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
        const answer = await vscode.window.showWarningMessage(
          `Cline kept ${conflicts.length === 1 ? 'a file' : `${conflicts.length} files`} you changed after the checkpoint. Overwrite with the checkpoint's text?`,
          { modal: true, detail },
          'Overwrite',
        );
        return answer === 'Overwrite';
      },
    };
  }

  private refreshStatus(): void {
    const st = this.controller?.tracker.get(this.controller.tracker.current);
    if (st) this.showStatus(st);
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
    vscode.window.showErrorMessage(`Cline: ${withHint(msg)}`);
  }

  private diffUI(): DiffUI {
    return {
      openDiff: (file, title) => this.openDiff(file, title),
      openUnifiedDiff: async (text) => {
        const doc = await vscode.workspace.openTextDocument({ content: text, language: 'diff' });
        await vscode.window.showTextDocument(doc, { preview: true });
      },
    };
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
    // The left side is the file itself (its open buffer, if any) unless it
    // does not exist yet.
    const left = file.original === '' && !(await exists(file.path)) ? virtual('', 'new') : vscode.Uri.file(file.path);
    const right = virtual(file.proposed ?? '', file.proposed === null ? 'deleted' : 'proposed');
    await vscode.commands.executeCommand('vscode.diff', left, right, title, { preview: true });
  }
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

/** readCurrentText is a file's text as the daemon sees it: the open buffer's, else the disk's. */
async function readCurrentText(path: string): Promise<string | undefined> {
  const doc = vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'file' && d.uri.fsPath === path);
  if (doc) return doc.getText();
  try {
    return await fs.readFile(path, 'utf8');
  } catch {
    return undefined;
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await fs.stat(path);
    return true;
  } catch {
    return false;
  }
}
