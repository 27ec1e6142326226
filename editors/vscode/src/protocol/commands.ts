// The daemon's workspace/executeCommand commands (PROTOCOL.md §6), which
// clients without the plugin use to drive sessions. The plugin itself uses
// the session/* methods; these are here for completeness and for the
// stock-client tests.

import { DaemonCommand, Method } from './methods';
import type { Rpc, StopReason } from './types';

export function executeCommand<R>(rpc: Rpc, command: string, arg: object): Promise<R> {
  return rpc.request<R>(Method.executeCommand, { command, arguments: [arg] });
}

export function newSessionCommand(rpc: Rpc, mode?: string): Promise<{ sessionId: string }> {
  return executeCommand(rpc, DaemonCommand.newSession, mode ? { mode } : {});
}

/** promptCommand runs a whole turn (starting a session when none is given) before it answers. */
export function promptCommand(rpc: Rpc, text: string, sessionId?: string): Promise<{ sessionId: string; stopReason: StopReason }> {
  return executeCommand(rpc, DaemonCommand.prompt, sessionId ? { sessionId, text } : { text });
}

export function setModeCommand(rpc: Rpc, sessionId: string, modeId: string): Promise<unknown> {
  return executeCommand(rpc, DaemonCommand.setMode, { sessionId, modeId });
}

export function cancelCommand(rpc: Rpc, sessionId: string): Promise<unknown> {
  return executeCommand(rpc, DaemonCommand.cancel, { sessionId });
}
