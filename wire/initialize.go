package wire

// The answers to initialize in each dialect, with only what the daemon
// serves.

// InitializeResult is the LSP dialect's answer to initialize.
type InitializeResult struct {
	Capabilities ServerCapabilities `json:"capabilities"`
	ServerInfo   Implementation     `json:"serverInfo"`
}

// ServerCapabilities are the LSP capabilities the daemon serves, with
// cline's own under experimental.cline.
type ServerCapabilities struct {
	CodeActionProvider     CodeActionOptions       `json:"codeActionProvider"`
	ExecuteCommandProvider ExecuteCommandOptions   `json:"executeCommandProvider"`
	Experimental           Experimental            `json:"experimental"`
	PositionEncoding       string                  `json:"positionEncoding"`
	TextDocumentSync       TextDocumentSyncOptions `json:"textDocumentSync"`
	Workspace              WorkspaceCapabilities   `json:"workspace"`
}

// CodeActionOptions are the code action kinds offered.
type CodeActionOptions struct {
	CodeActionKinds []string `json:"codeActionKinds"`
}

// ExecuteCommandOptions are the commands workspace/executeCommand runs.
type ExecuteCommandOptions struct {
	Commands []string `json:"commands"`
}

// Experimental holds cline's capabilities.
type Experimental struct {
	Cline ClineCapabilities `json:"cline"`
}

// ClineCapabilities are the cline protocol's version, the modes and the
// names of the built-in tools.
type ClineCapabilities struct {
	Modes           []string `json:"modes"`
	ProtocolVersion int      `json:"protocolVersion"`
	Tools           []string `json:"tools"`
}

// TextDocumentSyncOptions is how the client sends its buffers: Change 2 is
// incremental.
type TextDocumentSyncOptions struct {
	Change    int         `json:"change"`
	OpenClose bool        `json:"openClose"`
	Save      SaveOptions `json:"save"`
}

// SaveOptions says whether didSave carries the text.
type SaveOptions struct {
	IncludeText bool `json:"includeText"`
}

// WorkspaceCapabilities are the workspace folder capabilities.
type WorkspaceCapabilities struct {
	WorkspaceFolders WorkspaceFoldersCapabilities `json:"workspaceFolders"`
}

// WorkspaceFoldersCapabilities says that folders are supported and their
// changes wanted.
type WorkspaceFoldersCapabilities struct {
	ChangeNotifications bool `json:"changeNotifications"`
	Supported           bool `json:"supported"`
}

// Implementation names a program and its version.
type Implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// ACPInitializeResult is the ACP dialect's answer to initialize.
type ACPInitializeResult struct {
	AgentCapabilities AgentCapabilities `json:"agentCapabilities"`
	AgentInfo         Implementation    `json:"agentInfo"`
	AuthMethods       []AuthMethod      `json:"authMethods"`
	ProtocolVersion   int               `json:"protocolVersion"`
}

// AuthMethod is a way to authenticate (the daemon offers none).
type AuthMethod struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// AgentCapabilities are the ACP capabilities the daemon serves.
type AgentCapabilities struct {
	LoadSession         bool                `json:"loadSession"`
	MCPCapabilities     MCPCapabilities     `json:"mcpCapabilities"`
	PromptCapabilities  PromptCapabilities  `json:"promptCapabilities"`
	SessionCapabilities SessionCapabilities `json:"sessionCapabilities"`
}

// MCPCapabilities are the MCP transports served besides stdio.
type MCPCapabilities struct {
	HTTP bool `json:"http"`
	SSE  bool `json:"sse"`
}

// PromptCapabilities are the content a prompt may carry besides text and
// resource links.
type PromptCapabilities struct {
	Audio           bool `json:"audio"`
	EmbeddedContext bool `json:"embeddedContext"`
	Image           bool `json:"image"`
}

// SessionCapabilities are the optional session methods served: each one
// served is sent as {}.
type SessionCapabilities struct {
	Close *Empty `json:"close,omitzero"`
	List  *Empty `json:"list,omitzero"`
}
