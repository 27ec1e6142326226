-- Shared helpers for the headless test scripts. The Go harness
-- (nvim_test.go) passes paths in CLINE_TEST_* variables; a script writes
-- one line per check to CLINE_TEST_RESULT and leaves with :qall! when all
-- passed, :cquit otherwise.
local H = {}

H.env = {
  bin = os.getenv('CLINE_TEST_BIN'),
  ws = os.getenv('CLINE_TEST_WS'),
  transcript = os.getenv('CLINE_TEST_TRANSCRIPT'),
  state = os.getenv('CLINE_TEST_STATE'),
  log = os.getenv('CLINE_TEST_LOG'),
  result = os.getenv('CLINE_TEST_RESULT'),
  scenario = os.getenv('CLINE_TEST_SCENARIO'),
}

local out = {}

function H.say(fmt, ...)
  table.insert(out, string.format(fmt, ...))
end

function H.fail(msg)
  error(msg, 0)
end

-- expect records a check; a failed one ends the script.
function H.expect(cond, what, detail)
  if not cond then
    H.fail(what .. (detail and (': ' .. detail) or ''))
  end
  H.say('ok %s', what)
end

function H.eq(got, want, what)
  H.expect(vim.deep_equal(got, want), what, string.format('got %s, want %s', vim.inspect(got), vim.inspect(want)))
end

-- dead, when a script sets it, reports that the daemon is gone, so that
-- waits fail at once instead of at their timeout.
H.dead = nil

function H.wait(what, pred, ms)
  local gone = false
  local ok = vim.wait(ms or 20000, function()
    if pred() then
      return true
    end
    gone = H.dead ~= nil and H.dead() or false
    return gone
  end, 10)
  if gone and not pred() then
    H.fail('the daemon exited while waiting for ' .. what .. ' (see the nvim LSP log below)')
  end
  if not ok then
    H.fail('timed out waiting for ' .. what)
  end
end

function H.read(path)
  local f = io.open(path, 'rb')
  if not f then
    return nil
  end
  local s = f:read('*a')
  f:close()
  return s
end

function H.lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

function H.text(buf)
  return table.concat(H.lines(buf), '\n')
end

-- has reports whether a plain substring occurs in text.
function H.has(text, sub)
  return text:find(sub, 1, true) ~= nil
end

function H.contains(text, sub, what)
  H.expect(H.has(text, sub), what or ('shows ' .. vim.inspect(sub)), 'not found in:\n' .. text)
end

-- settings are the daemon settings for the replay model.
function H.settings(extra)
  return vim.tbl_deep_extend('force', {
    provider = { name = 'replay', transcript = H.env.transcript },
    stateDir = H.env.state,
    approvals = { edit = 'ask' },
  }, extra or {})
end

function H.cmd()
  return { H.env.bin, '--log-file', H.env.log, '--log-level', 'debug' }
end

-- ui replaces vim.ui.select and vim.ui.input with scripted answers:
-- H.ui.select_answer(items, opts) and H.ui.input_answer(opts) pick them;
-- every call is recorded.
H.ui = { selects = {}, inputs = {} }

function H.stub_ui()
  vim.ui.select = function(items, opts, on_choice)
    local call = { items = items, opts = opts, on_choice = on_choice }
    table.insert(H.ui.selects, call)
    local answer = H.ui.select_answer and H.ui.select_answer(items, opts, call)
    if answer ~= 'later' then
      on_choice(answer)
    end
  end
  vim.ui.input = function(opts, on_confirm)
    table.insert(H.ui.inputs, { opts = opts })
    on_confirm(H.ui.input_answer and H.ui.input_answer(opts) or nil)
  end
end

-- approval_shown reports whether an approval waits with its view open.
function H.approval_shown()
  local buf = vim.fn.bufnr('cline://approval')
  return buf ~= -1 and #vim.fn.win_findbuf(buf) > 0 and require('cline.approvals').pending() > 0
end

-- approve waits for the approval view, records what it showed and where
-- the cursor was, then answers as a user does: :ClineApprove to go
-- there, then key.
function H.approve(key)
  H.wait('the approval view', H.approval_shown)
  local buf = vim.fn.bufnr('cline://approval')
  local seen = { lines = H.lines(buf), cursor_elsewhere = vim.api.nvim_get_current_buf() ~= buf }
  vim.cmd('ClineApprove')
  vim.api.nvim_feedkeys(key, 'mx', false)
  return seen
end

-- option returns the item of a cline approval list with optionId id.
function H.option(items, id)
  for _, it in ipairs(items) do
    if it.optionId == id then
      return it
    end
  end
  H.fail('no option ' .. id .. ' in ' .. vim.inspect(items))
end

-- daemon_pid returns the pid of the daemon this Neovim started (a child
-- whose command line holds the test's log file, or log), or nil.
function H.daemon_pid(log)
  local me = vim.fn.getpid()
  for _, name in ipairs(vim.fn.readdir('/proc')) do
    local pid = tonumber(name)
    local stat = pid and H.read('/proc/' .. name .. '/stat')
    -- The second field (the command) is in parentheses and may hold spaces.
    local ppid = stat and tonumber(stat:match('%) %S+ (%d+)'))
    if ppid == me then
      local cmdline = H.read('/proc/' .. name .. '/cmdline') or ''
      if H.has(cmdline, (log or H.env.log) .. '\0') then
        return pid
      end
    end
  end
end

function H.finish(ok, err)
  if not ok then
    table.insert(out, 'FAIL ' .. tostring(err))
  else
    table.insert(out, 'PASS')
  end
  local f = assert(io.open(H.env.result, 'w'))
  f:write(table.concat(out, '\n') .. '\n')
  f:close()
  if ok then
    vim.cmd('qall!')
  else
    vim.cmd('cquit 1')
  end
end

-- run runs fn and leaves nvim with its verdict.
function H.run(fn)
  local ok, err = xpcall(fn, debug.traceback)
  H.finish(ok, err)
end

return H
