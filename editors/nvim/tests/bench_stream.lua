-- Streaming into the session buffer: how long a chunk of agent text and a
-- tool call's status line take, in a headless Neovim. Run from the
-- repository root:
--
--   nvim --headless -u NONE -i NONE -n --cmd 'set rtp^=editors/nvim' -c 'luafile editors/nvim/tests/bench_stream.lua'
--
-- With BENCH_VIEW=path/to/view.lua it also measures that version of the
-- view (an older one, say) in the same run. Prints one line per version.
local uv = vim.uv or vim.loop

local function load(path)
  if not path then
    package.loaded['cline.view'] = nil
    return require('cline.view')
  end
  return dofile(path)
end

-- run streams chunks agent chunks (a newline every tenth) and tools tool
-- calls, each with two updates, into a fresh view; it returns the
-- seconds each part took.
local function run(view, chunks, tools)
  local v = view.new('/bench/' .. tostring(uv.hrtime()))
  v:user('go')
  local t0 = uv.hrtime()
  for i = 1, chunks do
    v:stream('agent', i % 10 == 0 and 'words.\n' or 'words, ')
  end
  local t1 = uv.hrtime()
  for i = 1, tools do
    local id = 't' .. i
    v:tool_call({ toolCallId = id, title = 'read_files', status = 'pending' })
    v:tool_update({ toolCallId = id, status = 'in_progress' })
    v:tool_update({ toolCallId = id, status = 'completed', content = { { type = 'content', content = { type = 'text', text = 'one\ntwo' } } } })
  end
  local t2 = uv.hrtime()
  return (t1 - t0) / 1e9, (t2 - t1) / 1e9
end

local function median(xs)
  table.sort(xs)
  return xs[math.floor(#xs / 2) + 1]
end

local chunks, tools, rounds = 20000, 500, 5
local versions = { { 'this tree', nil } }
if os.getenv('BENCH_VIEW') then
  table.insert(versions, { os.getenv('BENCH_VIEW'), os.getenv('BENCH_VIEW') })
end
local out = {}
for _, ver in ipairs(versions) do
  local view = load(ver[2])
  local s, t = {}, {}
  for _ = 1, rounds do
    local a, b = run(view, chunks, tools)
    table.insert(s, a)
    table.insert(t, b)
  end
  table.insert(out, string.format('%s: %.1f µs per chunk (%d chunks), %.1f µs per tool call with 2 updates (%d), median of %d',
    ver[1], median(s) / chunks * 1e6, chunks, median(t) / tools * 1e6, tools, rounds))
end
io.stdout:write(table.concat(out, '\n') .. '\n')
vim.cmd('qall!')
