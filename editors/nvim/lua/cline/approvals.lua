-- Approvals (cline/approvalRequest): one question on screen at a time,
-- in the cline://approval buffer that shows its diff or command. It opens
-- in a split without taking the cursor, so nothing typed meanwhile can
-- answer it; it is answered only by a key pressed in that buffer after
-- the user went there (:ClineApprove, or any window command): a allow,
-- A always allow, r reject, R reject with feedback (vim.ui.input), q later
-- (close it; :ClineApprove brings it back), d to take some of an edit's
-- hunks in vimdiff (hunks.lua). There is no default answer.
-- The answer goes back as the request cline/approvalResponse.
local config = require('cline.config')
local scratch = require('cline.scratch')
local visible = require('cline.safe').visible

local M = {}

local queue = {} -- requests waiting for the one on screen
local active = nil -- the request on screen

local default_options = {
  { optionId = 'allow_once', name = 'Allow', kind = 'allow_once' },
  { optionId = 'allow_always', name = 'Always allow', kind = 'allow_always' },
  { optionId = 'reject_once', name = 'Reject', kind = 'reject_once' },
  { optionId = 'reject_always', name = 'Always reject', kind = 'reject_always' },
}

local said = {
  allow_once = 'allowed',
  allow_always = 'always allowed',
  reject_once = 'rejected',
  reject_always = 'always rejected',
}

local function title_of(req)
  local tc = type(req.toolCall) == 'table' and req.toolCall or {}
  return visible((type(tc.title) == 'string' and tc.title ~= '' and tc.title) or tc.toolCallId or 'a tool call', 'exact')
end

-- preview_lines is what the user reads before answering.
local function preview_lines(req)
  local tc = type(req.toolCall) == 'table' and req.toolCall or {}
  local lines = { '# Cline asks: ' .. title_of(req) }
  if type(tc.kind) == 'string' then
    table.insert(lines, '# kind: ' .. visible(tc.kind, 'exact'))
  end
  for _, loc in ipairs(type(tc.locations) == 'table' and tc.locations or {}) do
    if type(loc) == 'table' and loc.path then
      table.insert(lines, '# file: ' .. visible(loc.path, 'exact') .. (loc.line and (':' .. visible(loc.line, 'exact')) or ''))
    end
  end
  if type(req.command) == 'string' and req.command ~= '' then
    -- The command is shown exactly: nothing in it hidden, and a note
    -- when it held what would not have shown.
    table.insert(lines, '')
    local hid = false
    for _, l in ipairs(vim.split(req.command, '\n', { plain = true })) do
      local shown = visible(l, 'exact')
      hid = hid or shown ~= l
      table.insert(lines, '$ ' .. shown)
    end
    if hid then
      table.insert(lines, '# the command holds characters that do not show; they are written above as \\x.., \\u.., \\t')
    end
  end
  if type(req.diff) == 'string' and req.diff ~= '' then
    table.insert(lines, '')
    vim.list_extend(lines, vim.split((req.diff:gsub('\n$', '')), '\n', { plain = true }))
  elseif req.command == nil and tc.rawInput ~= nil then
    local ok, json = pcall(vim.json.encode, tc.rawInput)
    if ok then
      table.insert(lines, '')
      table.insert(lines, json)
    end
  end
  return lines
end

M.preview_lines = preview_lines

local next_item

local function finish(item, outcome, feedback, kept)
  local req, ctx = item.req, item.ctx
  if item.done then
    return
  end
  item.done = true
  if ctx.preview_win then
    scratch.close(ctx.preview_win)
  end
  local words
  if outcome.outcome == 'selected' then
    words = said[outcome.optionId] or outcome.optionId
    if kept then
      words = 'applied in part (the hunks taken by hand)'
    elseif feedback and feedback ~= '' then
      words = words .. ': ' .. feedback
    end
  else
    words = 'dismissed'
  end
  if req.stale then
    words = words .. ' (too late: the turn was cancelled)'
  else
    local params = { approvalId = req.approvalId, outcome = outcome }
    if feedback and feedback ~= '' then
      params.feedback = feedback
    end
    params.keptText = kept
    ctx.respond(params)
  end
  if ctx.decided then
    ctx.decided(words)
  end
  if active == item then
    active = nil
  end
  vim.schedule(next_item)
end

-- keys are the approval buffer's answers.
local keys = {
  { 'a', 'allow_once', 'allow' },
  { 'A', 'allow_always', 'always allow' },
  { 'r', 'reject_once', 'reject' },
  { 'R', 'reject_once', 'reject with feedback', true },
}

-- help_lines are the keys, in two lines that fit a narrow window.
local function help_lines()
  local parts = {}
  for _, k in ipairs(keys) do
    table.insert(parts, k[1] .. ' ' .. k[3])
  end
  return { '# ' .. table.concat(parts, ' · '), '# q later · d pick hunks (vimdiff) · :ClineApprove comes here' }
end

-- option_of is the request's option of kind or, when it offers none, the
-- other of the same answer: r finds reject_always in a folder's trust
-- question, which offers only "Don't trust" and "Trust"; A finds
-- allow_once. Never a remembered allow for a: that takes A.
local function option_of(req, kind)
  local options = type(req.options) == 'table' and #req.options > 0 and req.options or default_options
  local other = ({ allow_always = 'allow_once', reject_once = 'reject_always', reject_always = 'reject_once' })[kind]
  for _, k in ipairs({ kind, other }) do
    for _, o in ipairs(options) do
      if (o.kind or o.optionId) == k then
        return o
      end
    end
  end
end

local approval_buf

-- open_view opens the approval buffer: with preview_split when set, else
-- above the session buffer's window when one shows it (the user's own
-- windows keep their size), else at the top. The cursor stays.
function M.open_view(buf, height)
  local split = config.options.preview_split
  if split then
    return scratch.show(buf, split, height)
  end
  local session
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    local ok, r = pcall(vim.api.nvim_buf_get_var, vim.api.nvim_win_get_buf(win), 'cline_root')
    if ok and r and vim.bo[vim.api.nvim_win_get_buf(win)].filetype == 'cline' then
      session = win
      break
    end
  end
  if not session then
    return scratch.show(buf, 'topleft split', height)
  end
  local prev = vim.api.nvim_get_current_win()
  vim.api.nvim_set_current_win(session)
  local ok, win = pcall(scratch.show, buf, 'aboveleft split', height)
  if vim.api.nvim_win_is_valid(prev) then
    vim.api.nvim_set_current_win(prev)
  end
  if not ok then
    error(win, 0)
  end
  return win
end

-- show opens the approval view of the active request without moving the
-- cursor; with focus it moves the cursor there (:ClineApprove).
local function show(focus)
  if not active then
    return false
  end
  local buf = approval_buf
  local win = vim.fn.win_findbuf(buf)[1]
  if not win then
    local ok, w = pcall(M.open_view, buf, math.min(vim.api.nvim_buf_line_count(buf) + 1, 20))
    if not ok then
      return false
    end
    win = w
  elseif not focus and vim.api.nvim_get_current_win() == win then
    -- The user sits in the view of an earlier approval: step out, so
    -- that keys meant for that one do not answer this one.
    vim.cmd('wincmd p')
  end
  active.ctx.preview_win = win
  if focus then
    vim.api.nvim_set_current_win(win)
    active.entered = true
  end
  return true
end

M.show = show

local function answer(kind, with_feedback)
  local item = active
  if not item or item.done then
    return
  end
  -- Only keys pressed after the cursor entered the view count.
  if not item.entered then
    return
  end
  local o = option_of(item.req, kind)
  if not o then
    vim.notify('cline: this approval does not offer ' .. kind, vim.log.levels.WARN)
    return
  end
  local outcome = { outcome = 'selected', optionId = o.optionId }
  if with_feedback then
    vim.ui.input({ prompt = 'Feedback for Cline (optional): ' }, function(text)
      finish(item, outcome, text)
    end)
  else
    finish(item, outcome)
  end
end

-- pick_hunks opens the active edit in vimdiff to take some of its hunks
-- (the hunks module); its answer comes back here.
local function pick_hunks()
  local item = active
  if not item or item.done or not item.entered then
    return
  end
  local ok, why = require('cline.hunks').open(item.req, item.ctx.root, function(kind, feedback, kept)
    if item.done then
      return
    end
    local o = option_of(item.req, kind)
    if not o then
      vim.notify('cline: this approval does not offer ' .. kind, vim.log.levels.WARN)
      return
    end
    finish(item, { outcome = 'selected', optionId = o.optionId }, feedback, kept)
  end)
  if not ok then
    vim.notify('cline: ' .. tostring(why), vim.log.levels.WARN)
  end
end

local function ensure_buffer()
  if approval_buf and vim.api.nvim_buf_is_valid(approval_buf) then
    return approval_buf
  end
  approval_buf = scratch.buffer('cline://approval', 'diff')
  for _, k in ipairs(keys) do
    vim.keymap.set('n', k[1], function()
      answer(k[2], k[4])
    end, { buffer = approval_buf, nowait = true, silent = true, desc = 'Cline: ' .. k[3] })
  end
  vim.keymap.set('n', 'd', pick_hunks, { buffer = approval_buf, nowait = true, silent = true, desc = 'Cline: pick hunks in vimdiff' })
  vim.keymap.set('n', 'q', function()
    if active then
      active.ctx.preview_win = nil
    end
    vim.cmd('close')
  end, { buffer = approval_buf, nowait = true, silent = true, desc = 'Cline: answer later' })
  vim.api.nvim_create_autocmd('BufEnter', {
    buffer = approval_buf,
    callback = function()
      if active then
        active.entered = true
      end
    end,
  })
  return approval_buf
end

local function ask(item)
  local req = item.req
  active = item
  local buf = ensure_buffer()
  local lines = preview_lines(req)
  local help = help_lines()
  table.insert(lines, 2, help[1])
  table.insert(lines, 3, help[2])
  scratch.set(buf, lines)
  if vim.api.nvim_get_current_buf() == buf then
    vim.cmd('wincmd p')
  end
  show(false)
  vim.notify('cline: approval needed: ' .. title_of(req) .. ' (:ClineApprove, then a/A/r/R)', vim.log.levels.WARN)
end

next_item = function()
  if active or #queue == 0 then
    return
  end
  ask(table.remove(queue, 1))
end

-- request takes a cline/approvalRequest. ctx.respond(params) sends the
-- answer; ctx.decided(words), when set, reports what the user chose.
function M.request(req, ctx)
  table.insert(queue, { req = req, ctx = ctx })
  vim.schedule(next_item)
end

-- cancel_session forgets the queued requests of a cancelled session (the
-- daemon resolves them itself) and marks the one on screen as stale.
function M.cancel_session(session_id, on_dropped)
  local kept = {}
  for _, item in ipairs(queue) do
    if item.req.sessionId == session_id then
      if on_dropped then
        on_dropped(item)
      end
    else
      table.insert(kept, item)
    end
  end
  queue = kept
  if active and active.req.sessionId == session_id then
    -- The daemon resolved it: close its view, send nothing.
    active.req.stale = true
    finish(active, { outcome = 'cancelled' })
  end
end

-- pending reports how many approvals wait, the one on screen included.
function M.pending()
  return #queue + (active and 1 or 0)
end

return M
