-- The same edit flow with no plugin at all: Neovim's own LSP client
-- started on cline-ls, the task sent as workspace/executeCommand
-- cline.prompt, and the approval answered through the stock
-- window/showMessageRequest handler by a scripted user picking "Allow".
local here = debug.getinfo(1, 'S').source:sub(2):match('(.*/)') or './'
local H = dofile(here .. 'harness.lua')
local env = H.env

H.run(function()
  -- The scripted user. Neovim 0.7's handler asks with inputlist(); newer
  -- ones use vim.ui.select when they can wait for it.
  local asked = {}
  vim.fn.inputlist = function(items)
    table.insert(asked, table.concat(items, '\n'))
    for i, item in ipairs(items) do
      if item:match('^%d+%. Allow$') then
        return i - 2 -- items[1] is the message, items[2] a heading
      end
    end
    return 0
  end
  vim.ui.select = function(items, opts, on_choice)
    table.insert(asked, (opts.prompt or '') .. '\n' .. vim.inspect(items))
    for _, item in ipairs(items) do
      if item.title == 'Allow' then
        return on_choice(item)
      end
    end
    on_choice(nil)
  end

  -- What the daemon shows the user (window/showMessage), kept for the
  -- checks and passed on to the stock handler.
  local shown = {}
  local show = vim.lsp.handlers['window/showMessage']
  vim.lsp.handlers['window/showMessage'] = function(e, r, ctx, c)
    table.insert(shown, r and r.message or '')
    return show(e, r, ctx, c)
  end

  vim.cmd('edit ' .. vim.fn.fnameescape(env.ws .. '/hello.txt'))
  local buf = vim.api.nvim_get_current_buf()
  local config = {
    name = 'cline-ls',
    cmd = H.cmd(),
    root_dir = env.ws,
    init_options = H.settings(),
  }
  local id
  if vim.fn.has('nvim-0.8') == 1 then
    id = vim.lsp.start(config, { bufnr = buf })
  else
    id = vim.lsp.start_client(config)
    vim.lsp.buf_attach_client(buf, id)
  end
  H.expect(id ~= nil, 'the stock client starts')
  local client = vim.lsp.get_client_by_id(id)
  H.dead = function()
    return vim.lsp.get_client_by_id(id) == nil
  end
  H.wait('initialize', function()
    return client.initialized or client.server_capabilities ~= nil
  end)

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
  H.wait('the turn to end', function()
    for _, m in ipairs(shown) do
      if m:match('turn ended %(end_turn%)') then
        return true
      end
    end
    return false
  end)
  H.eq(#asked, 1, 'the user was asked once')
  H.contains(asked[1], 'hello, world', 'the question shows the diff')

  H.eq(H.lines(buf), { 'hello, world' }, 'the buffer holds the edit')
  H.expect(vim.bo[buf].modified, 'the buffer is modified (unsaved)')
  H.eq(H.read(env.ws .. '/hello.txt'), 'hello\n', 'the disk is untouched before saving')
  vim.cmd('write')
  H.eq(H.read(env.ws .. '/hello.txt'), 'hello, world\n', 'saving writes the edit to disk')
end)
