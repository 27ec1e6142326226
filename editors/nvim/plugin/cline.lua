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

local command = vim.api.nvim_create_user_command

command('ClineTask', with_text('Cline task: ', function(text)
  cline().task(text)
end), { nargs = '*', desc = 'Send a task to Cline in act mode' })

command('ClinePlan', with_text('Cline plan: ', function(text)
  cline().plan(text)
end), { nargs = '*', desc = 'Ask Cline for a plan (plan mode: no edits)' })

command('ClineAct', function(args)
  cline().act(args.args)
end, { nargs = '*', desc = 'Switch the Cline session to act mode (and send text, if any)' })

local modes = { 'plan', 'act', 'search', 'minimal', 'yolo' }

command('ClineMode', function(args)
  if args.args ~= '' then
    return cline().set_mode(args.args)
  end
  vim.ui.select(modes, { prompt = 'Cline mode:' }, function(mode)
    if mode then
      cline().set_mode(mode)
    end
  end)
end, {
  nargs = '?',
  complete = function()
    return modes
  end,
  desc = 'Switch the Cline session to a mode',
})

command('ClineModel', with_text('Cline model ([provider] model): ', function(text)
  cline().set_model(text)
end), { nargs = '*', desc = 'Switch the model (and provider) of the Cline daemon' })

command('ClineSend', function()
  cline().send()
end, { desc = "Send the session buffer's prompt area" })

command('ClineMention', function(args)
  if args.args ~= '' then
    return cline().mention(args.args)
  end
  if args.range > 0 then
    return cline().mention(nil, args.line1, args.line2)
  end
  cline().mention()
end, {
  nargs = '?',
  range = true,
  complete = 'file',
  desc = 'Mention the file, the selected lines or {file} in the Cline prompt area',
})

command('ClineSessions', function()
  cline().sessions()
end, { desc = 'Resume an earlier Cline session' })

command('ClineFork', function(args)
  cline().fork(tonumber(args.args) or 0)
end, { nargs = '?', desc = 'Fork the Cline session (up to turn N, or all of it) and continue in the fork' })

command('ClineUndo', function()
  cline().undo()
end, { desc = "Undo the last Cline turn: its edits and its part of the conversation" })

command('ClineCheckpoints', function()
  cline().checkpoints()
end, { desc = "List the session's checkpoints, preview one, restore it" })

command('ClineApprove', function()
  if not require('cline.approvals').show(true) then
    vim.notify('cline: no approval is waiting', vim.log.levels.INFO)
  end
end, { desc = 'Go to the waiting Cline approval (then a, A, r, R or q)' })

command('ClineCancel', function()
  cline().cancel()
end, { desc = 'Cancel the running Cline turn' })

command('ClineNew', function(args)
  cline().new_session(args.args)
end, {
  nargs = '?',
  complete = function()
    return modes
  end,
  desc = 'Start a new Cline session',
})

command('ClineOpen', function()
  cline().open()
end, { desc = 'Show the Cline session buffer' })

command('ClineDiffs', function()
  cline().open_diffs()
end, { desc = "Show the diffs of Cline's edits" })

command('ClineStop', function()
  cline().stop()
end, { desc = 'Stop the cline-ls daemon of this workspace' })
