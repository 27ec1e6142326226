package rpc

// Method names the daemon handles or sends. Custom methods live under
// cline/ (PROTOCOL.md); every method served is routed through the one
// table in routes.go.
const (
	methodInitialize   = "initialize"
	methodInitialized  = "initialized"
	methodShutdown     = "shutdown"
	methodExit         = "exit"
	methodCancel       = "$/cancelRequest"
	methodSetTrace     = "$/setTrace"
	methodDidOpen      = "textDocument/didOpen"
	methodDidChange    = "textDocument/didChange"
	methodDidClose     = "textDocument/didClose"
	methodDidSave      = "textDocument/didSave"
	methodWillSave     = "textDocument/willSave"
	methodDidChangeWF  = "workspace/didChangeWorkspaceFolders"
	methodDidChangeCfg = "workspace/didChangeConfiguration"
	methodExecCommand  = "workspace/executeCommand"

	methodLogMessage         = "window/logMessage"
	methodShowMessage        = "window/showMessage"
	methodShowMessageRequest = "window/showMessageRequest"
	methodApplyEdit          = "workspace/applyEdit"

	// cline/ methods (PROTOCOL.md §4–6).
	methodApprovalResponse = "cline/approvalResponse"
	methodClineDiff        = "cline/diff"
	methodCallTool         = "cline/callTool"
	methodTools            = "cline/tools"
	methodDiagnostics      = "cline/diagnostics" // PROTOCOL.md §10
	methodLSPRequest       = "cline/lspRequest"  // PROTOCOL.md §11

	// The methods of the editor's language servers a cline/lspRequest
	// carries (PROTOCOL.md §11).
	lspReferences     = "textDocument/references"
	lspDefinition     = "textDocument/definition"
	lspRename         = "textDocument/rename"
	lspDocumentSymbol = "textDocument/documentSymbol"

	// Checkpoints (PROTOCOL.md §8); the ACP dialect names them as
	// extension methods.
	methodCheckpoints       = "cline/checkpoints"
	methodCheckpointDiff    = "cline/checkpointDiff"
	methodRestore           = "cline/restore"
	methodACPCheckpoints    = "_cline/checkpoints"
	methodACPCheckpointDiff = "_cline/checkpointDiff"
	methodACPRestore        = "_cline/restore"

	// Session methods, shared by both dialects (PROTOCOL.md §3).
	methodSessionNew     = "session/new"
	methodSessionPrompt  = "session/prompt"
	methodSessionCancel  = "session/cancel"
	methodSessionSetMode = "session/set_mode"
	methodSessionLoad    = "session/load"
	methodSessionList    = "session/list"
	methodCloseSession   = "cline/closeSession"
	// Forks (PROTOCOL.md §12): cline/forkSession in LSP, session/fork
	// in ACP.
	methodForkSession    = "cline/forkSession"
	methodACPSessionFork = "session/fork"
	methodSessionUpdate  = "session/update"

	// Commands for clients with no plugin (PROTOCOL.md §6).
	commandNewSession  = "cline.newSession"
	commandPrompt      = "cline.prompt"
	commandSetMode     = "cline.setMode"
	commandCancel      = "cline.cancel"
	commandCheckpoints = "cline.checkpoints"
	commandRestore     = "cline.restore"
	commandForkSession = "cline.forkSession"
)

// ProtocolVersion is the version of the cline wire protocol this daemon
// speaks, announced in experimental.cline.protocolVersion.
const ProtocolVersion = 3

// lspReceived lists the standard LSP methods the server handles, and
// lspSent those it sends; a test checks both against the LSP meta model
// (names and directions) and that each received one is really routed.
var (
	lspReceived = []string{
		methodInitialize, methodInitialized, methodShutdown, methodExit, methodCancel, methodSetTrace,
		methodDidOpen, methodDidChange, methodDidClose, methodDidSave, methodWillSave,
		methodDidChangeWF, methodDidChangeCfg, methodExecCommand, methodProgressCancel, methodCodeAction,
	}
	lspSent = []string{methodLogMessage, methodShowMessage, methodShowMessageRequest, methodApplyEdit, methodProgressCreate, methodProgress}
)
