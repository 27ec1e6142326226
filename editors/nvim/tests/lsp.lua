-- The editor's language servers as the model's tools (PROTOCOL.md §11)
-- against a real gopls, started the way a user's configuration starts
-- it (vim.lsp.start_client and a FileType autocommand), not by the
-- plugin: find_references on a file not open (the plugin loads it, waits
-- for gopls to attach, unloads it), then rename_symbol, approved, whose
-- edits land in the open buffer and on disk for the file not open.
local here = debug.getinfo(1, 'S').source:sub(2):match('(.*/)') or './'
local H = dofile(here .. 'harness.lua')
local env = H.env

local function write(name, text)
  local f = assert(io.open(env.ws .. '/' .. name, 'w'))
  f:write(text)
  f:close()
end

local scenarios = {}

function scenarios.lsp()
  write('go.mod', 'module example.com/a\n\ngo 1.21\n')
  write('a.go', 'package a\n\n// Answer is the answer.\nfunc Answer() int { return 42 }\n')
  write('b.go', 'package a\n\nfunc Use() int { return Answer() + Answer() }\n')

  -- The user's setup: gopls for Go buffers.
  vim.cmd('filetype on')
  local gopls = vim.lsp.start_client({ name = 'gopls', cmd = { 'gopls' }, root_dir = env.ws })
  H.expect(gopls ~= nil, 'gopls starts')
  vim.api.nvim_create_autocmd('FileType', {
    pattern = 'go',
    callback = function(args)
      vim.lsp.buf_attach_client(args.buf, gopls)
    end,
  })
  vim.cmd('edit ' .. vim.fn.fnameescape(env.ws .. '/a.go'))
  local a = vim.api.nvim_get_current_buf()
  H.wait('gopls to initialize', function()
    local c = vim.lsp.get_client_by_id(gopls)
    return c ~= nil and c.initialized ~= false and (c.server_capabilities ~= nil or c.resolved_capabilities ~= nil)
      and next(c.server_capabilities or c.resolved_capabilities) ~= nil
  end, 60000)

  H.dead = function()
    local st = require('cline').state(env.ws)
    return st ~= nil and st.last_stop == 'exited'
  end
  H.stub_ui()
  require('cline').setup({ cmd = H.cmd(), settings = H.settings() })
  H.eq(require('cline.lsptools').declared(), { 'references', 'definition', 'rename', 'documentSymbols' },
    'the plugin declares what gopls answers')

  -- Positions between a server counting UTF-8 bytes and the daemon's
  -- UTF-16: a line with a character outside the BMP before the symbol.
  local c_path = vim.fn.tempname() .. '.go' -- outside the module gopls watches
  local cf = assert(io.open(c_path, 'w'))
  cf:write('package a\n\n// 😀 Answer\n')
  cf:close()
  local lt = require('cline.lsptools')
  local c_uri = vim.uri_from_fname(c_path)
  H.eq(lt.convert(c_uri, { line = 2, character = 8 }, 'utf-8', 'utf-16'), { line = 2, character = 6 },
    'a UTF-8 position becomes UTF-16')
  H.eq(lt.convert(c_uri, { line = 2, character = 6 }, 'utf-16', 'utf-8'), { line = 2, character = 8 },
    'and back')
  H.eq(lt.convert(c_uri, { line = 2, character = 6 }, 'utf-16', 'utf-32'), { line = 2, character = 5 },
    'UTF-32 counts the character once')
  local res = lt.convert_result('textDocument/rename', { changes = { [c_uri] = { { range = {
    start = { line = 2, character = 8 }, ['end'] = { line = 2, character = 14 } }, newText = 'Result' } } } },
    c_uri, 'utf-8', 'utf-16')
  H.eq(res.changes[c_uri][1].range, { start = { line = 2, character = 6 }, ['end'] = { line = 2, character = 12 } },
    "a workspace edit's ranges are converted")
  os.remove(c_path)

  vim.cmd('ClineTask find who uses Answer, then rename Answer to Result')
  local st = require('cline').state(env.ws)
  local preview = H.approve('a')
  H.wait('the turn to end', function()
    return not st.busy
  end, 60000)
  local text = H.text(st.view.buf)
  H.eq(st.last_stop, 'end_turn', 'the turn ends with end_turn (the model saw the references and the rename)', text)
  H.contains(text, 'Done.')

  local ptext = table.concat(preview.lines, '\n')
  H.contains(ptext, '+func Result() int { return 42 }', "the approval shows a.go's change")
  H.contains(ptext, '+func Use() int { return Result() + Result() }', "and b.go's")

  -- gopls renames the doc comment's mention too.
  H.eq(H.lines(a), { 'package a', '', '// Result is the answer.', 'func Result() int { return 42 }' },
    'the rename landed in the open buffer')
  H.expect(vim.bo[a].modified, 'the buffer is modified (unsaved)')
  H.eq(H.read(env.ws .. '/a.go'), 'package a\n\n// Answer is the answer.\nfunc Answer() int { return 42 }\n',
    'a.go on disk is untouched before saving')
  H.eq(H.read(env.ws .. '/b.go'), 'package a\n\nfunc Use() int { return Result() + Result() }\n',
    'b.go, not open, was renamed on disk')
  local b = vim.fn.bufnr(env.ws .. '/b.go')
  H.expect(b == -1 or not vim.api.nvim_buf_is_loaded(b), 'the buffer loaded for the request is gone again')
end

H.run(function()
  local fn = scenarios[env.scenario]
  if not fn then
    H.fail('unknown scenario ' .. tostring(env.scenario))
  end
  fn()
end)
