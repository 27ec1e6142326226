-- Per-hunk answers to an edit's approval, in vimdiff. From the approval
-- view, d opens a tab (the user's windows stay as they are) with the
-- proposal on the left and the file's own buffer on the right, in diff
-- mode: the user takes the hunks wanted into the buffer (do there, dp
-- from the proposal, or any edit), then ga answers. Taking every hunk is
-- "allow"; taking none is "reject"; taking some is "allow" with the text
-- the buffer then holds (keptText), which the daemon applies instead of
-- the proposal: an edit like any other, with its checkpoint (undo takes
-- it back) and the model told which part landed. The buffer is put back
-- as it was before the answer either way, so that the daemon's edit is
-- what changes it.
local api = vim.api

local M = {}

-- parse reads a unified diff of one file: {from, to, hunks}, each hunk
-- {old = its first old line, lines = {' ctx', '-old', '+new', ...}}, read
-- by the counts of its header (a removed line may itself start with
-- "--"). It returns nil and why for anything else (several files, no
-- hunk).
function M.parse(diff)
  local out = { hunks = {} }
  local files = 0
  local lines = vim.split(diff or '', '\n', { plain = true })
  local i = 1
  while i <= #lines do
    local l = lines[i]
    if l:match('^%-%-%- ') then
      files = files + 1
      out.from = l:sub(5)
    elseif l:match('^%+%+%+ ') then
      out.to = l:sub(5)
    elseif l:match('^@@') then
      local old, oc, nc = l:match('^@@ %-(%d+),?(%d*) %+%d+,?(%d*) @@')
      if not old then
        return nil, 'a hunk header it cannot read: ' .. l
      end
      oc, nc = tonumber(oc) or 1, tonumber(nc) or 1
      local h = { old = tonumber(old), lines = {} }
      while oc > 0 or nc > 0 do
        i = i + 1
        local x = lines[i]
        if x == nil then
          return nil, 'a hunk ends early'
        end
        local sign = x:sub(1, 1)
        if sign == '\\' then
          -- "\ No newline at end of file": buffers hold lines, not bytes.
          local _ = x
        elseif sign == '+' then
          nc = nc - 1
          table.insert(h.lines, x)
        elseif sign == '-' then
          oc = oc - 1
          table.insert(h.lines, x)
        else
          oc, nc = oc - 1, nc - 1
          table.insert(h.lines, ' ' .. x:sub(2))
        end
      end
      table.insert(out.hunks, h)
    end
    i = i + 1
  end
  if files ~= 1 then
    return nil, 'the edit changes ' .. files .. ' files; pick hunks of one file only'
  end
  if #out.hunks == 0 then
    return nil, 'the diff has no hunk'
  end
  return out
end

-- apply applies a parsed diff to lines and returns the new lines, or nil
-- and why when the lines no longer match it.
function M.apply(lines, parsed)
  local out, pos = {}, 1
  for _, h in ipairs(parsed.hunks) do
    local start = math.max(h.old, 1)
    if h.old == 0 then
      start = 1
    end
    while pos < start do
      table.insert(out, lines[pos])
      pos = pos + 1
    end
    for _, l in ipairs(h.lines) do
      local sign, text = l:sub(1, 1), l:sub(2)
      if sign == '+' then
        table.insert(out, text)
      else
        if lines[pos] ~= text then
          return nil, string.format('line %d is %q, the diff expects %q', pos, tostring(lines[pos]), text)
        end
        if sign == ' ' then
          table.insert(out, text)
        end
        pos = pos + 1
      end
    end
  end
  while pos <= #lines do
    table.insert(out, lines[pos])
    pos = pos + 1
  end
  return out
end

local function same(a, b)
  if #a ~= #b then
    return false
  end
  for i = 1, #a do
    if a[i] ~= b[i] then
      return false
    end
  end
  return true
end

-- target is the file the approval's edit changes: its first location,
-- else the diff's "+++ b/path" under root.
local function target(req, parsed, root)
  local tc = type(req.toolCall) == 'table' and req.toolCall or {}
  local loc = type(tc.locations) == 'table' and tc.locations[1]
  if type(loc) == 'table' and type(loc.path) == 'string' and loc.path ~= '' then
    return loc.path
  end
  local p = (parsed.to or ''):gsub('^b/', '')
  if p == '' or p == '/dev/null' then
    return nil
  end
  if p:sub(1, 1) ~= '/' and root then
    p = root .. '/' .. p
  end
  return p
end

-- open shows the approval's edit in a diff tab. answer(kind, feedback, kept)
-- answers the approval. It returns false and why when the edit cannot be
-- split into hunks here.
function M.open(req, root, answer)
  local parsed, why = M.parse(req.diff)
  if not parsed then
    return false, why
  end
  local path = target(req, parsed, root)
  if not path then
    return false, 'the edit creates or deletes a file; answer it whole'
  end
  local buf = vim.fn.bufadd(path)
  vim.fn.bufload(buf)
  vim.bo[buf].buflisted = true
  local before = api.nvim_buf_get_lines(buf, 0, -1, false)
  local proposed, bad = M.apply(before, parsed)
  if not proposed then
    return false, 'the buffer changed since the edit was proposed (' .. bad .. '); answer it whole'
  end
  local shown = require('cline.paths').relative(path, root)

  vim.cmd('tabnew')
  local tab = api.nvim_get_current_tabpage()
  local pbuf = api.nvim_get_current_buf()
  vim.bo[pbuf].buftype = 'nofile'
  vim.bo[pbuf].bufhidden = 'wipe'
  vim.bo[pbuf].swapfile = false
  pcall(api.nvim_buf_set_name, pbuf, 'cline://proposed/' .. shown)
  api.nvim_buf_set_lines(pbuf, 0, -1, false, proposed)
  vim.bo[pbuf].modifiable = false
  vim.bo[pbuf].filetype = vim.bo[buf].filetype
  vim.cmd('diffthis')
  vim.cmd('rightbelow vsplit')
  api.nvim_win_set_buf(0, buf)
  vim.cmd('diffthis')
  local bwin = api.nvim_get_current_win()

  local done = false
  local function unmap()
    for _, b in ipairs({ buf, pbuf }) do
      if api.nvim_buf_is_valid(b) then
        pcall(vim.keymap.del, 'n', 'ga', { buffer = b })
        pcall(vim.keymap.del, 'n', 'gq', { buffer = b })
      end
    end
  end
  -- The tab closed some other way: the file's buffer gets its own ga
  -- back, and nothing typed there later answers the approval.
  api.nvim_create_autocmd('TabClosed', {
    callback = function()
      if api.nvim_tabpage_is_valid(tab) then
        return false
      end
      done = true
      unmap()
      return true -- once
    end,
  })
  local function here()
    return api.nvim_tabpage_is_valid(tab) and api.nvim_get_current_tabpage() == tab
  end
  local function leave()
    unmap()
    if api.nvim_tabpage_is_valid(tab) then
      for _, w in ipairs(api.nvim_tabpage_list_wins(tab)) do
        api.nvim_win_call(w, function()
          vim.cmd('diffoff')
        end)
      end
      if #api.nvim_list_tabpages() > 1 then
        local nr = api.nvim_tabpage_get_number(tab)
        vim.cmd('tabclose ' .. nr)
      end
    end
  end
  local function accept()
    if done or not here() then
      return
    end
    done = true
    local now = api.nvim_buf_get_lines(buf, 0, -1, false)
    leave()
    if same(now, before) then
      answer('reject_once', nil)
      return
    end
    api.nvim_buf_set_lines(buf, 0, -1, false, before)
    if same(now, proposed) then
      -- All of it: the daemon applies the edit as proposed.
      answer('allow_once', nil)
    else
      -- The text as the daemon's mirror of the buffer holds it (as
      -- Neovim's LSP client sends it: the end of line after the last
      -- line with 'eol').
      local nl = vim.bo[buf].fileformat == 'dos' and '\r\n' or '\n'
      local text = table.concat(now, nl)
      if vim.bo[buf].eol then
        text = text .. nl
      end
      answer('allow_once', nil, text)
    end
  end
  for _, b in ipairs({ buf, pbuf }) do
    vim.keymap.set('n', 'ga', accept, { buffer = b, nowait = true, silent = true, desc = 'Cline: answer with the hunks taken' })
    vim.keymap.set('n', 'gq', function()
      done = true
      leave()
    end, { buffer = b, nowait = true, silent = true, desc = 'Cline: leave the hunks (the approval still waits)' })
  end
  api.nvim_set_current_win(bwin)
  vim.notify('cline: take the hunks you want into ' .. require('cline.safe').visible(shown, 'exact') .. ' (do here, dp from the proposal), then ga; gq leaves', vim.log.levels.INFO)
  return true
end

return M
