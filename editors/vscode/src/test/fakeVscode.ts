// Fakes of the 'vscode' and 'vscode-languageclient/node' modules, just
// large enough to load and drive extension.ts in plain Node. The fake
// LanguageClient speaks to a real cline-ls over stdio, so the extension's
// wiring (capabilities, initializationOptions, handlers, commands, settings
// changes) runs against the daemon; VS Code's own behaviour (documents,
// notifications, pickers) is scripted.

import { spawn, ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { createMessageConnection, MessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';

type Listener<T> = (e: T) => void;
type Disposable = { dispose(): void };
const disposable = (): Disposable => ({ dispose: () => undefined });

/** Scripted holds the fake user's answers and what the extension showed. */
export const scripted = {
  inputs: [] as Array<string | undefined>,
  notifications: [] as Array<string | undefined>,
  quickPicks: [] as Array<string | undefined>,
  shown: [] as string[],
  errors: [] as string[],
  settings: {} as Record<string, unknown>,
  /** env is the daemon's environment. */
  env: {} as Record<string, string>,
  /** opened is what env.openExternal was given, as given. */
  opened: [] as unknown[],
  warnings: [] as string[],
};

class Uri {
  constructor(
    readonly scheme: string,
    readonly fsPath: string,
    readonly query = '',
  ) {}
  static file(p: string): Uri {
    return new Uri('file', p);
  }
  with(change: { scheme?: string; query?: string }): Uri {
    return new Uri(change.scheme ?? this.scheme, this.fsPath, change.query ?? this.query);
  }
  static joinPath(base: Uri, ...parts: string[]): Uri {
    return new Uri(base.scheme, path.join(base.fsPath, ...parts));
  }
  toString(): string {
    return `${this.scheme}://${this.fsPath}${this.query ? '?' + this.query : ''}`;
  }
}

/**
 * FakeWebviewView is the chat view as the extension sees it: what it posts
 * is kept in posted, and a test plays the page with send().
 */
export class FakeWebviewView {
  readonly posted: any[] = [];
  visible = true;
  html = '';
  private listener: ((m: unknown) => void) | undefined;
  readonly webview = {
    options: {} as unknown,
    cspSource: 'vscode-resource:',
    asWebviewUri: (u: Uri) => u,
    postMessage: async (m: unknown) => {
      this.posted.push(JSON.parse(JSON.stringify(m)));
      return true;
    },
    onDidReceiveMessage: (l: (m: unknown) => void) => {
      this.listener = l;
      return disposable();
    },
  } as Record<string, unknown>;
  constructor() {
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const view = this;
    Object.defineProperty(this.webview, 'html', { set: (v: string) => (view.html = v), get: () => view.html });
  }
  /** send posts a message as the page would. */
  send(m: unknown): void {
    this.listener?.(m);
  }
  show(): void {
    this.visible = true;
  }
  onDidDispose(): Disposable {
    return disposable();
  }
}

/** chatView is the view registered by the extension, once resolved. */
export const webviews: { provider?: { resolveWebviewView(v: FakeWebviewView): void }; view?: FakeWebviewView } = {};

export class FakeOutputChannel {
  text = '';
  constructor(readonly name: string) {}
  append(s: string): void {
    this.text += s;
  }
  appendLine(s: string): void {
    this.text += s + '\n';
  }
  show(): void {}
  dispose(): void {}
}

const commands = new Map<string, (...args: unknown[]) => unknown>();
const configListeners: Array<Listener<{ affectsConfiguration(s: string): boolean }>> = [];
export const channels: FakeOutputChannel[] = [];
export const statusBar = { text: '', tooltip: '' as string | undefined, command: '' as string | undefined, show() {}, dispose() {} };

export const vscode = {
  Uri,
  StatusBarAlignment: { Left: 1, Right: 2 },
  ConfigurationTarget: { Global: 1, Workspace: 2, WorkspaceFolder: 3 },
  window: {
    createOutputChannel(name: string) {
      const c = new FakeOutputChannel(name);
      channels.push(c);
      return c;
    },
    createStatusBarItem: () => statusBar,
    registerWebviewViewProvider(id: string, provider: { resolveWebviewView(v: FakeWebviewView): void }) {
      if (id !== 'cline.chat') throw new Error(`unexpected view ${id}`);
      webviews.provider = provider;
      return disposable();
    },
    async showInformationMessage(message: string, ...rest: Array<string | { modal?: boolean; detail?: string }>) {
      const opts = typeof rest[0] === 'object' ? (rest.shift() as { modal?: boolean; detail?: string }) : {};
      const buttons = rest as string[];
      scripted.shown.push(`${opts.modal ? '(modal) ' : ''}${message} [${buttons.join('|')}]`);
      return buttons.length ? scripted.notifications.shift() : undefined;
    },
    async showErrorMessage(message: string) {
      scripted.errors.push(message);
    },
    async showWarningMessage(message: string) {
      scripted.warnings.push(message);
    },
    showInputBox: async () => scripted.inputs.shift(),
    showQuickPick: async (items: Array<string | { label: string }>) => {
      const want = scripted.quickPicks.shift();
      return items.find((i) => (typeof i === 'string' ? i : i.label) === want);
    },
    showTextDocument: async () => undefined,
  },
  env: {
    async openExternal(target: unknown) {
      scripted.opened.push(target);
      return true;
    },
  },
  languages: {
    onDidChangeDiagnostics: disposable,
    getDiagnostics: () => [] as unknown[],
  },
  workspace: {
    workspaceFolders: [] as Array<{ uri: Uri; name: string }>,
    textDocuments: [] as unknown[],
    getConfiguration: (section: string) => ({ get: (key: string) => scripted.settings[`${section}.${key}`] }),
    registerTextDocumentContentProvider: disposable,
    onDidCloseTextDocument: disposable,
    onDidChangeConfiguration(l: Listener<{ affectsConfiguration(s: string): boolean }>) {
      configListeners.push(l);
      return disposable();
    },
    openTextDocument: async () => ({}),
  },
  commands: {
    registerCommand(id: string, fn: (...args: unknown[]) => unknown) {
      if (commands.has(id)) throw new Error(`command '${id}' already exists`);
      commands.set(id, fn);
      return { dispose: () => commands.delete(id) };
    },
    async executeCommand(id: string, ...args: unknown[]) {
      if (id === 'cline.chat.focus') {
        // As VS Code does: the first reveal creates the view.
        if (!webviews.view && webviews.provider) {
          webviews.view = new FakeWebviewView();
          webviews.provider.resolveWebviewView(webviews.view);
        }
        return undefined;
      }
      const fn = commands.get(id);
      if (!fn) throw new Error(`command '${id}' not found`);
      return fn(...args);
    },
  },
};

/** changeSettings updates settings and fires onDidChangeConfiguration for "cline". */
export function changeSettings(values: Record<string, unknown>): void {
  Object.assign(scripted.settings, values);
  for (const l of configListeners) l({ affectsConfiguration: (s: string) => s === 'cline' || s.startsWith('cline.') });
}

export function registeredCommands(): string[] {
  return [...commands.keys()];
}

interface Feature {
  fillClientCapabilities(caps: Record<string, unknown>): void;
}

/** FakeLanguageClient plays vscode-languageclient's LanguageClient over a real process. */
export class FakeLanguageClient {
  static last: FakeLanguageClient | undefined;
  readonly features: Feature[] = [];
  readonly sent: Array<{ method: string; params: unknown }> = [];
  initializeParams: any;
  /** stderr is the daemon's log. */
  stderr = '';
  /** spawnedArgs are the daemon's arguments as started. */
  spawnedArgs: string[] = [];
  private readonly notificationHandlers: Array<[string, (p: any) => void]> = [];
  private readonly requestHandlers: Array<[string, (p: any) => unknown]> = [];
  private child: ChildProcess | undefined;
  private conn: MessageConnection | undefined;

  constructor(
    readonly id: string,
    readonly name: string,
    readonly serverOptions: { command: string; args?: string[]; transport?: number; options?: { cwd?: string } },
    readonly clientOptions: { initializationOptions?: unknown | (() => unknown); outputChannel?: FakeOutputChannel; outputChannelName?: string },
  ) {
    FakeLanguageClient.last = this;
  }

  registerFeature(f: Feature): void {
    this.features.push(f);
  }
  onNotification(method: string, h: (p: any) => void): Disposable {
    this.notificationHandlers.push([method, h]);
    this.conn?.onNotification(method, h);
    return disposable();
  }
  onRequest(method: string, h: (p: any) => unknown): Disposable {
    this.requestHandlers.push([method, h]);
    this.conn?.onRequest(method, h);
    return disposable();
  }

  async start(): Promise<void> {
    const { command, options = {} } = this.serverOptions;
    // As vscode-languageclient does: --stdio appended for the stdio
    // transport, stderr into the given output channel or a new one.
    const args = [...(this.serverOptions.args ?? [])];
    if (this.serverOptions.transport === languageClientModule.TransportKind.stdio) args.push('--stdio');
    this.spawnedArgs = args;
    const channel = this.clientOptions.outputChannel ?? vscode.window.createOutputChannel(this.clientOptions.outputChannelName ?? this.name);
    this.child = spawn(command, args, { cwd: options.cwd, env: scripted.env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stderr!.on('data', (b: Buffer) => {
      this.stderr += b.toString();
      channel.append(b.toString());
    });
    const failed = new Promise<never>((_, reject) => {
      this.child!.on('error', reject);
      this.child!.on('close', (code) => reject(new Error(`Connection to server got closed (exit code ${code})`)));
    });
    // Writes go through a pipe, so that a daemon that exits at once (a
    // failed start) costs an error event, not an unhandled EPIPE.
    const input = new PassThrough();
    this.child.stdin!.on('error', () => undefined);
    input.pipe(this.child.stdin!);
    this.conn = createMessageConnection(new StreamMessageReader(this.child.stdout!), new StreamMessageWriter(input));
    for (const [m, h] of this.notificationHandlers) this.conn.onNotification(m, h);
    for (const [m, h] of this.requestHandlers) this.conn.onRequest(m, h);
    this.conn.listen();
    const capabilities: Record<string, unknown> = { workspace: { applyEdit: true, workspaceEdit: { documentChanges: true } } };
    for (const f of this.features) f.fillClientCapabilities(capabilities);
    const io = this.clientOptions.initializationOptions;
    const root = options.cwd ?? process.cwd();
    this.initializeParams = {
      processId: process.pid,
      rootUri: pathToFileURL(root).href,
      workspaceFolders: [{ uri: pathToFileURL(root).href, name: path.basename(root) }],
      capabilities,
      initializationOptions: typeof io === 'function' ? io() : io,
    };
    await Promise.race([this.conn.sendRequest('initialize', this.initializeParams), failed]);
    await this.conn.sendNotification('initialized', {});
  }

  isRunning(): boolean {
    return this.conn !== undefined;
  }
  /** onDidChangeState takes the listener; the fake's daemon never dies on its own, so it is never called. */
  onDidChangeState(_listener: (e: { oldState: number; newState: number }) => void): { dispose(): void } {
    return { dispose: () => undefined };
  }
  sendRequest(method: string, params: unknown): Promise<unknown> {
    this.sent.push({ method, params });
    return this.conn!.sendRequest(method, params);
  }
  async sendNotification(method: string, params: unknown): Promise<void> {
    this.sent.push({ method, params });
    await this.conn!.sendNotification(method, params);
  }

  async stop(): Promise<void> {
    const conn = this.conn;
    this.conn = undefined;
    if (!conn) return;
    const exited = new Promise((r) => this.child!.on('exit', r));
    await conn.sendRequest('shutdown');
    await conn.sendNotification('exit');
    await exited;
    conn.dispose();
  }
  async dispose(): Promise<void> {
    this.child?.kill();
  }
}

export const languageClientModule = { LanguageClient: FakeLanguageClient, TransportKind: { stdio: 0, ipc: 1, pipe: 2, socket: 3 }, State: { Stopped: 1, Starting: 3, Running: 2 } };

/** memento is an in-memory workspaceState. */
export function memento(): { get<T>(key: string): T | undefined; update(key: string, value: unknown): Promise<void> } {
  const m = new Map<string, unknown>();
  return {
    get: <T>(key: string) => m.get(key) as T | undefined,
    update: async (key: string, value: unknown) => void (value === undefined ? m.delete(key) : m.set(key, value)),
  };
}

/** install makes require('vscode') and require('vscode-languageclient/node') return the fakes. */
export function install(): void {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const Module = require('node:module');
  const load = Module._load;
  Module._load = function (request: string, ...rest: unknown[]) {
    if (request === 'vscode') return vscode;
    if (request === 'vscode-languageclient/node') return languageClientModule;
    return load.call(this, request, ...rest);
  };
}
