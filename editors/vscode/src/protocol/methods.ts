// Method and command names of the cline-ls wire protocol
// (docs/PROTOCOL.md in the repository). Every name the client sends or
// handles is here, so a protocol change is a change to this file.

export const Method = {
  sessionNew: 'session/new',
  sessionPrompt: 'session/prompt',
  sessionCancel: 'session/cancel',
  sessionSetMode: 'session/set_mode',
  sessionList: 'session/list',
  sessionLoad: 'session/load',
  sessionUpdate: 'session/update',

  approvalRequest: 'cline/approvalRequest',
  approvalResponse: 'cline/approvalResponse',
  clineDiff: 'cline/diff',
  askQuestion: 'cline/askQuestion',
  diagnostics: 'cline/diagnostics',
  checkpoints: 'cline/checkpoints',
  checkpointDiff: 'cline/checkpointDiff',
  restore: 'cline/restore',
  forkSession: 'cline/forkSession',
  models: 'cline/models',

  didChangeConfiguration: 'workspace/didChangeConfiguration',
  executeCommand: 'workspace/executeCommand',
} as const;

/** Commands the daemon serves through workspace/executeCommand (PROTOCOL.md §6). */
export const DaemonCommand = {
  newSession: 'cline.newSession',
  prompt: 'cline.prompt',
  setMode: 'cline.setMode',
  cancel: 'cline.cancel',
} as const;

/** The session modes, in the order the daemon lists them. */
export const Modes = ['plan', 'act', 'search', 'minimal', 'yolo'] as const;
export type ModeId = (typeof Modes)[number];

export function isMode(s: unknown): s is ModeId {
  return typeof s === 'string' && (Modes as readonly string[]).includes(s);
}
