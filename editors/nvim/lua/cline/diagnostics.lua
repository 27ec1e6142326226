-- The editor's diagnostics for the daemon (cline/diagnostics): every
-- source's, in LSP's shape, tagged with the version the buffer's last
-- didChange carried, so the daemon can tell a report of the text it
-- edited from one of the text before.
local M = {}

-- max bounds one report: the daemon keeps no more.
M.max = 200

-- available reports whether this Neovim has vim.diagnostic and its
-- DiagnosticChanged event (0.6 on), without which the plugin has nothing
-- to send and does not declare the capability.
function M.available()
  return vim.diagnostic ~= nil and vim.fn.exists('##DiagnosticChanged') == 1
end

-- version is the buffer's version as Neovim's LSP client last sent it in
-- didOpen or didChange: buf_versions is what it sends; its changedtick
-- where that table is gone.
local function version(buf)
  local bv = vim.lsp.util and vim.lsp.util.buf_versions
  local v = bv and bv[buf]
  if v == nil then
    v = vim.b[buf].changedtick
  end
  return v
end

local function code(d)
  local c = d.code
  if c == nil and type(d.user_data) == 'table' and type(d.user_data.lsp) == 'table' then
    c = d.user_data.lsp.code
  end
  if type(c) == 'string' or type(c) == 'number' then
    return c
  end
  return nil
end

-- report is the cline/diagnostics params for buf.
function M.report(buf)
  local list = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if #list >= M.max then
      break
    end
    local lnum, col = d.lnum or 0, d.col or 0
    table.insert(list, {
      range = {
        start = { line = lnum, character = col },
        ['end'] = { line = d.end_lnum or lnum, character = d.end_col or col },
      },
      severity = d.severity,
      source = d.source,
      code = code(d),
      message = tostring(d.message or ''),
    })
  end
  return { uri = vim.uri_from_bufnr(buf), version = version(buf), diagnostics = list }
end

return M
