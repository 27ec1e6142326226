package prompt

import (
	"slices"
	"strings"

	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/toolspec"
)

// Input is what a system prompt is built from.
type Input struct {
	// Context gives the model family (the variant), the mode, the
	// environment, and whether tools go natively (Context.NativeTools) or
	// as XML in the prompt.
	Context tools.Context
	// Tools names the tools the mode enables. Rules about tools that are
	// absent are left out, so a prompt never mentions a tool the model
	// cannot call.
	Tools []string
	// ToolDocs documents the tools for the XML path, as
	// tools.Render(toolspec.FormatXML, enabled, ctx) gives them. It is
	// included only without native tools: native definitions already
	// travel in the request, and repeating them would be paid twice.
	ToolDocs string
	// Instructions are the user's and the workspace's own rules, appended
	// verbatim, last: they change only when their files do. What changes
	// from turn to turn (date, git status, open buffers) goes in the
	// turn's context block instead (TurnContext).
	Instructions string
}

// SystemPrompt builds the system prompt for the input's family and mode.
// The sections come in a fixed order, stable text first (role, tool use,
// tool docs, editing rules, mode) and the environment last, so that a
// provider's prompt cache keeps the prefix across sessions. Each rule is
// said once; the variants differ in wording and in how much they spell
// out: generic for most models, next-gen terser and trusting the model
// with parallel calls, xs shortest, for small local models.
func SystemPrompt(in Input) string {
	w := writer{in: in, fam: in.Context.Family, native: in.Context.NativeTools}
	if w.fam != toolspec.FamilyNextGen && w.fam != toolspec.FamilyXS {
		w.fam = toolspec.FamilyGeneric
	}
	w.b.Grow(4096 + len(in.ToolDocs) + len(in.Instructions))
	w.role()
	w.toolUse()
	w.editing()
	w.mode()
	w.environment()
	vars := ContextVars(in.Context)
	out := vars.Fill(w.b.String())
	if in.Instructions != "" {
		out += "\n# Instructions from the user and the workspace\n" + strings.TrimSpace(in.Instructions) + "\n"
	}
	return out
}

// writer assembles one prompt. Its text may hold {{...}} placeholders,
// filled once at the end.
type writer struct {
	in     Input
	fam    toolspec.Family
	native bool
	b      strings.Builder
}

// pick chooses the wording for the variant; an empty choice leaves the
// rule out of that variant.
func (w *writer) pick(generic, nextGen, xs string) string {
	switch w.fam {
	case toolspec.FamilyNextGen:
		return nextGen
	case toolspec.FamilyXS:
		return xs
	}
	return generic
}

func (w *writer) has(name string) bool { return slices.Contains(w.in.Tools, name) }

func (w *writer) heading(title string) {
	w.b.WriteString("\n# ")
	w.b.WriteString(title)
	w.b.WriteString("\n")
}

func (w *writer) line(s string) {
	if s != "" {
		w.b.WriteString(s)
		w.b.WriteString("\n")
	}
}

func (w *writer) bullet(s string) {
	if s != "" {
		w.line("- " + s)
	}
}

func (w *writer) role() {
	w.line(w.pick(
		"You are Cline, a software engineer working in the user's code editor. You do coding tasks in the workspace with your tools: read and search the code, change files, run commands, then report briefly. Be direct and concise, without praise or filler, and write in the user's language.",
		"You are Cline, an expert software engineer working in the user's code editor. Use your tools to understand the code, make the change and verify it. Be concise and direct, and write in the user's language.",
		"You are Cline, a coding assistant in the user's editor. Use the tools to do the task. Keep replies short.",
	))
}

func (w *writer) toolUse() {
	w.heading("Tool use")
	if !w.native {
		w.line("Call a tool by writing it in your reply as XML: the tool's name as the outer tag and each parameter as an inner tag.\n\n<tool_name>\n<parameter_name>value</parameter_name>\n</tool_name>\n")
		w.bullet(w.pick(
			"Values are raw text: do not escape <, > or &. Write array and object values as JSON.",
			"Values are raw text (no escaping of <, > or &); array and object values are JSON.",
			"Values are raw text, not escaped. Arrays and objects are JSON.",
		))
		w.bullet(w.pick(
			"Make one call per reply, at its end, then stop: the result arrives in the next message. Never write a result yourself.",
			"Put calls at the end of your reply and stop there; several calls are fine when none needs another's result. Results arrive in the next message; never write one yourself.",
			"One call per reply, at the end. Then stop and wait for the result. Never write the result yourself.",
		))
	} else {
		w.bullet(w.pick(
			"Independent calls may share one reply: reads and searches run in parallel, edits and commands one at a time in the order given. A call that needs another's result goes in a later reply.",
			"Batch independent calls in one reply: reads and searches run in parallel, edits and commands one at a time in the order given.",
			"",
		))
	}
	w.bullet(w.pick(
		"Look before you act: read the code instead of guessing names, paths or APIs.",
		"",
		"Read the code first; do not guess.",
	))
	w.bullet(w.pick(
		"If a call fails, read the error and fix the call rather than repeating it.",
		"If a call fails, fix it from the error rather than repeating it.",
		"If a call fails, read the error and fix the call.",
	))
	w.bullet(w.pick(
		"Changes, commands, web requests and MCP tools may need the user's approval. A denied call comes back saying so, perhaps with the user's feedback: follow it and do not retry the same call.",
		"Changes, commands, web and MCP calls may need approval; when one is denied, follow the user's feedback instead of retrying it.",
		"If the user denies a call, follow their feedback; do not retry it.",
	))
	w.bullet(w.pick(
		"Paths are relative to the working directory and must stay inside the workspace.",
		"Paths are relative to the working directory, inside the workspace.",
		"Paths are relative to {{CWD}}.",
	))
	// How commands run (shell, timeout, no input) is in run_commands' own
	// description; only the choice between it and the file tools is here.
	if w.has(tools.NameRunCommands) {
		if w.has(tools.NameReadFiles) && w.fam != toolspec.FamilyXS {
			if w.canEdit() {
				w.bullet("Read, search and edit files with the file tools, not cat, grep, sed or echo.")
			} else {
				w.bullet("Read and search files with the file tools, not cat or grep.")
			}
		}
	}
	if w.has(tools.NameSpawnAgent) && w.fam != toolspec.FamilyXS {
		w.bullet("Hand broad searches to spawn_agent to save your context.")
	}
	if w.has(tools.NameUpdatePlan) && w.fam != toolspec.FamilyXS {
		w.bullet("Track work of several steps with update_plan.")
	}
	if !w.native && w.in.ToolDocs != "" {
		w.heading("Tools")
		w.line(strings.TrimRight(w.in.ToolDocs, "\n"))
	}
}

func (w *writer) canEdit() bool {
	return w.has(tools.NameEditor) || w.has(tools.NameReplaceInFile) ||
		w.has(tools.NameApplyPatch) || w.has(tools.NameWriteToFile)
}

func (w *writer) editing() {
	if !w.canEdit() {
		return
	}
	editor, replace, patch, write := w.has(tools.NameEditor), w.has(tools.NameReplaceInFile),
		w.has(tools.NameApplyPatch), w.has(tools.NameWriteToFile)
	w.heading("Editing files")
	w.bullet(w.pick(
		"Read a file before changing it, and work from its current text: the user may edit it meanwhile, and their changes win.",
		"Read a file before changing it; the user may edit it meanwhile, so work from its current text.",
		"Read a file before you change it.",
	))
	if editor {
		w.bullet(w.pick(
			"editor's old_text must match exactly one place in the file, whitespace and indentation included; add surrounding lines until it is unique. With no match or several, nothing changes.",
			"editor's old_text must match exactly one place, whitespace included; widen it until it is unique.",
			"editor: old_text must match exactly one place in the file, with the same spaces.",
		))
	}
	if replace {
		w.bullet(w.pick(
			"Each replace_in_file SEARCH block must match the file's current lines exactly; make several changes to one file in one call.",
			"replace_in_file SEARCH blocks must match the current lines exactly; several blocks may go in one call.",
			"replace_in_file: each SEARCH block must match the file exactly.",
		))
	}
	if patch {
		w.bullet(w.pick(
			"apply_patch context lines must match the current file; a patch applies whole or not at all.",
			"apply_patch context must match the current file; a patch applies whole or not at all.",
			"apply_patch: context lines must match the file.",
		))
	}
	if write {
		w.bullet(w.pick(
			"Give write_to_file the whole content: never elide parts with placeholders such as \"rest unchanged\".",
			"write_to_file takes the whole content, never placeholders for parts.",
			"write_to_file: only new files or full rewrites; give the whole content.",
		))
	}
	w.bullet(w.pick(
		"Files keep their line endings: write new text with plain newlines.",
		"Files keep their line endings; write plain newlines.",
		"",
	))
	w.bullet(w.pick(
		"Make the smallest change that does the job, in the surrounding style; do not add comments that narrate the change.",
		"Keep changes minimal and in the surrounding style; no comments that narrate the change.",
		"Change only what the task needs.",
	))
	if w.has(tools.NameRunCommands) {
		w.bullet(w.pick(
			"Then check the result: build, test or lint where the project allows.",
			"Verify with the project's build and tests.",
			"",
		))
	}
}

func (w *writer) mode() {
	switch w.in.Context.Mode {
	case tools.ModePlan:
		w.heading("Plan mode")
		explore := "read-only tools"
		if w.has(tools.NameRunCommands) {
			explore += " and commands that change nothing"
		}
		w.line(w.pick(
			"Plan, do not change anything: explore with the "+explore+", then answer with plan_mode_respond, giving the goal, the files and functions involved, the steps, the risks and how to verify. Set needs_more_exploration while you still need to look. The user switches to act mode to carry out the plan.",
			"Plan, change nothing: explore with the "+explore+", then answer with plan_mode_respond (goal, files involved, steps, risks, verification). Set needs_more_exploration while you still need to look; the user switches to act mode to carry it out.",
			"Do not change anything. Explore with the "+explore+", then answer with plan_mode_respond: the steps to do the task.",
		))
		w.askRule("Ask with ask_question when the goal is unclear.")
	case tools.ModeYolo:
		w.heading("Yolo mode")
		w.line(w.pick(
			"Every call is approved automatically and no one is watching: decide for yourself. A reply without a tool call does not end your turn; only submit_and_exit does. Call it once the task is done and checked, with a summary and whether you verified it, or when you are sure the task cannot be done, saying why.",
			"Calls are approved automatically and no one is watching: decide for yourself. Only submit_and_exit ends your turn: call it when the task is done and checked (or proven impossible), with a summary and whether you verified it.",
			"No one is watching: do not ask, decide. Only submit_and_exit ends your turn. Call it when the task is done, with a summary.",
		))
	case tools.ModeSearch:
		w.heading("Search mode")
		w.line(w.pick(
			"Find and report: search and read the code, then answer citing path:line. You cannot change files or run commands. A reply without a tool call ends your turn.",
			"Find and report: search and read, then answer citing path:line. Nothing can be changed. A reply without a tool call ends your turn.",
			"Find the answer in the code and reply with it, citing path:line. A reply without a tool call ends your turn.",
		))
	case tools.ModeMinimal:
		w.heading("Minimal mode")
		w.line(w.pick(
			"Your tool is the shell: inspect and change files with ordinary commands. When the work is done, reply without a tool call to end your turn, with a short summary.",
			"Work through the shell. A reply without a tool call ends your turn; give a short summary then.",
			"Use commands to do the task. Reply without a tool call when done.",
		))
	default:
		w.heading("Act mode")
		w.line(w.pick(
			"Carry the task through. When it is done, reply without a tool call: that ends your turn. Say in a few lines what changed and how you checked it.",
			"Carry the task through, then reply without a tool call to end your turn, saying briefly what changed and how you checked it.",
			"Finish the task, then reply without a tool call to end your turn, with a short summary.",
		))
		w.askRule("If you cannot go on without the user's answer, ask with ask_question; otherwise choose sensibly and say what you chose.")
	}
}

func (w *writer) askRule(generic string) {
	if w.has(tools.NameAskQuestion) {
		w.line(w.pick(generic, generic, "Ask with ask_question only if you are stuck."))
	}
}

func (w *writer) environment() {
	ctx := w.in.Context
	w.heading("Environment")
	w.line("Working directory: {{CWD}}")
	if ctx.OS != "" {
		w.line("OS: {{OS}}")
	}
	if ctx.Shell != "" {
		w.line("Shell: {{SHELL}}")
	}
}
