package tools

import (
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cline-ls/cline-ls/internal/sandbox"
)

// Limits shared by the workspace tools (docs/DESIGN.md §2, built-in tools).
const (
	// MaxToolOutput is the most characters (counted in bytes) a tool
	// result carries; longer output is cut in the middle, keeping its
	// start and its end, which is where errors and summaries usually are.
	MaxToolOutput = 48_000
	// DefaultCommandTimeout is how long run_commands lets one command run.
	DefaultCommandTimeout = 30 * time.Second
	// DefaultFetchTimeout bounds one fetch_web_content request.
	DefaultFetchTimeout = 30 * time.Second
	// DefaultFetchMaxBytes is how much of a response fetch_web_content
	// reads.
	DefaultFetchMaxBytes = 5 << 20
)

// WorkspaceOption adjusts the tools that WorkspaceTools makes.
type WorkspaceOption func(*workspaceConfig)

type workspaceConfig struct {
	shell          string
	commandTimeout time.Duration
	commandEnv     []string
	hiddenEnv      []string
	keyStart       func(string) int
	httpClient     *http.Client
	fetchTimeout   time.Duration
	fetchMaxBytes  int64
	background     *Background
	sandbox        func() sandbox.Policy
	terminal       ClientTerminal
}

// CommandShell sets the shell run_commands runs commands with (as
// "shell -c command"); by default $SHELL, else /bin/sh.
func CommandShell(path string) WorkspaceOption {
	return func(c *workspaceConfig) { c.shell = path }
}

// CommandTimeout sets the default time limit of one command, which a
// call's timeout argument overrides (DefaultCommandTimeout unless set).
func CommandTimeout(d time.Duration) WorkspaceOption {
	return func(c *workspaceConfig) { c.commandTimeout = d }
}

// CommandEnv sets the environment of commands (KEY=value entries); by
// default the daemon's own, plus variables that keep pagers and prompts
// from waiting for a terminal. API keys are removed from it either way
// (variables named *_API_KEY, and those HideEnv names).
func CommandEnv(env []string) WorkspaceOption {
	return func(c *workspaceConfig) { c.commandEnv = env }
}

// HideEnv names more variables that commands must not see, whatever their
// names: the configured provider's apiKeyEnv.
func HideEnv(names ...string) WorkspaceOption {
	return func(c *workspaceConfig) { c.hiddenEnv = append(c.hiddenEnv, names...) }
}

// KeyStart gives the rule that tells how many bytes at the end of text
// could start a key: a read of a background command's output leaves them
// for the next read, so that no key reaches the model in two parts.
func KeyStart(f func(text string) int) WorkspaceOption {
	return func(c *workspaceConfig) { c.keyStart = f }
}

// BackgroundCommands lets run_commands start commands in the background
// (background: true) in set, which read_command_output and stop_command
// then reach; without it such a call is refused. The session that owns
// set closes it.
func BackgroundCommands(set *Background) WorkspaceOption {
	return func(c *workspaceConfig) { c.background = set }
}

// SandboxPolicy gives what confines commands the policy allows only in
// the sandbox (ExecOptions.Sandboxed): policy is asked at each command,
// so that settings changed mid-session apply. Without it such a command
// is not run.
func SandboxPolicy(policy func() sandbox.Policy) WorkspaceOption {
	return func(c *workspaceConfig) { c.sandbox = policy }
}

// FetchClient sets the HTTP client fetch_web_content uses (a client with
// a proxy, say). Its redirect policy is kept if set; otherwise at most
// five redirects to http and https URLs are followed.
func FetchClient(client *http.Client) WorkspaceOption {
	return func(c *workspaceConfig) { c.httpClient = client }
}

// FetchLimits sets how long one fetch may take and how many bytes of a
// response are read (DefaultFetchTimeout and DefaultFetchMaxBytes unless
// set; zero keeps a default).
func FetchLimits(timeout time.Duration, maxBytes int64) WorkspaceOption {
	return func(c *workspaceConfig) {
		if timeout > 0 {
			c.fetchTimeout = timeout
		}
		if maxBytes > 0 {
			c.fetchMaxBytes = maxBytes
		}
	}
}

// WorkspaceTools returns the implementations of the built-in tools that
// read the workspace, run commands and fetch pages (read_files,
// list_files, search_codebase, list_code_definitions, run_commands,
// fetch_web_content), keyed by tool name, for Registry.RegisterBuiltins.
// Files they read come from files.Read, so a file open in the editor is
// read with its unsaved text. Merge the map with the edit tools':
//
//	impls := tools.WorkspaceTools(files, tools.HideEnv(keyVar))
//	maps.Copy(impls, tools.EditTools(files))
//	err := registry.RegisterBuiltins(impls)
//
// The tools hold no state between calls but the background commands of
// the set BackgroundCommands gives, so making a second set for another
// mode is cheap.
func WorkspaceTools(files Files, opts ...WorkspaceOption) map[string]BuildFunc {
	env := &wsEnv{files: files, cfg: workspaceConfig{
		commandTimeout: DefaultCommandTimeout,
		fetchTimeout:   DefaultFetchTimeout,
		fetchMaxBytes:  DefaultFetchMaxBytes,
	}}
	for _, o := range opts {
		o(&env.cfg)
	}
	return map[string]BuildFunc{
		NameReadFiles:           Typed(env.buildReadFiles),
		NameListFiles:           Typed(env.buildListFiles),
		NameSearchCodebase:      Typed(env.buildSearchCodebase),
		NameRunCommands:         Typed(env.buildRunCommands),
		NameListCodeDefinitions: Typed(env.buildListCodeDefinitions),
		NameFetchWebContent:     Typed(env.buildFetchWebContent),
		NameReadCommandOutput:   Typed(env.buildReadCommandOutput),
		NameStopCommand:         Typed(env.buildStopCommand),
	}
}

// wsEnv is what the workspace tools share: the workspace and editor
// behind Files, and the options.
type wsEnv struct {
	files Files
	cfg   workspaceConfig
}

// wsCutMiddle shortens s to about max bytes by cutting out its middle
// at line breaks where there are some near the cut, and says how much
// went.
func wsCutMiddle(s string, max int) string {
	if len(s) <= max {
		return s
	}
	keep := max / 2
	head := s[:keep]
	tail := s[len(s)-keep:]
	// Cut at line breaks if one is near, so no line is left half.
	if i := strings.LastIndexByte(head, '\n'); i >= keep*3/4 {
		head = head[:i+1]
	}
	if i := strings.IndexByte(tail, '\n'); i >= 0 && i <= keep/4 {
		tail = tail[i+1:]
	}
	head = beforeCut(wsValidPrefix(head))
	tail = afterCut(wsValidSuffix(tail))
	cut := utf8.RuneCountInString(s[len(head) : len(s)-len(tail)])
	return fmt.Sprintf("%s\n[... %d characters cut from the middle ...]\n%s", head, cut, tail)
}

// wsValidPrefix drops a UTF-8 sequence cut by the end of s.
func wsValidPrefix(s string) string {
	for i := 0; i < utf8.UTFMax && len(s) > 0; i++ {
		r, size := utf8.DecodeLastRuneInString(s)
		if r != utf8.RuneError || size != 1 {
			break
		}
		s = s[:len(s)-1]
	}
	return s
}

// wsValidSuffix drops the continuation bytes of a UTF-8 sequence cut by
// the start of s.
func wsValidSuffix(s string) string {
	for i := 0; i < utf8.UTFMax && len(s) > 0 && !utf8.RuneStart(s[0]); i++ {
		s = s[1:]
	}
	return s
}

// wsCutLine shortens one line to max bytes, saying how long it was.
func wsCutLine(line string, max int) string {
	if len(line) <= max {
		return line
	}
	return fmt.Sprintf("%s… [line cut: %d characters]", wsValidPrefix(line[:max]), utf8.RuneCountInString(line))
}

// wsTitleList names up to three items for a call's title.
func wsTitleList(items []string) string {
	switch n := len(items); {
	case n == 0:
		return ""
	case n <= 3:
		return strings.Join(items, ", ")
	default:
		return fmt.Sprintf("%s and %d more", strings.Join(items[:2], ", "), n-2)
	}
}

// wsSize formats a byte count for people.
func wsSize(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	}
}
