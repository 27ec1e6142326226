-- The session buffer: a scratch buffer that streams one root's session.
-- Text is only ever appended, except the status lines of tool calls,
-- approvals and questions, which are rewritten in place (an extmark keeps
-- their row).
local config = require('cline.config')

local api = vim.api
local ns = api.nvim_create_namespace('cline')

local View = {}
View.__index = View

local M = { View = View, ns = ns }

-- new makes the (hidden) session buffer for a root.
function M.new(root)
  local self = setmetatable({ root = root, last = nil, tools = {} }, View)
  self:ensure()
  return self
end

function View:ensure()
  if self.buf and api.nvim_buf_is_valid(self.buf) then
    return self.buf
  end
  local buf = api.nvim_create_buf(false, true)
  local name = 'cline://' .. self.root
  -- A wiped buffer can leave its name behind; add a counter then.
  if vim.fn.bufexists(name) == 1 then
    name = name .. ' (' .. buf .. ')'
  end
  api.nvim_buf_set_name(buf, name)
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = 'cline'
  api.nvim_buf_set_var(buf, 'cline_root', self.root)
  if config.options.keymaps then
    vim.keymap.set('n', 'q', '<cmd>close<cr>', { buffer = buf, silent = true, desc = 'Close the Cline window' })
    vim.keymap.set('n', '<C-c>', '<cmd>ClineCancel<cr>', { buffer = buf, silent = true, desc = 'Cancel the Cline turn' })
  end
  self.buf, self.last, self.tools = buf, nil, {}
  return buf
end

-- windows lists the windows showing the buffer.
function View:windows()
  if not (self.buf and api.nvim_buf_is_valid(self.buf)) then
    return {}
  end
  return vim.fn.win_findbuf(self.buf)
end

-- show opens the buffer in a split unless a window already shows it; the
-- cursor stays where it was unless focus is set.
function View:show(focus)
  local buf = self:ensure()
  local wins = self:windows()
  if #wins > 0 then
    if focus then
      api.nvim_set_current_win(wins[1])
    end
    return wins[1]
  end
  local split = config.options.split
  if not split and not focus then
    return nil
  end
  local prev = api.nvim_get_current_win()
  vim.cmd(split or 'botright vsplit')
  local win = api.nvim_get_current_win()
  api.nvim_win_set_buf(win, buf)
  vim.wo[win].wrap = true
  vim.wo[win].linebreak = true
  vim.wo[win].number = false
  vim.wo[win].relativenumber = false
  vim.wo[win].spell = false
  self:scroll()
  if not focus and api.nvim_win_is_valid(prev) then
    api.nvim_set_current_win(prev)
  end
  return win
end

-- lines returns the buffer text (for tests and :ClineOpen users).
function View:lines()
  return api.nvim_buf_get_lines(self:ensure(), 0, -1, false)
end

-- write runs fn with the buffer modifiable, then follows the end of the
-- buffer in every window that was already at its end (or is not current).
function View:write(fn)
  local buf = self:ensure()
  local before = api.nvim_buf_line_count(buf)
  local follow = {}
  local cur = api.nvim_get_current_win()
  for _, win in ipairs(self:windows()) do
    if win ~= cur or api.nvim_win_get_cursor(win)[1] >= before then
      table.insert(follow, win)
    end
  end
  vim.bo[buf].modifiable = true
  local ok, err = pcall(fn, buf)
  vim.bo[buf].modifiable = false
  if not ok then
    error(err, 0)
  end
  self:scroll(follow)
end

function View:scroll(wins)
  local buf = self.buf
  local n = api.nvim_buf_line_count(buf)
  for _, win in ipairs(wins or self:windows()) do
    if api.nvim_win_is_valid(win) then
      api.nvim_win_set_cursor(win, { n, 0 })
    end
  end
end

-- empty reports whether the buffer holds nothing yet (a new scratch
-- buffer has one empty line).
local function empty(buf)
  return api.nvim_buf_line_count(buf) == 1 and api.nvim_buf_get_lines(buf, 0, 1, false)[1] == ''
end

-- append adds whole lines at the end and returns the row of the first.
function View:append(lines)
  local row
  self:write(function(buf)
    if empty(buf) then
      api.nvim_buf_set_lines(buf, 0, -1, false, lines)
      row = 0
    else
      row = api.nvim_buf_line_count(buf)
      api.nvim_buf_set_lines(buf, -1, -1, false, lines)
    end
  end)
  return row
end

local function split_lines(text)
  return vim.split(text, '\n', { plain = true })
end

-- block starts a new block of kind unless the last one was of that kind:
-- a blank line separates blocks of text from what came before.
function View:block(kind, blank)
  if self.last == kind then
    return false
  end
  self.last = kind
  local buf = self:ensure()
  if blank and not empty(buf) then
    local last = api.nvim_buf_get_lines(buf, -2, -1, false)[1]
    if last ~= '' then
      self:append({ '' })
    end
  end
  return true
end

-- stream appends a chunk of streamed text: the first piece continues the
-- last line, each newline starts a new line with prefix.
function View:stream(kind, text, prefix)
  prefix = prefix or ''
  local fresh = self:block(kind, true)
  local parts = split_lines(text)
  for i = 2, #parts do
    parts[i] = prefix .. parts[i]
  end
  self:write(function(buf)
    if fresh then
      parts[1] = prefix .. parts[1]
      if empty(buf) then
        api.nvim_buf_set_lines(buf, 0, -1, false, parts)
      else
        api.nvim_buf_set_lines(buf, -1, -1, false, parts)
      end
      return
    end
    local n = api.nvim_buf_line_count(buf)
    local last = api.nvim_buf_get_lines(buf, n - 1, n, false)[1]
    api.nvim_buf_set_text(buf, n - 1, #last, n - 1, #last, parts)
  end)
end

-- note appends a one-line notice (mode changes, turn ends, errors).
function View:note(text)
  self:block('note', true)
  self:append(split_lines(text))
end

-- user shows the user's prompt.
function View:user(text)
  self.last = nil
  self:block('user', true)
  local lines = split_lines(text)
  for i, l in ipairs(lines) do
    lines[i] = (i == 1 and 'You: ' or '     ') .. l
  end
  self:append(lines)
  self.last = 'user'
end

local status_words = {
  pending = 'pending',
  in_progress = 'running',
  completed = 'done',
  failed = 'failed',
}

local function tool_line(t)
  return string.format('[tool] %s (%s)', t.title, status_words[t.status] or t.status or '?')
end

local function mark_row(buf, id)
  local pos = api.nvim_buf_get_extmark_by_id(buf, ns, id, {})
  return pos and pos[1]
end

-- set_line rewrites the line an extmark sits on.
function View:set_line(mark, text)
  local buf = self:ensure()
  local row = mark_row(buf, mark)
  if not row then
    return
  end
  self:write(function(b)
    -- set_text keeps the change inside the row, so that the marks of the
    -- lines around it stay where they are.
    local old = api.nvim_buf_get_lines(b, row, row + 1, false)[1] or ''
    api.nvim_buf_set_text(b, row, 0, row, #old, { text })
  end)
end

-- tool_call shows a new tool call on its own status line.
function View:tool_call(u)
  if self.last ~= 'tool' then
    self:block('tool', true)
  end
  local t = { title = u.title or u.toolCallId or '?', status = u.status or 'pending', kind = u.kind }
  local row = self:append({ tool_line(t) })
  t.mark = api.nvim_buf_set_extmark(self.buf, ns, row, 0, { right_gravity = false })
  self.tools[u.toolCallId or ''] = t
  self.last = 'tool'
end

local function content_text(content)
  local out = {}
  for _, c in ipairs(content or {}) do
    if type(c) == 'table' then
      if c.type == 'content' and type(c.content) == 'table' and type(c.content.text) == 'string' then
        table.insert(out, c.content.text)
      elseif c.type == 'diff' and c.path then
        table.insert(out, 'diff: ' .. c.path)
      end
    end
  end
  return table.concat(out, '\n')
end

-- tool_update rewrites a tool call's status line and, once it ends, shows
-- the start of its result below the lines that came since.
function View:tool_update(u)
  local t = self.tools[u.toolCallId or '']
  if not t then
    self:tool_call({ toolCallId = u.toolCallId, title = u.title, status = u.status })
    t = self.tools[u.toolCallId or '']
  end
  if type(u.title) == 'string' and u.title ~= '' then
    t.title = u.title
  end
  if type(u.status) == 'string' then
    t.status = u.status
  end
  if type(u.kind) == 'string' then
    t.kind = u.kind
  end
  self:set_line(t.mark, tool_line(t))
  -- A plan update's result only restates the plan shown above.
  local quiet = u.status == 'completed' and t.kind == 'think'
  if (u.status == 'completed' or u.status == 'failed') and u.content and not quiet then
    local text = content_text(u.content)
    local max = config.options.tool_output_lines or 0
    if u.status == 'failed' then
      max = math.max(max, 20)
    end
    if text ~= '' and max > 0 then
      local lines = {}
      for _, l in ipairs(split_lines((text:gsub('\n+$', '')))) do
        if not l:match('^```') then
          table.insert(lines, l)
        end
      end
      local shown = {}
      for i = 1, math.min(#lines, max) do
        shown[i] = '    ' .. lines[i]
      end
      if #lines > max then
        table.insert(shown, string.format('    … (%d more lines)', #lines - max))
      end
      if self.last ~= 'tool' then
        self:block('tool', true)
      end
      self:append(shown)
      self.last = 'tool'
    end
  end
end

local plan_marks = { completed = '[x]', in_progress = '[~]', pending = '[ ]' }
-- plan_update shows the whole plan, as each update carries it.
function View:plan_update(entries)
  local lines = { 'Plan:' }
  for _, e in ipairs(entries or {}) do
    table.insert(lines, string.format('  %s %s', plan_marks[e.status] or '[ ]', e.content or ''))
  end
  self:block('plan', true)
  self:append(lines)
  self.last = nil -- the next plan is a block of its own
end

-- marker adds a line that can later be rewritten with set_line.
function View:marker(kind, text)
  if self.last ~= kind then
    self:block(kind, true)
  end
  local row = self:append({ text })
  self.last = kind
  return api.nvim_buf_set_extmark(self.buf, ns, row, 0, { right_gravity = false })
end

function View:clear()
  self:write(function(buf)
    api.nvim_buf_clear_namespace(buf, ns, 0, -1)
    api.nvim_buf_set_lines(buf, 0, -1, false, {})
  end)
  self.last, self.tools = nil, {}
end

return M
