-- Headless end-to-end scenarios of Claude Code hooks (testdata/hooks at
-- the module's root) through the plugin and the real daemon. hooks_test.go
-- writes the Go module, the hooks (the user's config file or the folder's
-- .cline/settings.json) and passes what the cards must say in
-- CLINE_HOOK_* variables.
local here = debug.getinfo(1, 'S').source:sub(2):match('(.*/)') or './'
local H = dofile(here .. 'harness.lua')
local env = H.env
local want = {
  prompt = os.getenv('CLINE_HOOK_PROMPT'),
  blocked = os.getenv('CLINE_HOOK_BLOCKED'),
  vet = os.getenv('CLINE_HOOK_VET'),
  context = os.getenv('CLINE_HOOK_CONTEXT'),
  last = os.getenv('CLINE_HOOK_LAST'),
}

local function start()
  H.dead = function()
    local st = require('cline').state(env.ws)
    return st ~= nil and st.last_stop == 'exited'
  end
  H.stub_ui()
  require('cline').setup({ cmd = H.cmd(), settings = H.settings() })
  -- A file of the folder is open, so that the plugin starts there; main.go
  -- is not, so that the edit goes to disk, where go vet reads it.
  vim.cmd('edit ' .. vim.fn.fnameescape(env.ws .. '/hello.txt'))
end

local function session_text()
  local st = require('cline').state(env.ws)
  return st and H.text(st.view.buf) or ''
end

local function wait_turn(st)
  H.wait('the turn to end', function()
    return not st.busy
  end, 120000)
end

-- approval_text answers the next approval with key and returns what its
-- view showed.
local function answer(key)
  return table.concat(H.approve(key).lines, '\n')
end

-- the hooks' outcomes as the session buffer shows them: the rm -rf
-- refused with the hook's reason, the edit's card with the vet context.
local function check_cards(text)
  H.contains(text, 'Hook PreToolUse (', "the command's card names the PreToolUse hook")
  H.contains(text, want.blocked, "the command's card shows the hook's reason")
  H.contains(text, 'Hook PostToolUse (', "the edit's card names the PostToolUse hook")
  H.contains(text, want.context, "the edit's card shows that the hook added context")
  H.contains(text, want.last, 'the model answered the vet report')
  H.contains(text, '-- end_turn')
end

local scenarios = {}

-- user: the hooks of the user's config file run without a question.
function scenarios.user()
  start()
  vim.cmd('ClineTask ' .. want.prompt)
  local st = require('cline').state(env.ws)
  local asked = answer('a')
  H.contains(asked, 'main.go', 'the one approval is the edit of main.go (the refused rm -rf asked nothing)')
  wait_turn(st)
  H.eq(st.last_stop, 'end_turn', 'the turn ends with end_turn')
  check_cards(session_text())
end

-- trust: the folder's own hooks ask first, listing the commands; Trust
-- runs them.
function scenarios.trust()
  start()
  vim.cmd('ClineTask ' .. want.prompt)
  local st = require('cline').state(env.ws)
  local asked = answer('A')
  H.contains(asked, 'Trust the hooks of ' .. env.ws, 'the trust question names the folder')
  H.contains(asked, 'PreToolUse: ', 'it lists the PreToolUse command')
  H.contains(asked, 'PostToolUse: ', 'and the PostToolUse one')
  asked = answer('a')
  H.contains(asked, 'main.go', 'the next approval is the edit (the trusted hook refused the rm -rf)')
  wait_turn(st)
  H.eq(st.last_stop, 'end_turn', 'the turn ends with end_turn')
  check_cards(session_text())
end

-- distrust: Don't trust, and the folder's hooks never run: the rm -rf is
-- an ordinary command that asks, and is rejected here.
function scenarios.distrust()
  start()
  vim.cmd('ClineTask ' .. want.prompt)
  local st = require('cline').state(env.ws)
  local asked = answer('r')
  H.contains(asked, 'Trust the hooks of ' .. env.ws, 'the trust question comes first')
  asked = answer('r')
  H.contains(asked, 'rm -rf build', 'the rm -rf, not refused by any hook, asks')
  wait_turn(st)
  H.eq(st.last_stop, 'end_turn', 'the turn ends with end_turn')
  local text = session_text()
  H.expect(not H.has(text, 'Hook PreToolUse'), 'no hook ran', text)
  H.contains(text, 'Left the build folder alone.')
end

H.run(function()
  local fn = scenarios[env.scenario]
  if not fn then
    H.fail('no scenario ' .. tostring(env.scenario))
  end
  fn()
end)
