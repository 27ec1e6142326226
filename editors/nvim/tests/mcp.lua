-- An MCP server behind OAuth (internal/mcptest, started by mcp_test.go at
-- $MCPTEST_URL): the sign-in page the daemon asks Neovim to open goes to
-- the user's browser ($BROWSER, a stand-in that follows it), and the
-- server's questions (elicitation) are asked in Neovim.
local here = debug.getinfo(1, 'S').source:sub(2):match('(.*/)') or './'
local H = dofile(here .. 'harness.lua')
local env = H.env

local function cline()
  return require('cline')
end

H.run(function()
  H.dead = function()
    local st = cline().state(env.ws)
    return st ~= nil and st.last_stop == 'exited'
  end
  H.stub_ui()
  local asked = {}
  H.ui.select_answer = function(items, opts)
    table.insert(asked, opts.prompt .. ' ' .. table.concat(items, '/'))
    if H.has(opts.prompt, 'Tell me about you.') then
      return 'Answer'
    end
    if H.has(opts.prompt, 'colour') then
      return 'red'
    end
  end
  H.ui.input_answer = function(opts)
    table.insert(asked, vim.trim(opts.prompt or ''))
    if H.has(opts.prompt or '', 'Your name') then
      return 'Ada'
    end
  end
  cline().setup({
    cmd = H.cmd(),
    settings = H.settings({
      approvals = { mcp = 'allow' },
      mcpServers = { { type = 'http', name = 'secure', url = os.getenv('MCPTEST_URL'), headers = {} } },
    }),
  })
  vim.cmd('edit ' .. vim.fn.fnameescape(env.ws .. '/hello.txt'))

  -- A new session starts the daemon, which connects to the server in the
  -- background; its tools appear once the sign-in is done.
  cline().new_session('act')
  local st
  H.wait('the sign-in in the browser and the server\'s tools', function()
    st = cline().state(env.ws)
    if not st or not st.client_id then
      return false
    end
    local client = vim.lsp.get_client_by_id(st.client_id)
    if not client then
      return false
    end
    local res = client.request_sync('cline/tools', { format = 'anthropic' }, 2000, 0)
    if not res or not res.result then
      return false
    end
    for _, t in ipairs(res.result.tools or {}) do
      if t.name == 'secure__mcp__whoami' then
        return true
      end
    end
    return false
  end, 60000)
  H.contains(H.read(os.getenv('MCPTEST_BROWSER_LOG')) or '', 'Signed in to secure', 'the browser was sent to the sign-in page and shown the end of it')

  vim.cmd('ClineTask who am I, and ask me')
  st = cline().state(env.ws)
  H.wait('the turn to end', function()
    return not st.busy
  end, 60000)
  H.eq(st.last_stop, 'end_turn', 'the turn ends (the model read whoami and the answers)')
  H.eq(asked, { 'MCP server secure asks: Tell me about you. Answer/Decline', 'MCP server secure: Your name',
    'MCP server secure: colour (default: blue) red/blue' }, 'the server\'s questions were asked in Neovim')
end)
