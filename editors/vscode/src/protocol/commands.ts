// The daemon's workspace/executeCommand commands (PROTOCOL.md §6), which
// clients without the plugin use to drive sessions. The plugin itself uses
// the session/* methods; these are here for completeness and for the
// stock-client tests.

import { DaemonCommand, Method } from './methods';
import type { Rpc } from './types';

export function executeCommand<R>(rpc: Rpc, command: string, arg: object): Promise<R> {
  return rpc.request<R>(Method.executeCommand, { command, arguments: [arg] });
}

export function newSessionCommand(rpc: Rpc, mode?: string): Promise<{ sessionId: string }> {
  return executeCommand(rpc, DaemonCommand.newSession, mode ? { mode } : {});
}

/**
 * promptCommand starts a turn (and a session when none is given) and answers at once with the
 * session; the turn reports through $/progress and ends with a window/showMessage naming its stop reason.
 */
export function promptCommand(rpc: Rpc, text: string, sessionId?: string): Promise<{ sessionId: string }> {
  return executeCommand(rpc, DaemonCommand.prompt, sessionId ? { sessionId, text } : { text });
}

export function setModeCommand(rpc: Rpc, sessionId: string, modeId: string): Promise<unknown> {
  return executeCommand(rpc, DaemonCommand.setMode, { sessionId, modeId });
}

export function cancelCommand(rpc: Rpc, sessionId: string): Promise<unknown> {
  return executeCommand(rpc, DaemonCommand.cancel, { sessionId });
}
