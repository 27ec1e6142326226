-- Approvals (PROTOCOL.md §4, cline/approvalRequest): one question on
-- screen at a time, its diff or command shown in a preview split first,
-- then Allow / Always allow / Reject / Always reject through
-- vim.ui.select, with feedback through vim.ui.input on a rejection. The
-- answer goes back as the request cline/approvalResponse.
local config = require('cline.config')
local scratch = require('cline.scratch')

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
  return (type(tc.title) == 'string' and tc.title ~= '' and tc.title) or tc.toolCallId or 'a tool call'
end

-- preview_lines is what the user reads before answering.
local function preview_lines(req)
  local tc = type(req.toolCall) == 'table' and req.toolCall or {}
  local lines = { '# Cline asks: ' .. title_of(req) }
  if type(tc.kind) == 'string' then
    table.insert(lines, '# kind: ' .. tc.kind)
  end
  for _, loc in ipairs(type(tc.locations) == 'table' and tc.locations or {}) do
    if type(loc) == 'table' and loc.path then
      table.insert(lines, '# file: ' .. loc.path .. (loc.line and (':' .. loc.line) or ''))
    end
  end
  if type(req.command) == 'string' and req.command ~= '' then
    table.insert(lines, '')
    for _, l in ipairs(vim.split(req.command, '\n', { plain = true })) do
      table.insert(lines, '$ ' .. l)
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

local function finish(item, outcome, feedback)
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
    if feedback and feedback ~= '' then
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

local function ask(item)
  local req, ctx = item.req, item.ctx
  active = item
  local buf = scratch.buffer('cline://approval', 'diff')
  scratch.set(buf, preview_lines(req))
  if config.options.preview_split then
    local ok, win = pcall(scratch.show, buf, config.options.preview_split, math.min(#preview_lines(req) + 1, 20))
    if ok then
      ctx.preview_win = win
    end
  end
  vim.cmd('redraw')
  local options = type(req.options) == 'table' and #req.options > 0 and req.options or default_options
  vim.ui.select(options, {
    prompt = 'Cline: ' .. title_of(req),
    kind = 'cline_approval',
    format_item = function(o)
      return o.name or o.optionId
    end,
  }, function(choice)
    if not choice then
      finish(item, { outcome = 'cancelled' })
      return
    end
    local outcome = { outcome = 'selected', optionId = choice.optionId }
    if (choice.kind or choice.optionId or ''):match('^reject') then
      vim.ui.input({ prompt = 'Feedback for Cline (optional): ' }, function(text)
        finish(item, outcome, text)
      end)
    else
      finish(item, outcome)
    end
  end)
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
    -- Its answer would be refused; a picker that never answers must not
    -- hold up the approvals of other sessions.
    active.req.stale = true
    active = nil
  end
end

-- pending reports how many approvals wait, the one on screen included.
function M.pending()
  return #queue + (active and 1 or 0)
end

return M
