-- cline/diff (PROTOCOL.md §5): after every applied edit the daemon sends
-- the compact line diff; it goes to a diff buffer per root (or inline in
-- the session buffer), and a one-line summary to the session buffer.
local config = require('cline.config')
local paths = require('cline.paths')
local scratch = require('cline.scratch')

local M = {}

-- body turns the diff text into buffer lines, dropping markdown fences.
function M.body(diff)
  local out = {}
  for _, l in ipairs(vim.split((diff or ''):gsub('\n+$', ''), '\n', { plain = true })) do
    if not l:match('^```') then
      table.insert(out, l)
    end
  end
  return out
end

-- display turns a file URI into a path relative to root when inside it.
function M.display(uri, root)
  local ok, path = pcall(vim.uri_to_fname, uri or '')
  if not ok or not path or path == '' then
    return uri or '?'
  end
  return paths.relative(path, root)
end

function M.buffer_name(root)
  return 'cline://diffs/' .. root
end

-- show handles one cline/diff for the session view of root. Each edit
-- is shown once: an edit whose diff an approval already showed
-- (previewed) gets its one-line summary in the session buffer; another
-- gets the diff there too. The diff buffer (:ClineDiffs) keeps them all
-- and is opened only with diff_view = 'split'.
function M.show(p, root, view, previewed)
  local path = M.display(p.uri, root)
  local summary = string.format('[diff] %s +%d -%d', path, tonumber(p.added) or 0, tonumber(p.removed) or 0)
  local body = M.body(p.diff)
  local mode = config.options.diff_view
  view:marker('tool', summary)
  if mode == 'session' and not previewed then
    local indented = {}
    for i, l in ipairs(body) do
      indented[i] = '    ' .. l
    end
    view:append(indented)
  end
  if mode == 'none' then
    return
  end
  local buf = scratch.buffer(M.buffer_name(root), 'diff')
  pcall(vim.api.nvim_buf_set_var, buf, 'cline_root', root)
  local header = string.format('=== %s (+%d -%d)', path, tonumber(p.added) or 0, tonumber(p.removed) or 0)
  local lines = { header }
  vim.list_extend(lines, body)
  table.insert(lines, '')
  scratch.set(buf, lines, true)
  if mode == 'split' then
    pcall(scratch.show, buf, config.options.diff_split, 12)
  end
  scratch.bottom(buf)
end

return M
