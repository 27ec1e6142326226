-- The editor's language servers for the daemon's tools (PROTOCOL.md §11):
-- cline/lspRequest {method, params} is asked of the language servers
-- attached to the document's buffer, the user's own, and answered
-- {result} in LSP's shapes. Positions on the cline-ls connection count in
-- its encoding; each server's are converted to and from its own.
local compat = require('cline.compat')

local M = {}

-- The features of experimental.cline.lsp, with the method each one asks
-- and the server capability that answers it.
local features = {
  { name = 'references', method = 'textDocument/references', cap = 'referencesProvider', old = 'find_references' },
  { name = 'definition', method = 'textDocument/definition', cap = 'definitionProvider', old = 'goto_definition' },
  { name = 'rename', method = 'textDocument/rename', cap = 'renameProvider', old = 'rename' },
  { name = 'documentSymbols', method = 'textDocument/documentSymbol', cap = 'documentSymbolProvider', old = 'document_symbol' },
}

local by_method = {}
for _, f in ipairs(features) do
  by_method[f.method] = f
end

-- How long a request waits: for a server to attach to a buffer loaded
-- for it, and for the servers' answers. The daemon's own bound is longer,
-- so the user hears why from here.
M.attach_ms = 10000
M.answer_ms = 20000

local function clients_of(buf)
  if vim.lsp.get_clients then
    return vim.lsp.get_clients({ bufnr = buf })
  end
  return vim.lsp.buf_get_clients(buf)
end

local function all_clients()
  if vim.lsp.get_clients then
    return vim.lsp.get_clients()
  end
  return vim.lsp.get_active_clients()
end

-- supports reports whether a client (a language server, not cline-ls)
-- answers feature f: server_capabilities from 0.8 on, 0.7's
-- resolved_capabilities before.
local function supports(client, f)
  if client.name == 'cline-ls' then
    return false
  end
  local caps = client.server_capabilities
  if type(caps) == 'table' and caps[f.cap] ~= nil then
    return caps[f.cap] ~= false
  end
  local old = client.resolved_capabilities
  return type(old) == 'table' and old[f.old] == true
end

-- declared is what the plugin declares in experimental.cline.lsp: what
-- the running language servers answer, or, when none runs yet (they
-- start with the buffers they serve), every feature: a request no server
-- answers then gets an error that says so.
function M.declared()
  local out, any = {}, false
  for _, f in ipairs(features) do
    for _, c in ipairs(all_clients()) do
      if c.name ~= 'cline-ls' then
        any = true
        if supports(c, f) then
          table.insert(out, f.name)
          break
        end
      end
    end
  end
  if not any then
    for _, f in ipairs(features) do
      table.insert(out, f.name)
    end
  end
  return out
end

-- Positions ------------------------------------------------------------

local function enc_of(client)
  local e = client and client.offset_encoding or 'utf-16'
  return (e == 'utf-8' or e == 'utf-32') and e or 'utf-16'
end

-- line_of returns line n (0-based) of uri's text: the buffer's when
-- loaded, else the file's, reading no further than that line.
local function line_of(uri, n)
  local ok, buf = pcall(vim.uri_to_bufnr, uri)
  if ok and vim.api.nvim_buf_is_loaded(buf) then
    return vim.api.nvim_buf_get_lines(buf, n, n + 1, false)[1] or ''
  end
  local okp, path = pcall(vim.uri_to_fname, uri)
  if not okp or vim.fn.filereadable(path) ~= 1 then
    return ''
  end
  local lines = vim.fn.readfile(path, '', n + 1)
  return lines[n + 1] or ''
end

-- byte_of is the byte index in line of character ch counted in enc;
-- units_of is the count in enc of the first b bytes of line. 0.11 takes
-- the encoding by name and deprecates the older form.
local named_enc = vim.fn.has('nvim-0.11') == 1

local function byte_of(line, ch, enc)
  if enc == 'utf-8' then
    return math.min(ch, #line)
  end
  local ok, b
  if named_enc then
    ok, b = pcall(vim.str_byteindex, line, enc, ch, false)
  else
    ok, b = pcall(vim.str_byteindex, line, ch, enc == 'utf-16')
  end
  return ok and type(b) == 'number' and b or #line
end

local function units_of(line, b, enc)
  b = math.min(b, #line)
  if enc == 'utf-8' then
    return b
  end
  if named_enc then
    local ok, n = pcall(vim.str_utfindex, line, enc, b, false)
    return ok and n or b
  end
  local ok, u32, u16 = pcall(vim.str_utfindex, line, b)
  if not ok then
    return b
  end
  return enc == 'utf-16' and u16 or u32
end

-- convert maps a position of uri from encoding from to encoding to.
local function convert(uri, pos, from, to)
  if from == to or type(pos) ~= 'table' or type(pos.line) ~= 'number' then
    return pos
  end
  local line = line_of(uri, pos.line)
  return { line = pos.line, character = units_of(line, byte_of(line, pos.character or 0, from), to) }
end

local function convert_range(uri, r, from, to)
  if from == to or type(r) ~= 'table' then
    return r
  end
  return { start = convert(uri, r.start, from, to), ['end'] = convert(uri, r['end'], from, to) }
end

-- convert_result maps every range of a result from the server's
-- encoding to the connection's: locations, location links, symbols and
-- workspace edits.
local function convert_result(method, res, doc_uri, from, to)
  if from == to or type(res) ~= 'table' then
    return res
  end
  local function location(l)
    if l.targetUri then
      l.targetRange = convert_range(l.targetUri, l.targetRange, from, to)
      l.targetSelectionRange = convert_range(l.targetUri, l.targetSelectionRange, from, to)
      l.originSelectionRange = convert_range(doc_uri, l.originSelectionRange, from, to)
    elseif l.uri then
      l.range = convert_range(l.uri, l.range, from, to)
    end
  end
  if method == 'textDocument/references' or method == 'textDocument/definition' then
    if res.uri or res.targetUri then
      location(res)
    else
      for _, l in ipairs(res) do
        location(l)
      end
    end
  elseif method == 'textDocument/documentSymbol' then
    local function walk(list)
      for _, s in ipairs(list) do
        if s.location then
          location(s.location)
        else
          s.range = convert_range(doc_uri, s.range, from, to)
          s.selectionRange = convert_range(doc_uri, s.selectionRange, from, to)
          walk(s.children or {})
        end
      end
    end
    walk(res)
  elseif method == 'textDocument/rename' then
    for uri, edits in pairs(res.changes or {}) do
      for _, e in ipairs(edits) do
        e.range = convert_range(uri, e.range, from, to)
      end
    end
    for _, dc in ipairs(res.documentChanges or {}) do
      if dc.textDocument and dc.edits then
        for _, e in ipairs(dc.edits) do
          e.range = convert_range(dc.textDocument.uri, e.range, from, to)
        end
      end
    end
  end
  return res
end

-- For the tests: the conversions between encodings.
M.convert = convert
M.convert_result = convert_result

-- Requests -------------------------------------------------------------

-- buffer_for returns the document's buffer, loading a file not loaded;
-- loaded says the plugin loaded it (and unloads it after).
local function buffer_for(uri)
  local ok, path = pcall(vim.uri_to_fname, uri)
  if not ok or path == '' then
    return nil, false, 'not a file URI: ' .. tostring(uri)
  end
  local buf = vim.fn.bufnr(path)
  if buf > 0 and vim.api.nvim_buf_is_loaded(buf) then
    return buf, false
  end
  if vim.fn.filereadable(path) ~= 1 then
    return nil, false, path .. ' is not a readable file'
  end
  buf = vim.fn.bufadd(path)
  vim.fn.bufload(buf)
  -- bufload reads the file without the autocommands that open it in a
  -- window; the user's servers attach on its filetype.
  if vim.bo[buf].filetype == '' then
    vim.api.nvim_buf_call(buf, function()
      vim.cmd('filetype detect')
    end)
  end
  return buf, true
end

local function error_of(code, message)
  if vim.lsp.rpc and vim.lsp.rpc.rpc_response_error then
    return vim.lsp.rpc.rpc_response_error(code, message)
  end
  return { code = code, message = message }
end

-- merge folds the answers of several servers into one: locations
-- together, the first symbols and the first workspace edit.
local function merge(method, answers)
  if method == 'textDocument/references' or method == 'textDocument/definition' then
    local out, any = {}, false
    for _, a in ipairs(answers) do
      if type(a) == 'table' then
        any = true
        if a.uri or a.targetUri then
          table.insert(out, a)
        else
          vim.list_extend(out, a)
        end
      end
    end
    return any and out or vim.NIL
  end
  for _, a in ipairs(answers) do
    if type(a) == 'table' and next(a) ~= nil then
      return a
    end
  end
  return vim.NIL
end

-- handle answers one cline/lspRequest; self is the cline-ls client whose
-- encoding the params and the answer use.
function M.handle(params, self_client)
  if type(params) ~= 'table' or type(params.method) ~= 'string' or type(params.params) ~= 'table' then
    return nil, error_of(-32602, 'cline/lspRequest needs {method, params}')
  end
  local method, p = params.method, params.params
  local f = by_method[method]
  if not f then
    return nil, error_of(-32601, method .. ' is not a request the plugin asks language servers')
  end
  local doc = type(p.textDocument) == 'table' and p.textDocument.uri
  if type(doc) ~= 'string' then
    return nil, error_of(-32602, 'params.textDocument.uri: required')
  end
  local buf, loaded, why = buffer_for(doc)
  if not buf then
    return nil, error_of(-32602, why)
  end
  local function servers()
    local out = {}
    for _, c in ipairs(clients_of(buf)) do
      if supports(c, f) then
        table.insert(out, c)
      end
    end
    return out
  end
  local list = servers()
  if #list == 0 and loaded then
    vim.wait(M.attach_ms, function()
      list = servers()
      return #list > 0
    end, 50)
  end
  local name = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(buf), ':~:.')
  local function done()
    if loaded and vim.api.nvim_buf_is_valid(buf) and not vim.bo[buf].modified then
      -- Gone again, as the user left it: an edit of a file not open goes
      -- to disk like any other.
      pcall(vim.api.nvim_buf_delete, buf, { unload = false })
    end
  end
  if #list == 0 then
    done()
    return nil, error_of(-32603, 'no language server attached to ' .. name .. ' answers ' .. method)
  end
  local conn = enc_of(self_client)
  local pending, answers, errors = #list, {}, {}
  for _, c in ipairs(list) do
    local enc = enc_of(c)
    local q = vim.deepcopy(p)
    q.position = convert(doc, q.position, conn, enc)
    local ok = compat.request(c, method, q, function(err, result)
      if err then
        table.insert(errors, c.name .. ': ' .. tostring(type(err) == 'table' and err.message or err))
      else
        table.insert(answers, convert_result(method, result, doc, enc, conn))
      end
      pending = pending - 1
    end, buf)
    if not ok then
      table.insert(errors, c.name .. ': not running')
      pending = pending - 1
    end
  end
  local finished = vim.wait(M.answer_ms, function()
    return pending <= 0
  end, 10)
  done()
  if #answers == 0 then
    if not finished then
      return nil, error_of(-32603, 'the language servers of ' .. name .. ' did not answer ' .. method .. ' in time')
    end
    return nil, error_of(-32603, table.concat(errors, '; '))
  end
  return { result = merge(method, answers) }
end

return M
