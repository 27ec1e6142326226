-- Shims over the Neovim APIs that changed between 0.7 (Debian's) and
-- current releases, so the rest of the plugin calls one spelling.
local M = {}

-- 0.11 turned client functions into methods (client:request) and
-- deprecated the dot form; 0.7 only has the dot form.
local methods = vim.fn.has('nvim-0.11') == 1

function M.request(client, method, params, handler, bufnr)
  if methods then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

function M.notify(client, method, params)
  if methods then
    return client:notify(method, params)
  end
  return client.notify(method, params)
end

function M.stop(client, force)
  if methods then
    return client:stop(force)
  end
  return client.stop(force)
end

function M.is_stopped(client)
  if methods then
    return client:is_stopped()
  end
  return client.is_stopped()
end

-- start_client starts a client without attaching it to any buffer and
-- returns its id. vim.lsp.start_client is deprecated from 0.11 on, where
-- vim.lsp.start takes attach = false; reuse is the caller's business.
function M.start_client(config)
  if methods and vim.lsp.start then
    return vim.lsp.start(config, {
      attach = false,
      reuse_client = function()
        return false
      end,
    })
  end
  return vim.lsp.start_client(config)
end

-- in_coroutine reports whether the caller may yield: from 0.10 on, server
-- requests are handled inside a coroutine, so a handler can wait for an
-- asynchronous vim.ui.select; on 0.7 it runs on the main thread.
function M.in_coroutine()
  local co, main = coroutine.running()
  return co ~= nil and not main, co
end

M.uv = vim.uv or vim.loop

-- health returns the :checkhealth reporters as start, ok, warn, error and
-- info: vim.health's from 0.10 (0.9), the health module's report_* on
-- 0.7 and 0.8.
function M.health()
  local h = vim.health
  if h and h.start then
    return { start = h.start, ok = h.ok, warn = h.warn, error = h.error, info = h.info }
  end
  h = require('health')
  return { start = h.report_start, ok = h.report_ok, warn = h.report_warn, error = h.report_error, info = h.report_info }
end

-- get_buf_option and set_buf_option read and set a buffer's option
-- through the API: vim.bo costs several times as much, which counts on
-- the session buffer's path of every streamed chunk. 0.7 lacks the buf
-- key of nvim_get_option_value; later versions deprecate the buf form.
if vim.fn.has('nvim-0.10') == 1 then
  function M.get_buf_option(buf, name)
    return vim.api.nvim_get_option_value(name, { buf = buf })
  end
  function M.set_buf_option(buf, name, value)
    vim.api.nvim_set_option_value(name, value, { buf = buf })
  end
else
  M.get_buf_option = vim.api.nvim_buf_get_option
  M.set_buf_option = vim.api.nvim_buf_set_option
end

return M
