-- The same flows with no plugin at all: Neovim's own LSP client started
-- on cline-ls, as the README shows it. "stock": the task sent as
-- workspace/executeCommand cline.prompt; "codeaction": a diagnostic on the
-- buffer, then vim.lsp.buf.code_action() and "Fix with agent". Either way
-- the approval is answered through the stock window/showMessageRequest
-- handler by a scripted user picking "Allow".
local here = debug.getinfo(1, 'S').source:sub(2):match('(.*/)') or './'
local H = dofile(here .. 'harness.lua')
local env = H.env

-- start opens hello.txt, starts the stock client on it and scripts the
-- user. It returns the buffer, the client and what the user was asked
-- and shown.
local function start(start_client)
  local t = { asked = {}, shown = {}, picked = {} }
  -- The scripted user. Neovim 0.7's handler asks with inputlist(); newer
  -- ones use vim.ui.select when they can wait for it.
  vim.fn.inputlist = function(items)
    table.insert(t.asked, table.concat(items, '\n'))
    if t.on_ask then
      t.on_ask()
    end
    for i, item in ipairs(items) do
      if item:match('^%d+%. Allow$') then
        return i - 2 -- items[1] is the message, items[2] a heading
      end
    end
    return 0
  end
  vim.ui.select = function(items, opts, on_choice)
    if opts.kind == 'codeaction' then
      for _, item in ipairs(items) do
        local title = item[2] and item[2].title or item.title
        table.insert(t.picked, title)
        if title == t.code_action then
          return on_choice(item)
        end
      end
      return on_choice(nil)
    end
    table.insert(t.asked, (opts.prompt or '') .. '\n' .. vim.inspect(items))
    if t.on_ask then
      t.on_ask()
    end
    for _, item in ipairs(items) do
      if item.title == 'Allow' then
        return on_choice(item)
      end
    end
    on_choice(nil)
  end

  -- What the daemon shows the user (window/showMessage), kept for the
  -- checks and passed on to the stock handler.
  local show = vim.lsp.handlers['window/showMessage']
  vim.lsp.handlers['window/showMessage'] = function(e, r, ctx, c)
    table.insert(t.shown, r and r.message or '')
    return show(e, r, ctx, c)
  end

  vim.cmd('edit ' .. vim.fn.fnameescape(env.ws .. '/hello.txt'))
  t.buf = vim.api.nvim_get_current_buf()
  local id
  if start_client then
    id = start_client()
  else
    local config = {
      name = 'cline-ls',
      cmd = H.cmd(),
      root_dir = env.ws,
      init_options = H.settings(),
    }
    if vim.fn.has('nvim-0.8') == 1 then
      id = vim.lsp.start(config, { bufnr = t.buf })
    else
      id = vim.lsp.start_client(config)
      vim.lsp.buf_attach_client(t.buf, id)
    end
  end
  H.expect(id ~= nil, 'the stock client starts')
  t.client = vim.lsp.get_client_by_id(id)
  H.dead = function()
    return vim.lsp.get_client_by_id(id) == nil
  end
  H.wait('initialize', function()
    return t.client.initialized or t.client.server_capabilities ~= nil
  end)
  return t
end

-- turn_ended waits for the window/showMessage that ends the turn.
local function turn_ended(t)
  H.wait('the turn to end', function()
    for _, m in ipairs(t.shown) do
      if m:match('turn ended %(end_turn%)') then
        return true
      end
    end
    return false
  end)
end

-- edited checks that the edit is in the buffer, not on disk until saved.
local function edited(t)
  H.eq(H.lines(t.buf), { 'hello, world' }, 'the buffer holds the edit')
  H.expect(vim.bo[t.buf].modified, 'the buffer is modified (unsaved)')
  H.eq(H.read(env.ws .. '/hello.txt'), 'hello\n', 'the disk is untouched before saving')
  vim.cmd('write')
  H.eq(H.read(env.ws .. '/hello.txt'), 'hello, world\n', 'saving writes the edit to disk')
end

local scenarios = {}

function scenarios.stock()
  local t = start()
  local client, buf = t.client, t.buf
  local done, err, result
  local params = { command = 'cline.prompt', arguments = { { text = 'make the greeting friendlier' } } }
  local handler = function(e, r)
    done, err, result = true, e, r
  end
  if vim.fn.has('nvim-0.11') == 1 then
    client:request('workspace/executeCommand', params, handler, buf)
  else
    client.request('workspace/executeCommand', params, handler, buf)
  end
  H.wait('cline.prompt to answer', function()
    return done
  end)
  H.expect(err == nil, 'cline.prompt succeeds', vim.inspect(err))
  H.expect(type(result) == 'table' and type(result.sessionId) == 'string', 'cline.prompt answers at once with the session it started')
  -- The turn runs on; its end comes as window/showMessage.
  turn_ended(t)
  H.eq(#t.asked, 1, 'the user was asked once')
  H.contains(t.asked[1], 'hello, world', 'the question shows the diff')
  edited(t)
end

-- codeaction: a diagnostic on the buffer, published as a language
-- server publishes it (through the stock handler, so that every Neovim
-- version's code_action() sends it: from 0.10 on it sends only the
-- client's own diagnostics); the stock code action menu offers "Fix with
-- agent", which runs a turn whose edit lands in the buffer. The command
-- answers before the approval is asked: the editor is not held while the
-- turn runs.
function scenarios.codeaction()
  local t = start()
  vim.lsp.handlers['textDocument/publishDiagnostics'](nil, {
    uri = vim.uri_from_bufnr(t.buf),
    diagnostics = { {
      range = { start = { line = 0, character = 0 }, ['end'] = { line = 0, character = 5 } },
      message = 'greeting too terse', source = 'lint', severity = 2,
    } },
  }, { method = 'textDocument/publishDiagnostics', client_id = t.client.id, bufnr = t.buf })
  H.eq(#vim.diagnostic.get(t.buf), 1, 'the buffer has the diagnostic')
  local answered, answered_first
  local exec = vim.lsp.handlers['workspace/executeCommand']
  vim.lsp.handlers['workspace/executeCommand'] = function(e, r, ctx, c)
    answered = { err = e, result = r }
    return exec(e, r, ctx, c)
  end
  t.on_ask = function()
    answered_first = answered ~= nil
  end
  t.code_action = 'Fix with agent'
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  vim.lsp.buf.code_action()
  H.wait('the code action to run', function()
    return answered ~= nil
  end)
  H.expect(vim.tbl_contains(t.picked, 'Fix with agent'), 'the menu offers Fix with agent', vim.inspect(t.picked))
  H.expect(answered.err == nil, 'the command succeeds', vim.inspect(answered.err))
  turn_ended(t)
  H.eq(#t.asked, 1, 'the user was asked once')
  H.expect(answered_first, 'the command answered before the approval was asked (no freeze)')
  H.contains(t.asked[1], 'hello, world', 'the question shows the diff')
  edited(t)
end

-- readme: the Neovim snippet of the top-level README, read from it (so
-- that this fails when the README drifts) and run as it stands: it starts
-- and attaches the client on every Neovim the plugin supports, sends
-- cline.prompt and opens the code action menu. The daemon is the
-- snippet's `cline-ls`, found on the PATH, with the replay model given
-- in its environment.
function scenarios.readme()
  local readme = assert(H.read(here .. '../../../README.md'), 'the README is found')
  local snippet = readme:match('\nNeovim:\n\n```lua\n(.-)\n```')
  H.expect(snippet ~= nil, "the README has a Neovim snippet")
  local bin = vim.fn.fnamemodify(env.log, ':h') .. '/bin'
  vim.fn.mkdir(bin, 'p')
  local uv = vim.uv or vim.loop
  uv.fs_symlink(env.bin, bin .. '/cline-ls')
  vim.env.PATH = bin .. ':' .. vim.env.PATH
  vim.env.CLINE_LS_PROVIDER = 'replay'
  vim.env.CLINE_LS_TRANSCRIPT = env.transcript
  -- What it does at once, and what it does "later", once the client is
  -- up: the line that says so parts them.
  local now, later = snippet:match('^(.-)\n(%-%- later.*)$')
  H.expect(now ~= nil, 'the snippet says what runs later')
  local load = loadstring or load
  local t = start(function()
    local ok, err = pcall(assert(load(now, 'README.md')))
    H.expect(ok, 'the snippet starts the client', tostring(err))
    H.wait('the client to initialize', function()
      return #(vim.lsp.get_clients or vim.lsp.get_active_clients)() > 0
    end)
    local clients = (vim.lsp.get_clients or vim.lsp.get_active_clients)()
    H.eq(#clients, 1, 'it started one client')
    return clients[1].id
  end)
  H.expect(vim.lsp.buf_is_attached(t.buf, t.client.id), 'the buffer is attached')
  local ok, err = pcall(assert(load(later, 'README.md')))
  H.expect(ok, 'the rest of the snippet runs', tostring(err))
  H.wait('the turn the snippet started', function()
    for _, m in ipairs(t.shown) do
      if m:match('turn ended %(end_turn%)') then
        return true
      end
    end
    return false
  end)
  H.contains(table.concat(t.shown, '\n'), 'Doc comment added.', "the agent's answer is shown")
  H.expect(#t.picked > 0, 'the code action menu was offered', vim.inspect(t.picked))
end

H.run(function()
  local fn = scenarios[env.scenario]
  if not fn then
    H.fail('unknown scenario ' .. tostring(env.scenario))
  end
  fn()
end)
