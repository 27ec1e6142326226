-- :checkhealth cline: what the plugin needs and finds. The daemon's key
-- variables are named, never shown.
local compat = require('cline.compat')
local config = require('cline.config')

local M = {}

-- key_vars are the variables the daemon looks a provider's key up in when
-- the settings name none (apiKeyEnv).
local key_vars = {
  anthropic = 'ANTHROPIC_API_KEY',
  openai = 'OPENAI_API_KEY',
  gemini = 'GEMINI_API_KEY',
}

-- version runs the daemon's `version` subcommand, bounded: its first line,
-- or nil and why.
local function version(bin)
  local out = {}
  local ok, job = pcall(vim.fn.jobstart, { bin, 'version' }, {
    stdout_buffered = true,
    on_stdout = function(_, data)
      out = data or {}
    end,
  })
  if not ok or job <= 0 then
    return nil, 'it could not be started'
  end
  local code = vim.fn.jobwait({ job }, 5000)[1]
  if code == -1 then
    vim.fn.jobstop(job)
    return nil, '`' .. bin .. ' version` did not answer within 5 s'
  end
  if code ~= 0 then
    return nil, '`' .. bin .. ' version` exited with ' .. code
  end
  return require('cline.safe').visible(out[1] or '', 'line')
end

function M.check()
  local h = compat.health()
  h.start('cline: Neovim')
  local v = vim.version()
  local nv = string.format('%d.%d.%d', v.major, v.minor, v.patch)
  if vim.fn.has('nvim-0.7') == 1 then
    h.ok('Neovim ' .. nv)
  else
    h.error('Neovim ' .. nv .. ': 0.7 or newer is needed')
  end
  if require('cline.diagnostics').available() then
    h.ok('vim.diagnostic: the daemon gets the editor diagnostics of what it edits')
  else
    h.warn('no vim.diagnostic: edits are not checked against the editor diagnostics')
  end
  if vim.fn.has('nvim-0.10') == 1 then
    h.ok('questions wait for any picker (telescope, dressing)')
  else
    h.info('Neovim before 0.10: a picker that answers later is asked again with inputlist()')
  end

  h.start('cline: the daemon')
  local cmd = config.options.cmd or {}
  local bin = cmd[1]
  local path = bin and vim.fn.exepath(bin) or ''
  if path == '' then
    h.error('`' .. tostring(bin) .. '` is not found on the PATH', {
      'go install ./cmd/cline-ls in the cline-ls checkout (it goes to $(go env GOPATH)/bin), or',
      "require('cline').setup({ cmd = { '/path/to/cline-ls' } })",
    })
  else
    h.ok('found: ' .. path)
    local ver, why = version(path)
    if ver then
      h.ok('version: ' .. ver)
    else
      h.error('its version: ' .. why)
    end
  end

  h.start('cline: the model')
  local settings = config.options.settings or {}
  local p = type(settings.provider) == 'table' and settings.provider or {}
  local name = p.name or vim.env.CLINE_LS_PROVIDER
  local model = p.model or vim.env.CLINE_LS_MODEL
  local keyvar = p.apiKeyEnv or vim.env.CLINE_LS_API_KEY_ENV
  if name then
    h.ok(string.format('provider %s, model %s', name, model or "(the provider's default)"))
  else
    local found
    for _, n in ipairs({ 'anthropic', 'openai', 'gemini' }) do
      if (vim.env[key_vars[n]] or '') ~= '' then
        found = found or n
      end
    end
    if found then
      h.ok('no provider set: the daemon takes ' .. found .. ', whose key variable is set')
      name = found
    else
      h.warn('no provider set and no key variable found', {
        'set ANTHROPIC_API_KEY (or OPENAI_API_KEY, GEMINI_API_KEY) in the environment Neovim starts from, or',
        "require('cline').setup({ settings = { provider = { name = 'anthropic', model = 'claude-sonnet-4-5', apiKeyEnv = 'ANTHROPIC_API_KEY' } } })",
      })
    end
  end
  if name == 'replay' then
    h.ok('the replay provider needs no key')
  elseif name then
    keyvar = keyvar or key_vars[name]
    if not keyvar then
      h.info('the key of provider ' .. name .. ' comes from its settings (apiKeyEnv names the variable)')
    elseif (vim.env[keyvar] or '') ~= '' then
      h.ok('the key variable ' .. keyvar .. ' is set')
    else
      h.error('the key variable ' .. keyvar .. ' is not set in the environment Neovim started from')
    end
  end
end

return M
