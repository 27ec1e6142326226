// Payload shapes of the cline-ls protocol, as the client sees them. Only
// the fields the client reads are typed; the daemon may send more.

/**
 * Rpc is the little the glue needs from a JSON-RPC connection. The
 * extension adapts vscode-languageclient's LanguageClient to it; tests adapt
 * a vscode-jsonrpc MessageConnection.
 */
export interface Rpc {
  request<R>(method: string, params: unknown): Promise<R>;
  notify(method: string, params: unknown): Promise<void> | void;
}

export interface TextContent {
  type: 'text';
  text: string;
}

export interface Location {
  path: string;
  line?: number;
}

export type ToolKind =
  | 'read' | 'edit' | 'delete' | 'move' | 'search' | 'execute' | 'think' | 'fetch' | 'switch_mode' | 'other';

export type ToolStatus = 'pending' | 'in_progress' | 'completed' | 'failed';

export interface ToolCallContent {
  type: 'content' | 'diff';
  content?: { type: string; text?: string };
  path?: string;
}

export interface PlanEntry {
  content: string;
  priority?: string;
  status?: 'pending' | 'in_progress' | 'completed' | string;
}

export type SessionUpdate =
  | { sessionUpdate: 'agent_message_chunk' | 'agent_thought_chunk' | 'user_message_chunk'; content: TextContent }
  | {
      sessionUpdate: 'tool_call';
      toolCallId: string;
      title: string;
      kind?: ToolKind;
      status?: ToolStatus;
      locations?: Location[];
      rawInput?: unknown;
    }
  | {
      sessionUpdate: 'tool_call_update';
      toolCallId: string;
      status?: ToolStatus;
      title?: string;
      content?: ToolCallContent[];
      rawOutput?: unknown;
    }
  | { sessionUpdate: 'plan'; entries: PlanEntry[] }
  | { sessionUpdate: 'current_mode_update'; currentModeId: string }
  | { sessionUpdate: 'compaction'; before: number; after: number; summary?: string; historyFile?: string }
  | { sessionUpdate: 'config_option_update'; configOptions: { id: string; currentValue: string }[] }
  | {
      sessionUpdate: 'usage_update';
      inputTokens?: number;
      outputTokens?: number;
      cacheReadTokens?: number;
      costUsd?: number;
    };

export interface SessionUpdateParams {
  sessionId: string;
  update: SessionUpdate;
}

export interface ModeInfo {
  id: string;
  name?: string;
  description?: string;
}

export interface NewSessionResult {
  sessionId: string;
  modes?: { currentModeId: string; availableModes: ModeInfo[] };
}

export type StopReason = 'end_turn' | 'cancelled' | 'max_turn_requests' | 'max_tokens' | 'refusal' | string;

export interface PromptResult {
  stopReason: StopReason;
}

export type OptionKind = 'allow_once' | 'allow_always' | 'reject_once' | 'reject_always';

export interface ApprovalOption {
  optionId: string;
  name: string;
  kind: OptionKind | string;
}

export interface ApprovalRequestParams {
  sessionId: string;
  approvalId: string;
  toolCall: {
    toolCallId: string;
    title: string;
    kind?: ToolKind;
    locations?: Location[];
    rawInput?: unknown;
  };
  /** A unified diff of the proposed change, for edits. */
  diff?: string;
  /** The command line, for execute. */
  command?: string;
  options: ApprovalOption[];
}

export type ApprovalOutcome = { outcome: 'selected'; optionId: string } | { outcome: 'cancelled' };

export interface ApprovalResponseParams {
  approvalId: string;
  outcome: ApprovalOutcome;
  feedback?: string;
}

export interface ClineDiffParams {
  sessionId: string;
  toolCallId: string;
  uri: string;
  version: number | null;
  /** The compact line diff: "Edited <path>" then a ```diff fence. */
  diff: string;
  added: number;
  removed: number;
}

export interface AskQuestionParams {
  sessionId: string;
  question: string;
  options: string[];
}

export interface AskQuestionResult {
  answer: string | null;
}
