-- Mentions in a prompt: `@path` names a file and `@path:12-20` (or
-- `@path:12`) some of its lines. Each mention that names a readable file
-- under the root is sent with the prompt as a resource block holding the
-- text, taken from the open buffer when there is one (so unsaved text is
-- what the model reads), else from disk. The mention itself stays in the
-- text, so the model sees where the user referred to it.
local paths = require('cline.paths')
local api = vim.api

local M = {}

-- The largest text a mention sends; the model can read the rest itself.
M.max_bytes = 64 * 1024

-- parse returns the mentions in text: {path, first?, last?} in order,
-- each path once per range.
function M.parse(text)
  local out, seen = {}, {}
  -- A mention starts the text or follows a space or an opening bracket.
  for path, range in ((' ' .. text)):gmatch('[%s%(%[]@([%w%._%-/~]+[%w_%-/])(:?[%d%-]*)') do
    local first, last = range:match('^:(%d+)%-(%d+)$')
    if not first then
      first = range:match('^:(%d+)$')
      last = first
    end
    local m = { path = path, first = tonumber(first), last = tonumber(last) }
    local key = path .. ':' .. tostring(m.first) .. '-' .. tostring(m.last)
    if not seen[key] then
      seen[key] = true
      table.insert(out, m)
    end
  end
  return out
end

-- token is the mention of path (relative to root when inside it), with
-- lines first..last when given.
function M.token(path, root, first, last)
  path = paths.relative(path, root)
  if first and last and last ~= first then
    return string.format('@%s:%d-%d', path, first, last)
  elseif first then
    return string.format('@%s:%d', path, first)
  end
  return '@' .. path
end

local function loaded_buffer(path)
  for _, b in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(b) and api.nvim_buf_get_name(b) == path then
      return b
    end
  end
end

local function read_lines(path)
  local buf = loaded_buffer(path)
  if buf then
    return api.nvim_buf_get_lines(buf, 0, -1, false)
  end
  if vim.fn.filereadable(path) ~= 1 then
    return nil
  end
  local ok, lines = pcall(vim.fn.readfile, path, '', 100000)
  return ok and lines or nil
end

-- blocks returns the prompt's content blocks: the text, then a resource
-- block per mention of a readable file under root (outside it the
-- daemon could not read it either, so it is left as text).
function M.blocks(text, root)
  local blocks = { { type = 'text', text = text } }
  for _, m in ipairs(M.parse(text)) do
    local path = m.path
    if path:sub(1, 1) == '~' then
      path = vim.fn.expand(path)
    elseif path:sub(1, 1) ~= '/' then
      path = root .. '/' .. path
    end
    path = vim.fn.fnamemodify(path, ':p')
    local under = paths.inside(path, root) and path ~= root
    local lines = under and read_lines(path)
    if lines then
      local first, last = m.first or 1, m.last or #lines
      if first > last then
        first, last = last, first
      end
      local part = {}
      for i = first, math.min(last, #lines) do
        table.insert(part, lines[i])
      end
      local body = table.concat(part, '\n')
      if #body > M.max_bytes then
        body = body:sub(1, M.max_bytes) .. '\n[cut: the rest is in the file]'
      end
      local uri = vim.uri_from_fname(path)
      if m.first then
        uri = string.format('%s#L%d-%d', uri, first, last)
      end
      table.insert(blocks, { type = 'resource', resource = { uri = uri, text = body, mimeType = 'text/plain' } })
    end
  end
  return blocks
end

-- complete is the session buffer's 'omnifunc': after an @, the files
-- and folders of the root whose path starts with what follows it.
function M.complete(findstart, base)
  local line = vim.api.nvim_get_current_line()
  local col = vim.api.nvim_win_get_cursor(0)[2]
  if findstart == 1 then
    local before = line:sub(1, col)
    local at = before:match('.*()@[%w%._%-/~]*$')
    if not at then
      return -3 -- not after a mention: leave completion mode quietly
    end
    return at -- the byte after the @ (0-based column)
  end
  local ok, root = pcall(vim.api.nvim_buf_get_var, 0, 'cline_root')
  if not ok then
    return {}
  end
  local out = {}
  for _, p in ipairs(vim.fn.glob(root .. '/' .. base .. '*', false, true)) do
    local rel = paths.relative(p, root)
    if vim.fn.isdirectory(p) == 1 then
      rel = rel .. '/'
    end
    table.insert(out, rel)
  end
  return out
end

return M
