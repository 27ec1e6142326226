-- cline.nvim: the Neovim client of cline-ls.
--
-- One cline-ls client per workspace root, attached to the root's file
-- buffers so that the daemon mirrors them (the agent reads and edits the
-- unsaved text). One agent session per root, streamed into a scratch
-- buffer. Requests are asynchronous: session/prompt answers only when the
-- turn ends, and the editor stays usable meanwhile.
local compat = require('cline.compat')
local config = require('cline.config')
local view = require('cline.view')
local approvals = require('cline.approvals')
local diffs = require('cline.diffs')
local questions = require('cline.questions')
local mentions = require('cline.mentions')
local paths = require('cline.paths')
local scratch = require('cline.scratch')
local diagnostics = require('cline.diagnostics')

local api = vim.api
local uv = compat.uv

local M = {}

-- roots maps a root folder to its state: client_id, ready, waiting (calls
-- made before the client initialized), session_id, mode, busy, usage
-- (the last usage_update's turn and session totals and context use),
-- previewed (tool calls whose diff an approval showed), view.
local roots = {}
-- by_session maps a session id to its root's state.
local by_session = {}
-- by_client maps a client id to its root's state.
local by_client = {}

local did_setup = false
local turn_done -- defined with the sessions below

-- Messages carry the daemon's text: a carriage return in one would draw
-- over it.
local function notify(msg, level)
  vim.notify('cline: ' .. require('cline.safe').visible(msg), level or vim.log.levels.INFO)
end

-- How to choose a model in Neovim, added to the daemon's "no model" error.
local no_model_hint = '\nIn Neovim: require("cline").setup({ settings = { provider = '
  .. '{ name = "anthropic", model = "claude-sonnet-4-5", apiKeyEnv = "ANTHROPIC_API_KEY" } } }), '
  .. 'or set ANTHROPIC_API_KEY (or OPENAI_API_KEY, GEMINI_API_KEY) in the environment Neovim starts from.'

local function err_text(err)
  local msg
  if type(err) == 'table' then
    msg = err.message or vim.inspect(err)
  else
    msg = tostring(err)
  end
  if msg:find('no model is configured', 1, true) then
    msg = msg .. no_model_hint
  end
  return msg
end

-- Roots ----------------------------------------------------------------

local function normalize(path)
  path = vim.fn.fnamemodify(path, ':p')
  if #path > 1 then
    path = path:gsub('/+$', '')
  end
  return path
end

local function is_dir(path)
  local st = uv.fs_stat(path)
  return st and st.type == 'directory' or false
end

-- find_root walks up from dir to the first folder with a root marker.
local function find_root(dir)
  local markers = config.options.root_markers or {}
  local cur = dir
  while cur and cur ~= '' do
    for _, m in ipairs(markers) do
      if uv.fs_stat(cur .. '/' .. m) then
        return cur
      end
    end
    local parent = vim.fn.fnamemodify(cur, ':h')
    if parent == cur then
      break
    end
    cur = parent
  end
  return nil
end

-- root_for returns the workspace root for a buffer: its session's root
-- for a session buffer, else config.root_dir, else the nearest marked
-- folder, else the current directory.
function M.root_for(buf)
  buf = (buf == nil or buf == 0) and api.nvim_get_current_buf() or buf
  local ok, r = pcall(api.nvim_buf_get_var, buf, 'cline_root')
  if ok and type(r) == 'string' then
    return r
  end
  local rd = config.options.root_dir
  if type(rd) == 'function' then
    rd = rd(buf)
  end
  if type(rd) == 'string' and rd ~= '' then
    return normalize(rd)
  end
  local name = api.nvim_buf_get_name(buf)
  local cwd = normalize(vim.fn.getcwd())
  if name ~= '' and vim.bo[buf].buftype == '' and not name:match('^%a[%w+.-]*://') then
    local dir = vim.fn.fnamemodify(name, ':p:h')
    if is_dir(dir) then
      return find_root(dir) or cwd
    end
  end
  return find_root(cwd) or cwd
end


-- Buffers --------------------------------------------------------------

-- attachable reports whether a buffer is a file the daemon should mirror.
local function attachable(buf)
  if not api.nvim_buf_is_valid(buf) or not api.nvim_buf_is_loaded(buf) then
    return false
  end
  if vim.bo[buf].buftype ~= '' then
    return false
  end
  local name = api.nvim_buf_get_name(buf)
  return name ~= '' and not name:match('^%a[%w+.-]*://')
end

local function attach(st, buf)
  if not st.client_id or not attachable(buf) then
    return
  end
  if paths.inside(normalize(api.nvim_buf_get_name(buf)), st.root) then
    vim.lsp.buf_attach_client(buf, st.client_id)
  end
end

-- attach_all attaches every loaded file buffer under the root.
local function attach_all(st)
  for _, buf in ipairs(api.nvim_list_bufs()) do
    attach(st, buf)
  end
end

-- State ----------------------------------------------------------------

local function state(root)
  local st = roots[root]
  if not st then
    st = { root = root, waiting = {}, usage = {}, previewed = {} }
    roots[root] = st
  end
  if not st.view then
    st.view = view.new(root)
  end
  return st
end

local function client_of(st)
  if not st.client_id then
    return nil
  end
  local c = vim.lsp.get_client_by_id(st.client_id)
  if c and compat.is_stopped(c) then
    return nil
  end
  return c
end

local function forget_client(st)
  if st.client_id then
    by_client[st.client_id] = nil
  end
  if st.session_id then
    by_session[st.session_id] = nil
  end
  st.client_id, st.ready, st.session_id, st.mode = nil, false, nil, nil
  st.waiting = {}
end

-- send_diagnostics sends buf's diagnostics to the root's daemon when buf
-- is mirrored there (cline/diagnostics).
local function send_diagnostics(st, buf)
  local c = client_of(st)
  if not (c and st.ready and diagnostics.available()) or not api.nvim_buf_is_valid(buf) then
    return
  end
  if not vim.lsp.buf_is_attached(buf, st.client_id) then
    return
  end
  compat.notify(c, 'cline/diagnostics', diagnostics.report(buf))
end

-- send_all_diagnostics sends every mirrored buffer's diagnostics, when a
-- session starts or resumes: what the daemon compares an edit's with.
local function send_all_diagnostics(st)
  for _, buf in ipairs(api.nvim_list_bufs()) do
    send_diagnostics(st, buf)
  end
end

-- Notification and request handlers ------------------------------------

local function state_for_session(id, ctx)
  local st = id and by_session[id]
  if st then
    return st
  end
  return ctx and by_client[ctx.client_id]
end

-- waiting shows what the running turn waits for under the transcript,
-- with the seconds since the turn began.
local function waiting(st, what)
  st.waiting_for = what
  if not st.busy then
    return st.view:set_waiting(nil)
  end
  local secs = math.floor((uv.now() - (st.started or uv.now())) / 1000)
  st.view:set_waiting(string.format('%s (%ds)', what, secs))
end

local function on_update(st, u)
  local v = st.view
  local kind = u.sessionUpdate
  if st.busy then
    if kind == 'agent_message_chunk' then
      waiting(st, 'writing')
    elseif kind == 'agent_thought_chunk' then
      waiting(st, 'thinking')
    elseif kind == 'tool_call_update' and u.status == 'in_progress' then
      waiting(st, 'running ' .. tostring(u.title or (v.tools[u.toolCallId or ''] or {}).title or 'a tool'))
    elseif kind == 'tool_call_update' then
      waiting(st, 'waiting for the model')
    end
  end
  if kind == 'agent_message_chunk' then
    local c = u.content or {}
    if type(c.text) == 'string' then
      v:stream('agent', c.text)
    end
  elseif kind == 'agent_thought_chunk' then
    local c = u.content or {}
    if type(c.text) == 'string' then
      v:stream('thought', c.text, '│ ')
    end
  elseif kind == 'user_message_chunk' then
    local c = u.content or {}
    if type(c.text) == 'string' then
      v:user(c.text)
    end
  elseif kind == 'tool_call' then
    v:tool_call(u)
  elseif kind == 'tool_call_update' then
    v:tool_update(u)
  elseif kind == 'plan' then
    v:plan_update(u.entries)
  elseif kind == 'current_mode_update' then
    if u.currentModeId ~= st.mode or not st.mode_shown then
      st.mode = u.currentModeId
      st.mode_shown = true
      v:note('-- mode: ' .. tostring(u.currentModeId) .. ' --')
    end
  elseif kind == 'compaction' then
    -- The older turns were replaced to fit the context window; the
    -- session file keeps them.
    local kept = type(u.historyFile) == 'string' and u.historyFile ~= '' and ('; the replaced turns stay in ' .. u.historyFile) or ''
    v:note(string.format('-- context compacted: about %s -> %s tokens%s --', tostring(u.before), tostring(u.after), kept))
  elseif kind == 'usage_update' then
    -- The daemon sends the turn's and the session's totals with each
    -- reply's counts; those are what is shown, so that every client
    -- shows the same figures.
    local us = st.usage
    if type(u.turn) == 'table' then
      us.turn = u.turn
    end
    if type(u.session) == 'table' then
      us.session = u.session
    end
    if type(u.context) == 'table' then
      us.context = u.context
    end
  end
end

local handlers = {}

handlers['session/update'] = function(_, params, ctx)
  if type(params) ~= 'table' or type(params.update) ~= 'table' then
    return
  end
  local st = state_for_session(params.sessionId, ctx)
  if st and not (st.quiet and st.quiet == params.sessionId) then
    on_update(st, params.update)
  end
end

handlers['cline/approvalRequest'] = function(_, params, ctx)
  if type(params) ~= 'table' or not params.approvalId then
    return
  end
  local st = state_for_session(params.sessionId, ctx)
  if not st then
    return
  end
  local tc = type(params.toolCall) == 'table' and params.toolCall or {}
  local title = tc.title or 'a tool call'
  if tc.toolCallId and type(params.diff) == 'string' and params.diff ~= '' then
    st.previewed[tc.toolCallId] = true
  end
  local mark = st.view:marker('tool', '[approval] ' .. tostring(title) .. ' — waiting')
  waiting(st, 'waiting for your approval (:ClineApprove)')
  approvals.request(params, {
    root = st.root,
    respond = function(answer)
      local c = client_of(st)
      if not c then
        return
      end
      compat.request(c, 'cline/approvalResponse', answer, function(err)
        -- An approval the daemon already resolved (the turn was
        -- cancelled) is refused with -32602; that is not news.
        if err and not (type(err) == 'table' and err.code == -32602) then
          notify('approval response failed: ' .. err_text(err), vim.log.levels.WARN)
        end
      end)
    end,
    decided = function(words)
      st.view:set_line(mark, '[approval] ' .. tostring(title) .. ' — ' .. words)
      if require('cline.approvals').pending() <= 1 then
        waiting(st, 'waiting for the model')
      end
    end,
  })
  if st.view.buf then
    st.view:show()
  end
end

handlers['cline/diff'] = function(_, params, ctx)
  if type(params) ~= 'table' then
    return
  end
  local st = state_for_session(params.sessionId, ctx)
  if st then
    diffs.show(params, st.root, st.view, params.toolCallId and st.previewed[params.toolCallId])
  end
end

handlers['window/showDocument'] = require('cline.browse').show_document

handlers['cline/askQuestion'] = function(_, params, ctx)
  params = type(params) == 'table' and params or {}
  local st = state_for_session(params.sessionId, ctx)
  local mark
  if st then
    mark = st.view:marker('tool', '[question] ' .. tostring(params.question) .. ' — waiting')
  end
  local answer = questions.answer(params)
  if st and mark then
    st.view:set_line(mark, '[question] ' .. tostring(params.question) .. ' — ' .. (answer and ('answered: ' .. answer) or 'dismissed'))
  end
  return { answer = answer or vim.NIL }
end

-- The stock applyEdit handler prints the edit's label ("cline-ls") on
-- Neovim 0.7; the edit itself is all the user needs to see.
handlers['workspace/applyEdit'] = function(err, params, ctx, cfg)
  local default = vim.lsp.handlers['workspace/applyEdit']
  if type(params) == 'table' and params.label then
    params = vim.tbl_extend('force', {}, params)
    params.label = nil
  end
  return default(err, params, ctx, cfg)
end

M.handlers = handlers

-- Clients --------------------------------------------------------------

local function capabilities()
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps.experimental = type(caps.experimental) == 'table' and caps.experimental or {}
  caps.experimental.cline = { approvals = true, diffs = true, questions = true, diagnostics = diagnostics.available() }
  caps.window = caps.window or {}
  caps.window.showDocument = { support = true }
  if config.options.capabilities then
    caps = vim.tbl_deep_extend('force', caps, config.options.capabilities)
  end
  return caps
end

-- ensure_client starts the root's client (or reuses the running one) and
-- calls fn(client) once it is initialized.
local function ensure_client(st, fn)
  local c = client_of(st)
  if c and st.ready then
    return fn(c)
  end
  if c then
    table.insert(st.waiting, fn) -- starting: on_init runs it
    return
  end
  forget_client(st)
  st.waiting = { fn }
  local opts = config.options
  local settings = opts.settings
  if type(settings) ~= 'table' or next(settings) == nil then
    settings = nil
  end
  local cfg = {
    name = 'cline-ls',
    cmd = opts.cmd,
    cmd_env = opts.cmd_env,
    root_dir = st.root,
    workspace_folders = { { uri = vim.uri_from_fname(st.root), name = vim.fn.fnamemodify(st.root, ':t') } },
    capabilities = capabilities(),
    handlers = handlers,
    init_options = settings,
    settings = settings,
    flags = opts.flags,
    on_init = function(client)
      st.ready = true
      local waiting = st.waiting
      st.waiting = {}
      for _, w in ipairs(waiting) do
        local ok, e = pcall(w, client)
        if not ok then
          notify(tostring(e), vim.log.levels.ERROR)
        end
      end
    end,
    on_exit = function(code, signal, client_id)
      vim.schedule(function()
        if st.client_id ~= client_id then
          return
        end
        -- A daemon that died (not stopped by :ClineStop) leaves its
        -- session to be offered for resuming when the next one starts.
        local lost = not st.stopping and st.session_id
        st.stopping = nil
        forget_client(st)
        if lost then
          st.lost = lost
          st.view:note(string.format('-- cline-ls exited (code %s, signal %s); the next message offers to resume session %s --',
            tostring(code), tostring(signal), lost))
        elseif st.busy or (code ~= 0 and code ~= nil) then
          st.view:note(string.format('-- cline-ls exited (code %s, signal %s) --', tostring(code), tostring(signal)))
        end
        if st.busy then
          turn_done(st, 'exited')
        end
      end)
    end,
  }
  local ok, id = pcall(compat.start_client, cfg)
  if not ok or not id then
    st.waiting = {}
    notify('could not start ' .. table.concat(opts.cmd or {}, ' ') .. (ok and '' or (': ' .. tostring(id))), vim.log.levels.ERROR)
    return
  end
  st.client_id = id
  by_client[id] = st
  attach_all(st)
end

-- request sends a request and calls cb(err, result) on the main loop.
local function request(st, method, params, cb)
  ensure_client(st, function(client)
    local ok = compat.request(client, method, params, function(err, result)
      cb(err, result)
    end)
    if not ok then
      cb({ message = 'cline-ls is not running' })
    end
  end)
end

-- Sessions -------------------------------------------------------------

local ensure_session, offer_resume, offer_held

-- held_by returns the process of the daemon that holds a session when err
-- is the refusal of one (-32002 {heldBy}, PROTOCOL §12; 0 when unknown),
-- else nil.
local function held_by(err)
  if type(err) == 'table' and err.code == -32002 then
    local d = type(err.data) == 'table' and err.data or {}
    return tonumber(d.heldBy) or 0
  end
end

-- resume_quietly loads session id into the new daemon for a root whose
-- daemon died: the session buffer shows its conversation already, so
-- the replay is not drawn again (st.quiet); its totals are kept.
local function resume_quietly(st, id, fn, fail)
  st.quiet = id
  by_session[id] = st
  request(st, 'session/load', { sessionId = id, cwd = st.root }, function(err, result)
    st.quiet = nil
    if err then
      by_session[id] = nil
      local pid = held_by(err)
      if not pid then
        local msg = 'session/load failed: ' .. err_text(err)
        st.view:note('[error] ' .. msg)
        notify(msg, vim.log.levels.ERROR)
      end
      if fail then
        fail()
      end
      if pid then
        offer_held(st, id, pid)
      end
      return
    end
    st.session_id = id
    if type(result) == 'table' and type(result.modes) == 'table' and result.modes.currentModeId then
      st.mode = result.modes.currentModeId
    end
    st.mode_shown = true
    st.view:note(string.format('-- resumed session %s, mode: %s --', id, tostring(st.mode)))
    send_all_diagnostics(st)
    fn(id)
  end)
end

-- offer_resume asks, once the root's daemon died, whether the next
-- message goes on with the session it had (loaded into the new daemon)
-- or to a new session, whose totals start from nothing.
function offer_resume(st, mode, fn, fail)
  local id = st.lost
  st.lost = nil
  local resume = 'Resume session ' .. id .. ' (its conversation goes on)'
  local fresh = 'Start a new session'
  vim.ui.select({ resume, fresh }, {
    prompt = 'cline-ls stopped. Resume the session it had?',
    kind = 'cline_resume',
  }, function(choice)
    if choice == resume then
      return resume_quietly(st, id, fn, fail)
    end
    st.usage, st.previewed, st.mode, st.mode_shown = {}, {}, nil, false
    st.view:note('-- new session --')
    ensure_session(st, mode, fn, fail)
  end)
end

-- ensure_session creates the root's session when it has none, then calls
-- fn(session_id).
function ensure_session(st, mode, fn, fail)
  if st.session_id and client_of(st) then
    return fn(st.session_id)
  end
  if st.lost then
    return offer_resume(st, mode, fn, fail)
  end
  request(st, 'session/new', { cwd = st.root, mode = mode }, function(err, result)
    if err or type(result) ~= 'table' or not result.sessionId then
      local msg = 'session/new failed: ' .. (err and err_text(err) or 'no sessionId')
      st.view:note('[error] ' .. msg)
      notify(msg, vim.log.levels.ERROR)
      if fail then
        fail()
      end
      return
    end
    st.session_id = result.sessionId
    by_session[result.sessionId] = st
    if type(result.modes) == 'table' and result.modes.currentModeId then
      st.mode = result.modes.currentModeId
    end
    st.mode_shown = true
    st.view:note(string.format('-- session %s, mode: %s --', result.sessionId, tostring(st.mode)))
    send_all_diagnostics(st)
    fn(st.session_id)
  end)
end

-- set_mode switches the session to mode (when it is not there already).
local function set_mode(st, mode, fn, fail)
  if st.mode == mode then
    return fn and fn()
  end
  request(st, 'session/set_mode', { sessionId = st.session_id, modeId = mode }, function(err)
    if err then
      local msg = 'session/set_mode failed: ' .. err_text(err)
      st.view:note('[error] ' .. msg)
      notify(msg, vim.log.levels.ERROR)
      if fail then
        fail()
      end
      return
    end
    if st.mode ~= mode then
      st.mode = mode
      st.view:note('-- mode: ' .. mode .. ' --')
    end
    if fn then
      fn()
    end
  end)
end

-- Usage ------------------------------------------------------------------

-- count writes a token count short: 950, 9.5k, 12k, 1.2M.
local function count(n)
  n = tonumber(n) or 0
  if n >= 1e6 then
    return string.format('%.1fM', n / 1e6)
  elseif n >= 1e4 then
    return string.format('%.0fk', n / 1e3)
  elseif n >= 1e3 then
    return string.format('%.1fk', n / 1e3)
  end
  return tostring(math.floor(n))
end

local function total(t)
  if type(t) ~= 'table' then
    return nil
  end
  local out = string.format('%s in / %s out', count(t.inputTokens), count(t.outputTokens))
  if tonumber(t.costUsd) then
    out = out .. string.format(' $%.4f', tonumber(t.costUsd))
  end
  return out
end

-- context_use is "used/size (pct%)" of the model's context window.
local function context_use(c)
  if type(c) ~= 'table' or not tonumber(c.used) then
    return nil
  end
  local size = tonumber(c.size) or 0
  if size <= 0 then
    return count(c.used)
  end
  return string.format('%s/%s (%d%%)', count(c.used), count(size), math.floor(100 * c.used / size + 0.5))
end

-- usage_text is the end-of-turn line: the turn's and the session's
-- totals and the context in use.
function M.usage_text(us)
  local parts = {}
  local t, s = total(us.turn), total(us.session)
  if t then
    table.insert(parts, 'turn ' .. t)
  end
  if s then
    table.insert(parts, 'session ' .. s)
  end
  local c = context_use(us.context)
  if c then
    table.insert(parts, 'context ' .. c)
  end
  return table.concat(parts, ' · ')
end

local function stop_timer(st)
  if st.timer then
    st.timer:stop()
    st.timer:close()
    st.timer = nil
  end
end

function turn_done(st, stop)
  st.busy = false
  stop_timer(st)
  st.view:set_waiting(nil)
  local usage = M.usage_text(st.usage)
  st.view:note(string.format('-- %s%s --', stop, usage ~= '' and (' · ' .. usage) or ''))
  st.last_stop = stop
  pcall(vim.cmd, 'doautocmd <nomodeline> User ClineTurnDone')
end

local function current()
  M.setup_once()
  return state(M.root_for(0))
end

-- prompt sends text to the current root's session, in mode when given
-- (else the session's mode). Mentions (@path, @path:3-9) go with it as
-- resource blocks.
function M.prompt(text, mode)
  local st = current()
  if type(text) ~= 'string' or text:match('^%s*$') then
    notify('nothing to send', vim.log.levels.WARN)
    return false
  end
  if st.busy then
    notify('a turn is still running; :ClineCancel stops it', vim.log.levels.WARN)
    return false
  end
  if st.read_only then
    notify('session ' .. st.read_only .. ' is open read-only here (another editor holds it): '
      .. ':ClineFork continues it here as a copy, :ClineNew starts a new session', vim.log.levels.WARN)
    return false
  end
  st.busy = true
  st.usage.turn = nil
  st.started = uv.now()
  st.view:show()
  st.view:user(text)
  waiting(st, 'waiting for the model')
  stop_timer(st)
  st.timer = uv.new_timer()
  st.timer:start(1000, 1000, vim.schedule_wrap(function()
    if st.busy and st.waiting_for then
      waiting(st, st.waiting_for)
    end
  end))
  local function fail()
    turn_done(st, 'error')
  end
  ensure_session(st, mode, function(id)
    set_mode(st, mode or st.mode, function()
      local params = { sessionId = id, prompt = mentions.blocks(text, st.root) }
      request(st, 'session/prompt', params, function(err, result)
        local pid = held_by(err)
        if pid then
          -- Another daemon took the session since (this one had let it
          -- go, idle): the text stays in the prompt area.
          fail()
          st.view:set_input(text)
          return offer_held(st, id, pid)
        end
        if err then
          st.view:note('[error] ' .. err_text(err))
          notify(err_text(err), vim.log.levels.ERROR)
          return fail()
        end
        turn_done(st, type(result) == 'table' and result.stopReason or 'end_turn')
      end)
    end, fail)
  end, fail)
  -- A failure before the prompt was sent leaves the turn not running.
  if not st.client_id then
    st.busy = false
    stop_timer(st)
    st.view:set_waiting(nil)
  end
  return true
end

-- send sends the prompt area of the session buffer (the current one, or
-- the current root's) and empties it.
function M.send()
  local st = current()
  local text = st.view:input()
  if text:match('^%s*$') then
    notify('the prompt area is empty: write below the line, then <CR>', vim.log.levels.WARN)
    return
  end
  if M.prompt(text) then
    st.view:set_input('')
  end
end

-- mention adds a mention to the prompt area of the current root's
-- session buffer: of lines first..last of the current file when given
-- (a visual selection), else of the file itself, or of path.
function M.mention(path, first, last)
  local st = current()
  if not path or path == '' then
    path = vim.api.nvim_buf_get_name(0)
    if path == '' or vim.bo.buftype ~= '' then
      notify('no file to mention here', vim.log.levels.WARN)
      return
    end
  else
    first, last = nil, nil
  end
  path = normalize(path)
  st.view:add_input(mentions.token(path, st.root, first, last) .. ' ')
  st.view:show()
end

-- task starts an act turn.
function M.task(text)
  M.prompt(text, 'act')
end

-- plan starts a plan turn.
function M.plan(text)
  M.prompt(text, 'plan')
end

-- act switches the session to act mode, then sends text when given.
function M.act(text)
  if text and not text:match('^%s*$') then
    return M.prompt(text, 'act')
  end
  local st = current()
  ensure_session(st, 'act', function()
    set_mode(st, 'act')
  end)
end

-- set_mode switches the current session to any mode.
function M.set_mode(mode)
  local st = current()
  ensure_session(st, mode, function()
    set_mode(st, mode)
  end)
end

-- cancel stops the running turn.
function M.cancel()
  local st = current()
  local c = client_of(st)
  if not (c and st.session_id) then
    notify('no session to cancel', vim.log.levels.WARN)
    return
  end
  approvals.cancel_session(st.session_id, function(item)
    if item.ctx.decided then
      item.ctx.decided('cancelled')
    end
  end)
  compat.notify(c, 'session/cancel', { sessionId = st.session_id })
  st.view:note('-- cancelling --')
end

-- new_session drops the current session; the next prompt starts a new one.
function M.new_session(mode)
  local st = current()
  if st.busy then
    notify('a turn is still running; :ClineCancel stops it', vim.log.levels.WARN)
    return
  end
  if st.session_id then
    by_session[st.session_id] = nil
  end
  st.session_id, st.mode, st.mode_shown, st.lost, st.read_only = nil, nil, false, nil, nil
  st.usage, st.previewed = {}, {}
  st.view:note('-- new session --')
  if mode and mode ~= '' then
    ensure_session(st, mode, function() end)
  end
end

-- open shows (and focuses) the session buffer.
function M.open()
  current().view:show(true)
end

-- open_diffs shows the diff buffer of the current root.
function M.open_diffs()
  local st = current()
  local scratch = require('cline.scratch')
  local buf = scratch.buffer(diffs.buffer_name(st.root), 'diff')
  scratch.show(buf, config.options.diff_split, 12)
end

-- stop shuts the current root's daemon down.
function M.stop()
  local st = current()
  local c = client_of(st)
  if c then
    st.stopping = true
    compat.stop(c)
  end
end

-- Earlier sessions ------------------------------------------------------

-- load replays session id into the session buffer and makes it the
-- root's session: the next prompt goes on with its conversation.
--
-- With read_only the session is shown, not opened (another daemon holds
-- it): prompts are refused here until it is forked (:ClineFork) or left.
function M.load(id, done, spot, read_only)
  local st = current()
  if st.busy then
    notify('a turn is still running; :ClineCancel stops it', vim.log.levels.WARN)
    return
  end
  if st.session_id then
    by_session[st.session_id] = nil
  end
  st.session_id, st.mode, st.mode_shown, st.lost, st.read_only = nil, nil, false, nil, nil
  st.usage, st.previewed = {}, {}
  st.view:clear()
  st.view:show()
  -- Replayed updates arrive before the answer: route them here now.
  by_session[id] = st
  request(st, 'session/load', { sessionId = id, cwd = st.root, readOnly = read_only or nil }, function(err, result)
    if err then
      by_session[id] = nil
      local pid = held_by(err)
      if pid and not read_only then
        return offer_held(st, id, pid, spot)
      end
      local msg = 'session/load failed: ' .. err_text(err)
      st.view:note('[error] ' .. msg)
      notify(msg, vim.log.levels.ERROR)
      return
    end
    if type(result) == 'table' and type(result.modes) == 'table' and result.modes.currentModeId then
      st.mode = result.modes.currentModeId
    end
    st.mode_shown = true
    if read_only then
      by_session[id] = nil
      st.read_only = id
      st.view:note(string.format('-- session %s, read-only: another editor holds it; :ClineFork continues it here --', id))
      if spot then
        st.view:back_to(spot.win and spot or nil)
      end
      return
    end
    st.session_id = id
    st.view:note(string.format('-- resumed session %s, mode: %s --', id, tostring(st.mode)))
    send_all_diagnostics(st)
    if spot then
      st.view:back_to(spot.win and spot or nil)
    end
    if done then
      done(id)
    end
  end)
end

-- sessions lists the root's earlier sessions, newest first, and resumes
-- the one picked.
function M.sessions()
  local st = current()
  -- The resumed session is typed to next: the cursor goes to its prompt
  -- area (where it was in it, when there).
  local spot = st.view:spot() or {}
  request(st, 'session/list', { cwd = st.root }, function(err, result)
    if err then
      notify('session/list failed: ' .. err_text(err), vim.log.levels.ERROR)
      return
    end
    local list = type(result) == 'table' and type(result.sessions) == 'table' and result.sessions or {}
    if #list == 0 then
      notify('no earlier session in ' .. st.root)
      return
    end
    table.sort(list, function(x, y)
      return tostring(x.updatedAt or '') > tostring(y.updatedAt or '')
    end)
    vim.ui.select(list, {
      prompt = 'Resume a Cline session:',
      kind = 'cline_session',
      format_item = function(x)
        local cur = x.sessionId == st.session_id and ' (current)' or ''
        if (tonumber(x.heldBy) or 0) > 0 then
          cur = cur .. ' (open in another editor)'
        end
        local when = tostring(x.updatedAt or ''):sub(1, 16):gsub('T', ' ')
        return require('cline.safe').visible(string.format('%s  %s%s', when, x.title or x.sessionId, cur), 'exact')
      end,
    }, function(choice)
      if choice then
        M.load(choice.sessionId, nil, spot)
      end
    end)
  end)
end

-- fork copies the current session up to turn at_turn (0: all of it) into
-- a new session, which the daemon makes even when another editor holds
-- the session open, and resumes the fork here.
function M.fork(at_turn, id, spot)
  local st = current()
  id = id or st.session_id or st.read_only
  if not id then
    notify('no session yet', vim.log.levels.WARN)
    return
  end
  request(st, 'cline/forkSession', { sessionId = id, atTurn = at_turn or 0 }, function(err, result)
    if err or type(result) ~= 'table' or not result.sessionId then
      notify('cline/forkSession failed: ' .. err_text(err), vim.log.levels.ERROR)
      return
    end
    M.load(result.sessionId, nil, spot or {})
  end)
end

-- offer_held tells the user that another daemon holds session id (the
-- same session open in another editor) and offers to fork it, a copy
-- that goes on here, or to show it read-only.
function offer_held(st, id, pid, spot)
  local who = pid > 0 and ('cline-ls process ' .. pid) or 'another cline-ls'
  st.view:note(string.format('-- session %s is open in another editor (%s) --', id, who))
  local fork = 'Fork it: a copy that goes on here'
  local view = 'Open it read-only'
  vim.ui.select({ fork, view, 'Cancel' }, {
    prompt = string.format('Session %s is open in another editor (%s).', id, who),
    kind = 'cline_held',
  }, function(choice)
    if choice == fork then
      M.fork(0, id, spot)
    elseif choice == view then
      M.load(id, nil, spot, true)
    end
  end)
end

-- Checkpoints -----------------------------------------------------------

local function with_checkpoints(st, fn)
  if not (st.session_id and client_of(st)) then
    notify('no session yet', vim.log.levels.WARN)
    return
  end
  request(st, 'cline/checkpoints', { sessionId = st.session_id }, function(err, result)
    if err then
      notify('cline/checkpoints failed: ' .. err_text(err), vim.log.levels.ERROR)
      return
    end
    fn(type(result) == 'table' and type(result.checkpoints) == 'table' and result.checkpoints or {})
  end)
end

-- restore puts the workspace (scope files), the conversation
-- (conversation) or both back as they were at checkpoint ck.
function M.restore(ck, scope, what, done, spot)
  local st = current()
  spot = spot or st.view:spot()
  if st.busy then
    notify('a turn is still running; :ClineCancel stops it', vim.log.levels.WARN)
    return
  end
  request(st, 'cline/restore', { sessionId = st.session_id, checkpointId = ck.checkpointId, scope = scope }, function(err, result)
    if err then
      local msg = 'cline/restore failed: ' .. err_text(err)
      st.view:note('[error] ' .. msg)
      notify(msg, vim.log.levels.ERROR)
      return
    end
    result = type(result) == 'table' and result or {}
    local files = {}
    for _, p in ipairs(type(result.restored) == 'table' and result.restored or {}) do
      table.insert(files, paths.relative(p, st.root))
    end
    local line = string.format('-- %s (%s): %s --', what, scope, #files > 0 and table.concat(files, ', ') or 'no file changed')
    st.view:note(line)
    for _, c in ipairs(type(result.conflicts) == 'table' and result.conflicts or {}) do
      st.view:note(string.format('[conflict] %s: %s (kept as it is)', tostring(c.path), tostring(c.reason)))
    end
    -- Whatever window the restore left the cursor in (the file's, once
    -- the preview closed), the next thing typed goes to the chat.
    st.view:back_to(spot)
    if done then
      done(result)
    end
  end)
end

-- undo takes back the last turn that changed something: its files and,
-- from it on, the conversation (the next prompt goes without it).
function M.undo(done)
  local st = current()
  local spot = st.view:spot()
  with_checkpoints(st, function(list)
    local last
    for _, c in ipairs(list) do
      if not last or c.turn > last.turn then
        last = c
      end
    end
    if not last then
      notify('nothing to undo: no turn of this session changed a file', vim.log.levels.WARN)
      return
    end
    M.restore(last, 'both', 'undone: turn ' .. tostring(last.turn + 1), done, spot)
  end)
end

-- checkpoint_view shows what restoring ck would change, with keys to
-- restore it.
local function checkpoint_view(st, ck, spot)
  request(st, 'cline/checkpointDiff', { sessionId = st.session_id, checkpointId = ck.checkpointId }, function(err, result)
    if err then
      notify('cline/checkpointDiff failed: ' .. err_text(err), vim.log.levels.ERROR)
      return
    end
    local buf = scratch.buffer('cline://checkpoint', 'diff')
    local lines = {
      '# checkpoint ' .. tostring(ck.title or ck.checkpointId) .. ' (turn ' .. tostring((ck.turn or 0) + 1) .. ')',
      '# f restore files · c restore conversation · b both · q close',
    }
    local files = type(result) == 'table' and type(result.files) == 'table' and result.files or {}
    if #files == 0 then
      table.insert(lines, '# restoring changes no file')
    end
    for _, f in ipairs(files) do
      table.insert(lines, '')
      table.insert(lines, string.format('=== %s (%s)', paths.relative(tostring(f.path), st.root), tostring(f.status)))
      vim.list_extend(lines, diffs.body(f.diff))
    end
    scratch.set(buf, lines)
    for key, scope in pairs({ f = 'files', c = 'conversation', b = 'both' }) do
      vim.keymap.set('n', key, function()
        vim.cmd('close')
        M.restore(ck, scope, 'restored checkpoint ' .. tostring(ck.title or ck.checkpointId), nil, spot)
      end, { buffer = buf, nowait = true, silent = true, desc = 'Cline: restore ' .. scope })
    end
    local win = scratch.show(buf, 'botright split', math.min(#lines + 1, 20))
    if win then
      vim.api.nvim_set_current_win(win)
    end
  end)
end

-- checkpoints lists the session's checkpoints, newest first; the one
-- picked is previewed (cline/checkpointDiff) with keys to restore it.
function M.checkpoints()
  local st = current()
  local spot = st.view:spot()
  with_checkpoints(st, function(list)
    if #list == 0 then
      notify('no checkpoint yet: none is taken before a turn changes a file', vim.log.levels.WARN)
      return
    end
    local items = {}
    for i = #list, 1, -1 do
      table.insert(items, list[i])
    end
    vim.ui.select(items, {
      prompt = 'Cline checkpoint:',
      kind = 'cline_checkpoint',
      format_item = function(c)
        return require('cline.safe').visible(string.format('turn %d  %s  %s', (c.turn or 0) + 1, tostring(c.title or c.checkpointId), table.concat(c.files or {}, ', ')), 'exact')
      end,
    }, function(choice)
      if choice then
        checkpoint_view(st, choice, spot)
      end
    end)
  end)
end

-- Model ------------------------------------------------------------------

-- set_model switches the model: spec is "model" or "provider model"
-- (or, from Lua, a table of provider settings). It is a settings change,
-- kept for a daemon started later. The daemon binds a session to its
-- model when it opens it, so the current session is closed and loaded
-- again: its conversation goes on with the new model.
function M.set_model(spec)
  local st = current()
  local p = spec
  if type(spec) ~= 'table' then
    local words = vim.split(vim.trim(spec or ''), '%s+')
    if #words == 0 or words[1] == '' then
      notify('which model? :ClineModel [provider] {model}', vim.log.levels.WARN)
      return
    end
    p = #words >= 2 and { name = words[1], model = words[2] } or { model = words[1] }
  end
  if st.busy then
    notify('a turn is still running; :ClineCancel stops it', vim.log.levels.WARN)
    return
  end
  local settings = config.options.settings or {}
  settings.provider = vim.tbl_extend('force', type(settings.provider) == 'table' and settings.provider or {}, p)
  config.options.settings = settings
  local pr = settings.provider
  local label = string.format('%s%s', pr.name and (pr.name .. '/') or '', tostring(pr.model or pr.transcript or '?'))
  ensure_client(st, function(c)
    compat.notify(c, 'workspace/didChangeConfiguration', { settings = { provider = p } })
    local id = st.session_id
    if not id then
      st.view:note('-- model: ' .. label .. ' (from the next session) --')
      return
    end
    request(st, 'cline/closeSession', { sessionId = id }, function(err)
      if err then
        notify('cline/closeSession failed: ' .. err_text(err), vim.log.levels.ERROR)
        return
      end
      M.load(id, function()
        st.view:note('-- model: ' .. label .. ' --')
      end)
    end)
  end)
end

-- status is the statusline component: mode, what a running turn waits
-- for, context use and the session's cost.
function M.status()
  local st = roots[M.root_for(0)]
  if not st or not st.session_id then
    return ''
  end
  local parts = { 'cline:' .. tostring(st.mode or '?') }
  if st.busy then
    local w = st.waiting_for or 'working'
    if w:find('approval', 1, true) then
      w = 'approval'
    end
    table.insert(parts, '⋯ ' .. w)
  end
  local c = context_use(st.usage.context)
  if c then
    table.insert(parts, c)
  end
  local s = st.usage.session
  if type(s) == 'table' and tonumber(s.costUsd) then
    table.insert(parts, string.format('$%.2f', tonumber(s.costUsd)))
  end
  return table.concat(parts, ' · ')
end

-- state returns the plugin's state for a root (the current one by
-- default); for tests and statuslines, not to be changed.
function M.state(root)
  return roots[root or M.root_for(0)]
end

-- Setup ----------------------------------------------------------------

function M.setup(opts)
  config.set(opts)
  did_setup = true
  local group = api.nvim_create_augroup('cline', { clear = true })
  api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile', 'BufEnter' }, {
    group = group,
    callback = function(args)
      for _, st in pairs(roots) do
        if st.client_id then
          attach(st, args.buf)
        end
      end
    end,
  })
  if diagnostics.available() then
    api.nvim_create_autocmd('DiagnosticChanged', {
      group = group,
      callback = function(args)
        for _, st in pairs(roots) do
          send_diagnostics(st, args.buf)
        end
      end,
    })
  end
end

function M.setup_once()
  if not did_setup then
    M.setup({})
  end
end

return M
