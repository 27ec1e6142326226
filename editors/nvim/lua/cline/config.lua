-- Defaults and the merged options for the plugin.
local M = {}

M.defaults = {
  -- How to start the daemon.
  cmd = { 'cline-ls' },
  cmd_env = nil,
  -- Sent as initializationOptions and workspace/didChangeConfiguration:
  -- provider {name, model, apiKeyEnv, ...}, mode, approvals, rules, ...
  -- (see PROTOCOL.md §2). Keys are never put here: apiKeyEnv names the
  -- environment variable that holds one.
  settings = {},
  -- The workspace root: a path, or a function(bufnr) returning one. By
  -- default the nearest folder above the current file holding one of
  -- root_markers, else the current directory.
  root_dir = nil,
  root_markers = { '.git', '.hg', '.svn' },
  -- Extra client capabilities, merged over Neovim's own.
  capabilities = nil,
  -- How an address the daemon asks to open (an MCP server's sign-in
  -- page) is opened: a function(url) returning false when it could not;
  -- by default vim.ui.open (0.10), else $BROWSER or xdg-open.
  open_url = nil,
  -- Passed to the LSP client; a short debounce keeps the daemon's mirror
  -- of a buffer close behind the keyboard.
  flags = { debounce_text_changes = 50 },
  -- Where the session buffer opens when it is not visible; false keeps it
  -- hidden (:ClineOpen shows it).
  split = 'botright vsplit',
  -- With the default split, the session window's width: a fraction of
  -- the screen's columns (or a number of columns), never under
  -- chat_min_width; kept as the screen is resized and windows open and
  -- close. A screen too narrow for that and a file window as wide puts
  -- the session window below the others instead, until it is wide again.
  chat_width = 0.4,
  chat_min_width = 30,
  -- Where the approval view (its diff or command, answered with a, A, r,
  -- R or q in that window) opens while it waits. nil: above the session
  -- buffer's window when one shows it, so the user's windows keep their
  -- size; else 'topleft split'.
  preview_split = nil,
  -- Where cline/diff goes. 'session': in the session buffer, the diff of
  -- an edit no approval showed, a one-line summary of one it did (each
  -- diff is shown once); 'buffer': only the summary, the diffs collected
  -- in the diff buffer (:ClineDiffs); 'split': that, and the diff buffer
  -- opened in a split; 'none': only the summary. The diff buffer keeps
  -- them all but with 'none'.
  diff_view = 'session',
  diff_split = 'botright split',
  -- Lines of a tool's result shown under its status line.
  tool_output_lines = 6,
  -- Buffer-local maps in the session buffer (? lists them): <CR> and
  -- <C-s> send the prompt area, <C-c> cancels, q closes, ...
  keymaps = true,
}

M.options = vim.deepcopy(M.defaults)

function M.set(opts)
  M.options = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts or {})
  -- Lists are replaced, not merged index by index.
  if opts and opts.cmd then
    M.options.cmd = opts.cmd
  end
  if opts and opts.root_markers then
    M.options.root_markers = opts.root_markers
  end
  return M.options
end

return M
