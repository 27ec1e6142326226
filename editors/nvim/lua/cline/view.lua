-- The session buffer: one root's session as a chat. The transcript above
-- a separator line streams the session; text is only ever added there,
-- except the status lines of tool calls, approvals and questions, which
-- are rewritten in place (an extmark keeps their row). Below the
-- separator is the prompt area, where the user writes the next message
-- (as many lines as needed) and sends it with <CR> in normal mode or
-- <C-s>. While a turn runs, a line under the transcript says what the
-- session waits for.
local compat = require('cline.compat')
local config = require('cline.config')
local visible = require('cline.safe').visible

local api = vim.api
local ns = api.nvim_create_namespace('cline')

local View = {}
View.__index = View

local M = { View = View, ns = ns }

-- views maps a session buffer to its view, for the key listener.
local views = setmetatable({}, { __mode = 'v' })
local on_key_ns

-- new makes the (hidden) session buffer for a root.
function M.new(root)
  local self = setmetatable({ root = root, last = nil, tools = {} }, View)
  self:ensure()
  return self
end

-- keys are the session buffer's maps: {mode(s), lhs, command, what}.
M.keys = {
  { 'n', '<CR>', 'ClineSend', 'send the prompt area' },
  { { 'n', 'i' }, '<C-s>', 'ClineSend', 'send the prompt area' },
  { 'n', '<C-c>', 'ClineCancel', 'cancel the running turn' },
  { 'n', 'gr', 'ClineSessions', 'resume an earlier session' },
  { 'n', 'gu', 'ClineUndo', 'undo the last turn (files and conversation)' },
  { 'n', 'gc', 'ClineCheckpoints', 'checkpoints, with a preview of each' },
  { 'n', 'gm', 'ClineMode', 'switch the mode' },
  { 'n', 'gM', 'ClineModel', 'switch the model' },
  { 'n', 'gd', 'ClineDiffs', 'the diffs of the edits so far' },
  { 'n', 'gn', 'ClineNew', 'start a new session' },
  { 'n', '?', nil, 'show or hide this help' },
  { 'n', 'q', 'close', 'close the window' },
}

M.separator = '──── your message below · <CR> sends · ? keys ────'

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
  vim.bo[buf].filetype = 'cline'
  api.nvim_buf_set_var(buf, 'cline_root', self.root)
  -- <C-x><C-o> after an @ completes a path under the root.
  vim.bo[buf].omnifunc = "v:lua.require'cline.mentions'.complete"
  api.nvim_buf_set_lines(buf, 0, -1, false, { M.separator, '' })
  -- Lines put in above the separator push it down (right gravity).
  self.sep = api.nvim_buf_set_extmark(buf, ns, 0, 0, {})
  self.sep_row = 0
  self:protect(buf)
  if config.options.keymaps then
    for _, k in ipairs(M.keys) do
      local rhs = k[3] and ('<cmd>' .. k[3] .. '<cr>') or function()
        self:toggle_help()
      end
      vim.keymap.set(k[1], k[2], rhs, { buffer = buf, silent = true, nowait = true, desc = 'Cline: ' .. k[4] })
    end
  end
  self.buf, self.last, self.tools, self.help, self.waiting = buf, nil, {}, false, nil
  return buf
end

-- tail is the separator's row: the number of transcript lines. A
-- separator the user deleted is put back at the end.
function View:tail()
  local buf = self:ensure()
  local pos = api.nvim_buf_get_extmark_by_id(buf, ns, self.sep, {})
  local row = pos and pos[1]
  if not row or (api.nvim_buf_get_lines(buf, row, row + 1, false)[1] or '') ~= M.separator then
    local n = api.nvim_buf_line_count(buf)
    self:raw(function(b)
      api.nvim_buf_set_lines(b, n, n, false, { M.separator, '' })
    end)
    pcall(api.nvim_buf_del_extmark, buf, ns, self.sep)
    self.sep = api.nvim_buf_set_extmark(buf, ns, n, 0, {})
    row = n
    self:decorate()
  end
  return row
end

-- raw changes the buffer outside the user's undo history: a change made
-- with 'undolevels' at -1 cannot be undone, and the history starts afresh
-- after it, so u in the prompt area never takes back the transcript (it
-- undoes what was typed since the transcript last changed).
-- The buffer is 'modifiable' only while the cursor is in the prompt
-- area, so raw lifts that for its own change; a repair the user's last
-- change needs is made first, while undo can still take that change back.
function View:raw(fn)
  local buf = self.buf
  if self.damaged then
    self:repair()
  end
  local ul = compat.get_buf_option(buf, 'undolevels')
  local ma = compat.get_buf_option(buf, 'modifiable')
  compat.set_buf_option(buf, 'undolevels', -1)
  if not ma then
    compat.set_buf_option(buf, 'modifiable', true)
  end
  self.writing = true
  local ok, err = pcall(fn, buf)
  self.writing = false
  compat.set_buf_option(buf, 'undolevels', ul)
  if not ma then
    compat.set_buf_option(buf, 'modifiable', false)
  end
  local pos = api.nvim_buf_get_extmark_by_id(buf, ns, self.sep, {})
  self.sep_row = pos and pos[1] or self.sep_row
  if not ok then
    error(err, 0)
  end
end

-- protect keeps the transcript and the separator out of the user's
-- edits. 'modifiable' follows the cursor (off above the prompt area), so
-- that x, dd, o or insert there are refused as in any read-only buffer;
-- what still reaches them from the prompt area (dgg, :%d, <BS> at the
-- start of the first prompt line) is seen by on_lines and repaired
-- once the change is over, and an emptied prompt area gets its line
-- back with the cursor in it.
function View:protect(buf)
  api.nvim_buf_attach(buf, false, {
    on_lines = function(_, _, _, first, last_old, last_new)
      if self.writing or self.buf ~= buf then
        return
      end
      -- A change that starts at or above the separator's row touched the
      -- transcript or the separator.
      if first <= self.sep_row then
        self.damaged = 'transcript'
      elseif not self.damaged and last_new < last_old then
        self.damaged = 'prompt'
      end
      if self.damaged and not self.repair_queued then
        self.repair_queued = true
        vim.schedule(function()
          self.repair_queued = false
          if self.damaged and api.nvim_buf_is_valid(buf) then
            self:repair()
          end
        end)
      end
    end,
  })
  views[buf] = self
  if not on_key_ns then
    -- CursorMoved waits for typeahead to end, so with keys typed ahead
    -- ("Gi", "ggx") 'modifiable' would be that of where the cursor was:
    -- each key sets it for where the cursor is when the key is read.
    on_key_ns = api.nvim_create_namespace('cline_view_keys')
    vim.on_key(function()
      local v = views[api.nvim_get_current_buf()]
      if v then
        v:lock()
      end
    end, on_key_ns)
  end
  local group = api.nvim_create_augroup('cline_view_' .. buf, { clear = true })
  api.nvim_create_autocmd({ 'CursorMoved', 'CursorMovedI', 'InsertEnter', 'BufEnter', 'WinEnter' }, {
    group = group,
    buffer = buf,
    callback = function()
      self:lock()
    end,
  })
end

-- lock sets 'modifiable' for where the cursor is: on in the prompt area,
-- off in the transcript and on the separator.
function View:lock()
  local buf = self.buf
  local win = api.nvim_get_current_win()
  if not (buf and api.nvim_buf_is_valid(buf)) or api.nvim_win_get_buf(win) ~= buf then
    return
  end
  local editable = api.nvim_win_get_cursor(win)[1] - 1 > self.sep_row
  if compat.get_buf_option(buf, 'modifiable') ~= editable then
    compat.set_buf_option(buf, 'modifiable', editable)
  end
end

-- repair puts back what the user's last change broke: a change that
-- reached the transcript or the separator is undone, unless it only
-- joined the first prompt line to the separator (<BS> at its start),
-- which is split again; an emptied prompt area gets an empty line, with
-- the cursor moved there from the separator.
function View:repair()
  local buf, what = self.buf, self.damaged
  self.damaged = nil
  local row = self.sep_row
  local line = api.nvim_buf_get_lines(buf, row, row + 1, false)[1]
  local joined = line and #line > #M.separator and line:sub(1, #M.separator) == M.separator
  if what == 'transcript' and not joined then
    -- The undo is ours: on_lines lets it be; the cursor may have left
    -- the prompt area with the change, taking 'modifiable' with it.
    self.writing = true
    compat.set_buf_option(buf, 'modifiable', true)
    local ok = pcall(api.nvim_buf_call, buf, function()
      vim.cmd('silent undo')
    end)
    self.writing = false
    local pos = api.nvim_buf_get_extmark_by_id(buf, ns, self.sep, {})
    self.sep_row = pos and pos[1] or row
    if ok then
      vim.notify('cline: the transcript is read-only: write below the line', vim.log.levels.WARN)
    end
    row = self.sep_row
  end
  line = api.nvim_buf_get_lines(buf, row, row + 1, false)[1]
  local rest
  if line and #line > #M.separator and line:sub(1, #M.separator) == M.separator then
    rest = line:sub(#M.separator + 1)
  end
  local empty = api.nvim_buf_line_count(buf) <= row + 1
  if rest or empty then
    self:raw(function(b)
      if rest then
        api.nvim_buf_set_text(b, row, #M.separator, row, #line, { '', rest })
      else
        api.nvim_buf_set_lines(b, row + 1, row + 1, false, { '' })
      end
    end)
  end
  -- The cursor left on the separator (dd of the last prompt line, say)
  -- goes down to the prompt area.
  for _, win in ipairs(self:windows()) do
    local cur = api.nvim_win_get_cursor(win)
    if cur[1] - 1 == row then
      api.nvim_win_set_cursor(win, { row + 2, rest and 0 or cur[2] })
    end
  end
  self:tail()
  self:lock()
end

-- input returns the prompt area's text (trailing blank lines dropped).
function View:input()
  local buf = self:ensure()
  local lines = api.nvim_buf_get_lines(buf, self:tail() + 1, -1, false)
  while #lines > 0 and lines[#lines]:match('^%s*$') do
    table.remove(lines)
  end
  return table.concat(lines, '\n')
end

-- set_input replaces the prompt area's text.
function View:set_input(text)
  local buf = self:ensure()
  local row = self:tail()
  self:raw(function(b)
    api.nvim_buf_set_lines(b, row + 1, -1, false, vim.split(text or '', '\n', { plain = true }))
  end)
end

-- add_input appends text at the end of the prompt area (a mention, say).
function View:add_input(text)
  local cur = self:input()
  if cur == '' then
    self:set_input(text)
  elseif cur:match('%s$') then
    self:set_input(cur .. text)
  else
    self:set_input(cur .. ' ' .. text)
  end
end

-- decorate draws what hangs off the separator: the waiting indicator
-- above it, the help below it.
function View:decorate()
  local buf = self.buf
  local row = api.nvim_buf_get_extmark_by_id(buf, ns, self.sep, {})[1]
  local opts = { id = self.sep }
  if self.waiting then
    opts.virt_lines = { { { '⋯ ' .. self.waiting, 'WarningMsg' } } }
    opts.virt_lines_above = true
  end
  api.nvim_buf_set_extmark(buf, ns, row, 0, opts)
  if self.help_mark then
    pcall(api.nvim_buf_del_extmark, buf, ns, self.help_mark)
    self.help_mark = nil
  end
  if self.help then
    local lines = {}
    for _, l in ipairs(M.help_lines()) do
      table.insert(lines, { { l, 'Comment' } })
    end
    -- On the separator's row, below it: between the separator and the
    -- prompt area.
    self.help_mark = api.nvim_buf_set_extmark(buf, ns, row, 0, { virt_lines = lines })
  end
end

-- help_lines lists the keys of the session buffer.
function M.help_lines()
  local out = {}
  for _, k in ipairs(M.keys) do
    local modes = type(k[1]) == 'table' and table.concat(k[1], ',') or k[1]
    table.insert(out, string.format('  %-6s %-2s %s', k[2], modes, k[4]))
  end
  table.insert(out, '  insert mode: <CR> starts a new line, <C-x><C-o> after @ completes a path')
  table.insert(out, '  from a file: :ClineMention, or :\'<,\'>ClineMention for the selected lines')
  return out
end

function View:toggle_help()
  self.help = not self.help
  self:decorate()
end

-- set_waiting shows (text) or hides (nil) the waiting indicator.
function View:set_waiting(text)
  self:ensure()
  if self.waiting == text then
    return
  end
  self.waiting = text
  self:tail()
  self:decorate()
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
  vim.wo[win].statusline = "%<%{v:lua.require'cline'.status()}%=%l/%L"
  if not split or split == config.defaults.split then
    -- The default split: the width is the view's to keep.
    api.nvim_win_set_var(win, 'cline_side', 'right')
    M.watch_layout()
    self:layout(win)
  end
  self:scroll()
  if not focus and api.nvim_win_is_valid(prev) then
    api.nvim_set_current_win(prev)
  end
  return win
end

-- spot is where the cursor is in the session buffer's prompt area, for
-- back_to: its window and its place after the separator; nil when the
-- cursor is elsewhere.
function View:spot()
  local win = api.nvim_get_current_win()
  if not self.buf or api.nvim_win_get_buf(win) ~= self.buf then
    return nil
  end
  local cur = api.nvim_win_get_cursor(win)
  local off = cur[1] - 1 - self:tail()
  if off < 1 then
    return nil
  end
  return { win = win, off = off, col = cur[2] }
end

-- back_to puts the cursor back at spot (taken by spot before the
-- transcript changed), else at the end of the prompt area, showing the
-- buffer when hidden: after a restore or a resume the next thing typed
-- is the next message, never text in the file window.
function View:back_to(spot)
  local win = spot and api.nvim_win_is_valid(spot.win) and api.nvim_win_get_buf(spot.win) == self.buf and spot.win
  if win then
    api.nvim_set_current_win(win)
  else
    win = self:show(true)
  end
  if not win then
    return
  end
  local n = api.nvim_buf_line_count(self.buf)
  local row, col = n, #(api.nvim_buf_get_lines(self.buf, n - 1, n, false)[1] or '')
  if spot and win == spot.win then
    row = math.min(self:tail() + 1 + spot.off, n)
    col = spot.col
  end
  pcall(api.nvim_win_set_cursor, win, { row, col })
  self:lock()
end

-- side is where the view put a session window it opened: 'right' (a
-- vertical split at the right edge), 'bottom', or nil for a window the
-- user placed.
local function side(win)
  local ok, v = pcall(api.nvim_win_get_var, win, 'cline_side')
  return ok and v or nil
end

-- layout keeps each session window the view opened usable: at the right
-- edge it gets chat_width of the screen's columns, at least
-- chat_min_width, leaving the others as much; on a screen too narrow for
-- both it moves below the others (full width, 40% of the lines) and back
-- to the right once the screen is wide again. A waiting approval's view,
-- which sits above the session window, is opened again beside it.
function View:layout(only)
  local o = config.options
  local cols, lines = vim.o.columns, vim.o.lines
  local min = math.max(tonumber(o.chat_min_width) or 30, 10)
  local narrow = cols < 2 * min + 1
  local frac = tonumber(o.chat_width) or 0.4
  local width = frac < 1 and math.floor(cols * frac + 0.5) or math.floor(frac)
  width = math.min(math.max(width, min), cols - min - 1)
  local moved = false
  for _, win in ipairs(only and { only } or self:windows()) do
    local s = api.nvim_win_is_valid(win) and side(win)
    if s and api.nvim_win_get_tabpage(win) == api.nvim_get_current_tabpage() and #api.nvim_tabpage_list_wins(0) > 1 then
      local want = narrow and 'bottom' or 'right'
      if s ~= want then
        local cur = api.nvim_get_current_win()
        api.nvim_win_call(win, function()
          vim.cmd(want == 'bottom' and 'wincmd J' or 'wincmd L')
        end)
        if api.nvim_win_is_valid(cur) then
          api.nvim_set_current_win(cur)
        end
        api.nvim_win_set_var(win, 'cline_side', want)
        moved = true
      end
      if want == 'right' then
        pcall(api.nvim_win_set_width, win, width)
      else
        pcall(api.nvim_win_set_height, win, math.max(math.floor(lines * 0.4), 6))
      end
    end
  end
  if moved then
    local approvals = require('cline.approvals')
    local abuf = vim.fn.bufnr('cline://approval')
    if abuf ~= -1 and approvals.pending() > 0 then
      for _, w in ipairs(vim.fn.win_findbuf(abuf)) do
        pcall(api.nvim_win_close, w, true)
      end
      approvals.show(false)
    end
  end
end

-- watch_layout lays the session windows out again as the screen is
-- resized and windows open and close ('equalalways' shares the columns
-- out evenly, which at 80 columns and three windows leaves the chat 26).
function M.watch_layout()
  if M.watching then
    return
  end
  M.watching = true
  local function again()
    if M.layout_queued then
      return
    end
    M.layout_queued = true
    -- After the event: a closed window is gone only then.
    vim.schedule(function()
      M.layout_queued = false
      for _, v in pairs(views) do
        if api.nvim_buf_is_valid(v.buf) then
          v:layout()
        end
      end
    end)
  end
  local group = api.nvim_create_augroup('cline_layout', { clear = true })
  api.nvim_create_autocmd({ 'VimResized', 'WinNew', 'WinClosed' }, { group = group, callback = again })
end

-- lines returns the transcript (for tests and :ClineOpen users).
function View:lines()
  self:ensure()
  return api.nvim_buf_get_lines(self.buf, 0, self:tail(), false)
end

-- write runs fn(buf, tail) on the transcript, then follows its end in
-- every window showing the buffer except the one the user is in.
function View:write(fn)
  local buf = self:ensure()
  local tail = self:tail()
  local follow = {}
  local cur = api.nvim_get_current_win()
  for _, win in ipairs(self:windows()) do
    if win ~= cur then
      table.insert(follow, win)
    end
  end
  self:raw(function(b)
    fn(b, tail)
  end)
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

-- append adds whole lines at the end of the transcript and returns the
-- row of the first. Lines come from the daemon: they are made visible
-- (a line break in one is escaped, not an error).
function View:append(lines)
  local row
  local shown = {}
  for i, l in ipairs(lines) do
    shown[i] = visible(l, 'line')
  end
  lines = shown
  self:write(function(buf, tail)
    row = tail
    api.nvim_buf_set_lines(buf, tail, tail, false, lines)
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
  local tail = self:tail()
  if blank and tail > 0 then
    local last = api.nvim_buf_get_lines(self.buf, tail - 1, tail, false)[1]
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
  local parts = split_lines(visible(text))
  for i = 2, #parts do
    parts[i] = prefix .. parts[i]
  end
  self:write(function(buf, tail)
    if fresh or tail == 0 then
      parts[1] = prefix .. parts[1]
      api.nvim_buf_set_lines(buf, tail, tail, false, parts)
      return
    end
    local last = api.nvim_buf_get_lines(buf, tail - 1, tail, false)[1]
    api.nvim_buf_set_text(buf, tail - 1, #last, tail - 1, #last, parts)
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
  return string.format('[tool] %s (%s)', visible(t.title, 'exact'), visible(status_words[t.status] or t.status or '?', 'exact'))
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
  text = visible(text, 'line')
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

-- content_text is the text of a tool call's content, but for the texts
-- in skip (notes shown already).
local function content_text(content, skip)
  local out = {}
  for _, c in ipairs(content or {}) do
    if type(c) == 'table' then
      if c.type == 'content' and type(c.content) == 'table' and type(c.content.text) == 'string' then
        if not (skip and skip[c.content.text]) then
          table.insert(out, c.content.text)
        end
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
  -- Content with no status is a note for the card (what the user's hooks
  -- did to the call): shown at once, even on a card whose result stays
  -- quiet, and not again with the result.
  if u.status == nil and u.content then
    t.noted = t.noted or {}
    local text = content_text(u.content, t.noted)
    for _, c in ipairs(u.content) do
      if type(c) == 'table' and type(c.content) == 'table' and type(c.content.text) == 'string' then
        t.noted[c.content.text] = true
      end
    end
    if text ~= '' then
      local shown = {}
      for _, l in ipairs(split_lines((text:gsub('\n+$', '')))) do
        table.insert(shown, '    ' .. l)
      end
      if self.last ~= 'tool' then
        self:block('tool', true)
      end
      self:append(shown)
      self.last = 'tool'
    end
    return
  end
  -- A plan update's result only restates the plan shown above, and an
  -- edit's its diff, which cline/diff shows (once).
  local quiet = u.status == 'completed' and (t.kind == 'think' or t.kind == 'edit' or t.kind == 'delete' or t.kind == 'move')
  if (u.status == 'completed' or u.status == 'failed') and u.content and not quiet then
    local text = content_text(u.content, t.noted)
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
    table.insert(lines, string.format('  %s %s', plan_marks[e.status] or '[ ]', visible(e.content, 'exact')))
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

-- clear empties the transcript (before a loaded session is replayed);
-- the prompt area keeps its text.
function View:clear()
  self:ensure()
  local tail = self:tail()
  self:raw(function(buf)
    api.nvim_buf_set_lines(buf, 0, tail, false, {})
    for _, m in ipairs(api.nvim_buf_get_extmarks(buf, ns, 0, -1, {})) do
      if m[1] ~= self.sep and m[1] ~= self.help_mark then
        api.nvim_buf_del_extmark(buf, ns, m[1])
      end
    end
  end)
  self.last, self.tools = nil, {}
end

return M
