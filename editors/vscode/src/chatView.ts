// The chat view in the side bar: a webview view whose page (media/chat.js,
// media/chat.css, the codicon font) shows the ChatModel and posts the
// user's actions back. The page loads nothing but the extension's own
// files, under a content security policy that runs only its one script
// (by nonce) and allows no remote resource.

import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';

import { ChatModel, FromWebview, isFromWebview, ToWebview } from './protocol/chat';

export const chatViewId = 'cline.chat';

export class ChatViewProvider implements vscode.WebviewViewProvider {
  private view: vscode.WebviewView | undefined;
  private ready = false;
  /** opening is settled when the page of a view being revealed says it is ready. */
  private opening: { done: Promise<void>; resolve: () => void } | undefined;
  model: ChatModel | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly onMessage: (m: FromWebview) => void,
  ) {}

  /** visible says whether the chat view is on screen. */
  get visible(): boolean {
    return this.view?.visible ?? false;
  }

  /** post sends a message to the page; before the page said it is ready, reset() on ready covers it. */
  post(m: ToWebview): void {
    if (this.view && this.ready) void this.view.webview.postMessage(m);
  }

  /**
   * shownSoon says whether the chat view is on screen, or will be once a
   * reveal under way has loaded its page.
   */
  async shownSoon(): Promise<boolean> {
    if (this.opening) await this.opening.done;
    return this.visible;
  }

  /** reveal shows the chat view, creating it if needed. */
  async reveal(): Promise<void> {
    if (this.view) {
      this.view.show(true);
      return;
    }
    if (!this.opening) {
      let resolve!: () => void;
      const done = new Promise<void>((r) => (resolve = r));
      this.opening = { done, resolve };
    }
    try {
      // The view is resolved, and its page loaded, after the command
      // returns: the page's ready settles the reveal.
      await vscode.commands.executeCommand(`${chatViewId}.focus`);
    } catch (err) {
      this.settle();
      throw err;
    }
  }

  private settle(): void {
    this.opening?.resolve();
    this.opening = undefined;
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    this.ready = false;
    const roots = [vscode.Uri.joinPath(this.extensionUri, 'dist'), vscode.Uri.joinPath(this.extensionUri, 'media')];
    view.webview.options = { enableScripts: true, localResourceRoots: roots };
    view.webview.html = chatHtml(view.webview, this.extensionUri);
    view.webview.onDidReceiveMessage((m: unknown) => {
      if (!isFromWebview(m)) return;
      if (m.type === 'ready') {
        this.ready = true;
        this.model?.reset();
        this.settle();
        return;
      }
      this.onMessage(m);
    });
    view.onDidDispose(() => {
      if (this.view === view) {
        this.view = undefined;
        this.ready = false;
        this.settle();
      }
    });
  }
}

/** chatHtml is the page: the codicon font, the view's style and script, under a strict policy. */
export function chatHtml(webview: vscode.Webview, extensionUri: vscode.Uri): string {
  const nonce = randomBytes(16).toString('base64');
  const uri = (...p: string[]) => webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, ...p)).toString();
  const csp = [
    "default-src 'none'",
    `style-src ${webview.cspSource}`,
    `font-src ${webview.cspSource}`,
    `img-src ${webview.cspSource}`,
    `script-src 'nonce-${nonce}'`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${uri('dist', 'codicon.css')}">
<link rel="stylesheet" href="${uri('media', 'chat.css')}">
<title>Cline</title>
</head>
<body>
<header id="bar">
  <select id="mode" title="Mode of the task (of the next task when none runs)" aria-label="Mode"></select>
  <button id="model" class="chip" title="Model of the task: click to pick one of the provider's models"><i aria-hidden="true" class="codicon codicon-sparkle"></i><span id="model-name"></span></button>
  <span class="spacer"></span>
  <button id="history" class="icon" title="Resume a task" aria-label="Resume a task"><i aria-hidden="true" class="codicon codicon-history"></i></button>
  <button id="checkpoints" class="icon" title="Checkpoints: preview and restore files or the conversation" aria-label="Checkpoints"><i aria-hidden="true" class="codicon codicon-versions"></i></button>
  <button id="undo" class="icon" title="Undo the last turn (its file changes and its messages)" aria-label="Undo the last turn"><i aria-hidden="true" class="codicon codicon-discard"></i></button>
  <button id="new" class="icon" title="New task" aria-label="New task"><i aria-hidden="true" class="codicon codicon-add"></i></button>
</header>
<div id="sessions" hidden></div>
<section id="setup" hidden aria-label="Set up a model"></section>
<main id="log" aria-live="polite"><div id="empty" class="empty">Ask Cline to do something in this workspace. Mention files with @.</div></main>
<footer>
  <div id="meter" title="Tokens of this task, its cost, and how full the model's context is"></div>
  <div id="chips"></div>
  <textarea id="input" rows="3" placeholder="Ask Cline… (Enter to send, Shift+Enter for a new line, @ for a file)" aria-label="Message to Cline"></textarea>
  <div class="row">
    <button id="mention-file" class="icon" title="Mention a file" aria-label="Mention a file"><i aria-hidden="true" class="codicon codicon-mention"></i></button>
    <button id="mention-selection" class="icon" title="Mention the editor's selection" aria-label="Mention the selection"><i aria-hidden="true" class="codicon codicon-selection"></i></button>
    <span class="spacer"></span>
    <span id="status"></span>
    <button id="switch-act" hidden title="Switch this task to act mode, to carry out the plan"><i aria-hidden="true" class="codicon codicon-play"></i> Switch to Act</button>
    <button id="cancel" class="secondary" hidden><i aria-hidden="true" class="codicon codicon-debug-stop"></i> Cancel</button>
    <button id="send"><i aria-hidden="true" class="codicon codicon-send"></i> Send</button>
  </div>
</footer>
<script nonce="${nonce}" src="${uri('media', 'chat.js')}"></script>
</body>
</html>`;
}
