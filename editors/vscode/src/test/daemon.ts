// Test harness: builds the real cline-ls daemon once, starts it in a
// scratch workspace with the replay model, and connects to it over stdio
// with vscode-jsonrpc, the library under vscode-languageclient.

import { execFileSync, spawn, ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createMessageConnection, MessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';

import type { Rpc } from '../protocol/types';

/** repoRoot is the repository's root: out/test → out → editors/vscode → editors → root. */
export const repoRoot = path.resolve(__dirname, '..', '..', '..', '..');

let built: string | undefined;

/**
 * daemonBinary returns the cline-ls binary: $CLINE_LS_BIN when set (the Go
 * test wrapper sets it), else one built from the repository into a
 * temporary folder, once per process.
 */
export function daemonBinary(): string {
  if (process.env.CLINE_LS_BIN) return process.env.CLINE_LS_BIN;
  if (!built) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cline-ls-vscode-bin-'));
    const bin = path.join(dir, 'cline-ls');
    execFileSync('go', ['build', '-o', bin, './cmd/cline-ls'], { cwd: repoRoot, stdio: ['ignore', 'inherit', 'inherit'] });
    built = bin;
  }
  return built;
}

export interface Reply {
  expect?: Record<string, unknown>;
  events: Array<Record<string, unknown>>;
}

export const text = (s: string) => ({ text: s });
export const call = (id: string, name: string, args: unknown) => ({ tool_call: { id, name, args } });

/** Workspace is a scratch folder with files, a transcript and a state folder. */
export class Workspace {
  readonly dir: string;
  readonly root: string;
  readonly transcript: string;
  readonly stateDir: string;
  readonly logFile: string;

  constructor(files: Record<string, string>, replies: Reply[]) {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cline-ls-vscode-'));
    this.root = path.join(this.dir, 'ws');
    fs.mkdirSync(this.root);
    for (const [name, data] of Object.entries(files)) {
      const p = path.join(this.root, name);
      fs.mkdirSync(path.dirname(p), { recursive: true });
      fs.writeFileSync(p, data);
    }
    this.transcript = path.join(this.dir, 'transcript.json');
    fs.writeFileSync(this.transcript, JSON.stringify({ model: 'replay-vscode', chunk_size: 4, replies }));
    this.stateDir = path.join(this.dir, 'state');
    this.logFile = path.join(this.dir, 'cline-ls.log');
  }

  path(name: string): string {
    return path.join(this.root, name);
  }

  disk(name: string): string {
    return fs.readFileSync(this.path(name), 'utf8');
  }

  /** replaySettings are the initializationOptions extras that select the replay model. */
  replaySettings(): Record<string, unknown> {
    return { provider: { name: 'replay', transcript: this.transcript }, stateDir: this.stateDir, approvals: { edit: 'ask' } };
  }

  remove(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Daemon is a running cline-ls and the connection to it. */
export class Daemon {
  readonly conn: MessageConnection;
  private readonly child: ChildProcess;
  private stderr = '';
  private exitStatus: number | string | null | undefined;
  private readonly exited: Promise<number | null>;
  /** notifications records every notification by method, in order. */
  readonly notifications: Array<{ method: string; params: any }> = [];

  constructor(readonly ws: Workspace) {
    this.child = spawn(daemonBinary(), ['serve', '--log-file', ws.logFile, '--log-level', 'debug'], {
      cwd: ws.root,
      // No API keys or user config leak in: only the replay model is used.
      env: { PATH: process.env.PATH ?? '', HOME: ws.dir, XDG_CONFIG_HOME: path.join(ws.dir, 'config') },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child.stderr!.on('data', (b: Buffer) => (this.stderr += b.toString()));
    this.conn = createMessageConnection(new StreamMessageReader(this.child.stdout!), new StreamMessageWriter(this.child.stdin!));
    this.exited = new Promise((resolve) =>
      this.child.on('exit', (code, signal) => {
        this.exitStatus = signal ?? code;
        // A request still waiting would wait forever: fail it instead.
        setImmediate(() => this.conn.dispose());
        resolve(code);
      }),
    );
    this.conn.onUnhandledNotification((n) => this.notifications.push({ method: n.method, params: n.params }));
    this.conn.listen();
  }

  /** rpc adapts the connection to the glue's Rpc. */
  rpc(): Rpc {
    return {
      request: <R>(method: string, params: unknown) => this.conn.sendRequest<R>(method, params),
      notify: (method: string, params: unknown) => this.conn.sendNotification(method, params),
    };
  }

  /** record makes a handled notification show up in notifications too. */
  record(method: string, handler?: (params: any) => void): void {
    this.conn.onNotification(method, (params: any) => {
      this.notifications.push({ method, params });
      handler?.(params);
    });
  }

  of(method: string): any[] {
    return this.notifications.filter((n) => n.method === method).map((n) => n.params);
  }

  /** initialize sends initialize and initialized as VS Code's client would. */
  async initialize(experimental: Record<string, unknown> | undefined, initializationOptions: Record<string, unknown>): Promise<any> {
    const uri = pathToFileURL(this.ws.root).href;
    const capabilities: Record<string, unknown> = {
      general: { positionEncodings: ['utf-16'] },
      workspace: { applyEdit: true, workspaceEdit: { documentChanges: true }, configuration: true, workspaceFolders: true },
      window: { showMessage: { messageActionItem: { additionalPropertiesSupport: true } }, workDoneProgress: false },
      textDocument: { synchronization: { didSave: true, dynamicRegistration: true } },
    };
    if (experimental) capabilities.experimental = experimental;
    const res = await this.conn.sendRequest('initialize', {
      processId: process.pid,
      clientInfo: { name: 'cline-ls vscode tests' },
      rootUri: uri,
      workspaceFolders: [{ uri, name: 'ws' }],
      capabilities,
      initializationOptions,
    });
    await this.conn.sendNotification('initialized', {});
    return res;
  }

  /** stop shuts the daemon down and returns its exit code. */
  async stop(): Promise<number | null> {
    try {
      await withTimeout(this.conn.sendRequest('shutdown'), 5000, 'shutdown');
      await this.conn.sendNotification('exit');
    } catch {
      this.child.kill();
    }
    const code = await withTimeout(this.exited, 5000, 'exit').catch(() => {
      this.child.kill('SIGKILL');
      return null;
    });
    this.conn.dispose();
    return code;
  }

  /** log is the daemon's log and stderr, for failure messages. */
  log(): string {
    let log = '';
    try {
      log = fs.readFileSync(this.ws.logFile, 'utf8');
    } catch {
      // no log yet
    }
    const status = this.exitStatus === undefined ? 'running' : `exited: ${this.exitStatus}`;
    return `--- daemon log (${this.ws.logFile}; ${status}) ---\n${log}--- daemon stderr ---\n${this.stderr}`;
  }
}

export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no answer after ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** Deferred is a promise with its resolve at hand. */
export class Deferred<T> {
  resolve!: (v: T) => void;
  readonly promise = new Promise<T>((r) => (this.resolve = r));
}
