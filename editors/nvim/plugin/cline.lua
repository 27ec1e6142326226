-- Commands of the cline-ls client. require('cline').setup{...} configures
-- it; without a setup call the commands use the defaults.
if vim.g.loaded_cline then
  return
end
vim.g.loaded_cline = true

if vim.fn.has('nvim-0.7') ~= 1 then
  vim.api.nvim_err_writeln('cline: Neovim 0.7 or newer is needed')
  return
end

local function cline()
  return require('cline')
end

-- with_text runs fn with the command's text, asking for it when empty.
local function with_text(prompt, fn)
  return function(args)
    if args.args ~= '' then
      return fn(args.args)
    end
    vim.ui.input({ prompt = prompt }, function(text)
      if text and text ~= '' then
        fn(text)
      end
    end)
  end
end

local modes = { 'plan', 'act', 'search', 'minimal', 'yolo' }

local function complete_modes()
  return modes
end

local function complete_files(arg)
  return vim.fn.getcompletion(arg, 'file')
end

-- subcommands are the actions, each once: :Cline {name} runs one, and
-- each keeps its own command (the alias, ClineTask for task) and its
-- <Plug>(cline-{name}) mapping when it has one (plug: the modes).
-- run(args) takes the command's args ({args, range, line1, line2}).
local subcommands = {
  { 'task', 'Task', with_text('Cline task: ', function(text)
    cline().task(text)
  end), nargs = '*', plug = 'n', desc = 'Send a task to Cline in act mode' },
  { 'plan', 'Plan', with_text('Cline plan: ', function(text)
    cline().plan(text)
  end), nargs = '*', plug = 'n', desc = 'Ask Cline for a plan (plan mode: no edits)' },
  { 'act', 'Act', function(args)
    cline().act(args.args)
  end, nargs = '*', plug = 'n', desc = 'Switch the Cline session to act mode (and send text, if any)' },
  { 'mode', 'Mode', function(args)
    if args.args ~= '' then
      return cline().set_mode(args.args)
    end
    vim.ui.select(modes, { prompt = 'Cline mode:' }, function(mode)
      if mode then
        cline().set_mode(mode)
      end
    end)
  end, nargs = '?', complete = complete_modes, plug = 'n', desc = 'Switch the Cline session to a mode' },
  { 'model', 'Model', with_text('Cline model ([provider] model): ', function(text)
    cline().set_model(text)
  end), nargs = '*', plug = 'n', desc = 'Switch the model (and provider) of the Cline daemon' },
  { 'send', 'Send', function()
    cline().send()
  end, plug = 'n', desc = "Send the session buffer's prompt area" },
  { 'mention', 'Mention', function(args)
    if args.args ~= '' then
      return cline().mention(args.args)
    end
    if args.range > 0 then
      return cline().mention(nil, args.line1, args.line2)
    end
    cline().mention()
  end, nargs = '?', range = true, complete = complete_files, plug = 'nx',
    desc = 'Mention the file, the selected lines or {file} in the Cline prompt area' },
  { 'sessions', 'Sessions', function()
    cline().sessions()
  end, plug = 'n', desc = 'Resume an earlier Cline session' },
  { 'fork', 'Fork', function(args)
    cline().fork(tonumber(args.args) or 0)
  end, nargs = '?', plug = 'n', desc = 'Fork the Cline session (up to turn N, or all of it) and continue in the fork' },
  { 'undo', 'Undo', function()
    cline().undo()
  end, plug = 'n', desc = 'Undo the last Cline turn: its edits and its part of the conversation' },
  { 'checkpoints', 'Checkpoints', function()
    cline().checkpoints()
  end, plug = 'n', desc = "List the session's checkpoints, preview one, restore it" },
  { 'approve', 'Approve', function()
    if not require('cline.approvals').show(true) then
      vim.notify('cline: no approval is waiting', vim.log.levels.INFO)
    end
  end, plug = 'n', desc = 'Go to the waiting Cline approval (then a, A, r, R or q)' },
  { 'cancel', 'Cancel', function()
    cline().cancel()
  end, plug = 'n', desc = 'Cancel the running Cline turn' },
  { 'new', 'New', function(args)
    cline().new_session(args.args)
  end, nargs = '?', complete = complete_modes, plug = 'n', desc = 'Start a new Cline session' },
  { 'open', 'Open', function()
    cline().open()
  end, plug = 'n', desc = 'Show the Cline session buffer' },
  { 'diffs', 'Diffs', function()
    cline().open_diffs()
  end, plug = 'n', desc = "Show the diffs of Cline's edits" },
  { 'stop', 'Stop', function()
    cline().stop()
  end, desc = 'Stop the cline-ls daemon of this workspace' },
  { 'health', nil, function()
    vim.cmd('checkhealth cline')
  end, desc = 'Check the cline-ls setup (:checkhealth cline)' },
}

local by_name = {}
for _, c in ipairs(subcommands) do
  by_name[c[1]] = c
end

local command = vim.api.nvim_create_user_command

for _, c in ipairs(subcommands) do
  if c[2] then
    command('Cline' .. c[2], c[3], { nargs = c.nargs, range = c.range, complete = c.complete, desc = c.desc })
  end
  if c.plug then
    for mode in c.plug:gmatch('.') do
      -- From visual mode ':' puts the selection's range before the command.
      local rhs = mode == 'x' and (':Cline ' .. c[1] .. '<CR>') or ('<Cmd>Cline ' .. c[1] .. '<CR>')
      vim.keymap.set(mode, '<Plug>(cline-' .. c[1] .. ')', rhs, { silent = true, desc = 'Cline: ' .. c.desc })
    end
  end
end

-- :Cline {subcommand} [args]: the name, then what its own command takes.
command('Cline', function(args)
  local name, rest = args.args:match('^%s*(%S+)%s*(.-)%s*$')
  local c = name and by_name[name]
  if not c then
    local names = {}
    for _, s in ipairs(subcommands) do
      table.insert(names, s[1])
    end
    vim.notify('cline: ' .. (name and ('no subcommand ' .. name) or 'which subcommand?') .. ' (' .. table.concat(names, ', ') .. ')',
      vim.log.levels.WARN)
    return
  end
  if rest ~= '' and not c.nargs then
    vim.notify('cline: ' .. name .. ' takes no argument', vim.log.levels.WARN)
    return
  end
  c[3]({ args = rest, range = args.range, line1 = args.line1, line2 = args.line2 })
end, {
  nargs = '+',
  range = true,
  complete = function(arg, line)
    local words = vim.split(line:match('Cline%s+(.*)$') or '', '%s+')
    if #words <= 1 then
      local out = {}
      for _, c in ipairs(subcommands) do
        if c[1]:sub(1, #arg) == arg then
          table.insert(out, c[1])
        end
      end
      return out
    end
    local c = by_name[words[1]]
    if c and c.complete then
      local got = c.complete(arg)
      local out = {}
      for _, x in ipairs(got) do
        if x:sub(1, #arg) == arg then
          table.insert(out, x)
        end
      end
      return out
    end
    return {}
  end,
  desc = 'Cline: :Cline {subcommand} [args] (task, plan, open, approve, undo, ...)',
})
