-- Named scratch buffers shown in splits: the approval preview and the
-- diff buffer.
local api = vim.api
local visible = require('cline.safe').visible

local M = {}

-- buffer returns the scratch buffer called name, making it on first use.
function M.buffer(name, filetype)
  local buf = vim.fn.bufnr(name)
  if buf ~= -1 and api.nvim_buf_is_valid(buf) then
    return buf
  end
  buf = api.nvim_create_buf(false, true)
  api.nvim_buf_set_name(buf, name)
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  vim.bo[buf].modifiable = false
  if filetype then
    vim.bo[buf].filetype = filetype
  end
  vim.keymap.set('n', 'q', '<cmd>close<cr>', { buffer = buf, silent = true })
  return buf
end

-- set replaces (or, with append, extends) a scratch buffer's lines,
-- which come from the daemon and are made visible.
function M.set(buf, lines, append)
  local shown = {}
  for i, l in ipairs(lines) do
    shown[i] = visible(l, 'line')
  end
  lines = shown
  vim.bo[buf].modifiable = true
  if append and not (api.nvim_buf_line_count(buf) == 1 and api.nvim_buf_get_lines(buf, 0, 1, false)[1] == '') then
    api.nvim_buf_set_lines(buf, -1, -1, false, lines)
  else
    api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  end
  vim.bo[buf].modifiable = false
end

-- show opens buf with the split command unless a window shows it already,
-- keeps the cursor in the current window and returns buf's window.
function M.show(buf, split, height)
  local wins = vim.fn.win_findbuf(buf)
  if #wins > 0 then
    return wins[1], false
  end
  local prev = api.nvim_get_current_win()
  vim.cmd(split)
  local win = api.nvim_get_current_win()
  api.nvim_win_set_buf(win, buf)
  if height then
    pcall(api.nvim_win_set_height, win, height)
  end
  vim.wo[win].wrap = false
  vim.wo[win].number = false
  vim.wo[win].relativenumber = false
  if api.nvim_win_is_valid(prev) then
    api.nvim_set_current_win(prev)
  end
  return win, true
end

-- bottom moves every window showing buf to its last line.
function M.bottom(buf)
  local n = api.nvim_buf_line_count(buf)
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    api.nvim_win_set_cursor(win, { n, 0 })
  end
end

function M.close(win)
  if win and api.nvim_win_is_valid(win) and #api.nvim_list_wins() > 1 then
    pcall(api.nvim_win_close, win, true)
  end
end

return M
