-- window/showDocument from the daemon: an MCP server's sign-in page
-- (external = true) opens in the user's browser; a file opens in a
-- window, as the LSP spec says. Neovim 0.7 has no handler of its own.
local config = require('cline.config')

local M = {}

-- opener is how a URL is opened: the setup's open_url function, else
-- vim.ui.open (0.10), else $BROWSER or xdg-open (open on macOS).
local function open_url(url)
  local custom = config.options.open_url
  if type(custom) == 'function' then
    local ok, res = pcall(custom, url)
    return ok and res ~= false
  end
  if vim.ui.open and not vim.env.BROWSER then
    local ok, cmd = pcall(vim.ui.open, url)
    return ok and cmd ~= nil
  end
  local prog = vim.env.BROWSER
  if not prog or prog == '' then
    prog = vim.fn.has('mac') == 1 and 'open' or 'xdg-open'
  end
  if vim.fn.executable(prog) ~= 1 then
    return false
  end
  return vim.fn.jobstart({ prog, url }, { detach = true }) > 0
end

function M.show_document(_, params)
  if type(params) ~= 'table' or type(params.uri) ~= 'string' then
    return { success = false }
  end
  if params.external then
    local ok = open_url(params.uri)
    if not ok then
      -- Never dropped: the user can open it by hand.
      vim.notify('cline: open this address in your browser: ' .. params.uri, vim.log.levels.WARN)
    end
    return { success = ok }
  end
  local bufnr = vim.uri_to_bufnr(params.uri)
  vim.fn.bufload(bufnr)
  if params.takeFocus then
    vim.cmd('buffer ' .. bufnr)
  end
  return { success = true }
end

return M
