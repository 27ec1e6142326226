-- Headless end-to-end scenarios of the plugin against the real daemon and
-- the replay model. CLINE_TEST_SCENARIO picks one; nvim_test.go writes the
-- workspace (hello.txt holding "hello\n") and the transcript it needs.
local here = debug.getinfo(1, 'S').source:sub(2):match('(.*/)') or './'
local H = dofile(here .. 'harness.lua')
local env = H.env
-- The built-in pickers, before H.stub_ui scripts them: the typeahead
-- scenario types at the real ones.
local builtin_select, builtin_input = vim.ui.select, vim.ui.input

local function start(extra_settings, opts)
  H.dead = function()
    local st = require('cline').state(env.ws)
    return st ~= nil and st.last_stop == 'exited'
  end
  H.stub_ui()
  require('cline').setup(vim.tbl_extend('force', {
    cmd = H.cmd(),
    settings = H.settings(extra_settings),
  }, opts or {}))
  vim.cmd('edit ' .. vim.fn.fnameescape(env.ws .. '/hello.txt'))
  return vim.api.nvim_get_current_buf()
end

local function cline()
  return require('cline')
end

local function session_text()
  local st = cline().state(env.ws)
  return st and H.text(st.view.buf) or ''
end

local function wait_turn(st, what)
  H.wait(what or 'the turn to end', function()
    return not st.busy
  end)
end

local scenarios = {}

-- approve: an act task whose edit is approved lands in the open buffer,
-- not on disk, until the user saves.
function scenarios.approve()
  local file = start()

  vim.cmd('ClineTask make the greeting friendlier')
  local st = cline().state(env.ws)
  H.expect(st ~= nil and st.busy, ':ClineTask returns while the turn runs')
  H.expect(#vim.fn.win_findbuf(st.view.buf) > 0, 'the session buffer is shown')
  H.eq(vim.api.nvim_get_current_buf(), file, 'the cursor stays in the file')
  local fwin = vim.api.nvim_get_current_win()
  local size = { vim.api.nvim_win_get_width(fwin), vim.api.nvim_win_get_height(fwin) }
  H.wait('the approval view', H.approval_shown)
  H.eq({ vim.api.nvim_win_get_width(fwin), vim.api.nvim_win_get_height(fwin) }, size,
    "the approval view leaves the file's window as it was")
  H.contains(st.view.waiting or '', 'waiting for your approval', 'the session buffer says the turn waits for the approval')
  H.contains(cline().status(), '⋯ approval', 'so does the statusline component')
  local preview = H.approve('a')
  wait_turn(st)
  H.eq(st.view.waiting, nil, 'no waiting indicator once the turn ended')

  H.eq(st.last_stop, 'end_turn', 'the turn ends with end_turn')
  H.expect(preview.cursor_elsewhere, 'the approval view did not take the cursor')
  H.eq(#H.ui.selects, 0, 'no picker takes the keyboard')
  local ptext = table.concat(preview.lines, '\n')
  H.contains(ptext, 'Cline asks: Edit hello.txt', 'the view names the edit')
  H.contains(ptext, '-hello', 'the preview shows the removed line')
  H.contains(ptext, '+hello, world', 'the preview shows the added line')
  H.contains(ptext, '# a allow · A always allow · r reject · R reject with feedback\n# q later · d pick hunks', 'the keys are listed')
  H.eq(#vim.fn.win_findbuf(vim.fn.bufnr('cline://approval')), 0, 'the preview closes once answered')

  H.eq(H.lines(file), { 'hello, world' }, 'the buffer holds the edit')
  H.expect(vim.bo[file].modified, 'the buffer is modified (unsaved)')
  H.eq(H.read(env.ws .. '/hello.txt'), 'hello\n', 'the disk is untouched before saving')

  local text = session_text()
  H.contains(text, 'You: make the greeting friendlier')
  H.contains(text, '│ Look at hello.txt.', 'the thought is streamed')
  H.contains(text, 'Editing.\nOne line.', 'the agent text is streamed across lines')
  H.contains(text, '[tool] Edit hello.txt (done)', 'the tool status line is updated in place')
  H.contains(text, '[approval] Edit hello.txt — allowed')
  H.contains(text, '[diff] hello.txt +1 -1')
  H.expect(not H.has(text, '+1: hello, world'), 'the session buffer does not repeat the diff the approval showed', text)
  H.contains(text, 'Done.')
  H.contains(text, '-- end_turn')
  H.expect(not H.has(text, '(pending)'), 'no tool is left pending', text)

  local dbuf = vim.fn.bufnr('cline://diffs/' .. env.ws)
  H.expect(dbuf ~= -1, 'the diff buffer exists')
  local dtext = H.text(dbuf)
  H.contains(dtext, '=== hello.txt (+1 -1)', 'the diff buffer has a header')
  H.contains(dtext, '+1: hello, world', 'the diff buffer has the diff')
  H.eq(#vim.fn.win_findbuf(dbuf), 0, 'the diff buffer is not opened: the approval showed the diff')
  H.eq(#vim.api.nvim_list_wins(), 2, 'the file and the session buffer are all the windows left')

  vim.api.nvim_set_current_buf(file)
  vim.cmd('write')
  H.eq(H.read(env.ws .. '/hello.txt'), 'hello, world\n', 'saving writes the edit to disk')

  -- A file opened later is attached to the same client.
  local other = env.ws .. '/other.txt'
  vim.cmd('edit ' .. vim.fn.fnameescape(other))
  local obuf = vim.api.nvim_get_current_buf()
  H.expect(vim.lsp.buf_is_attached(obuf, st.client_id), 'a buffer opened later is mirrored')
  H.expect(vim.lsp.buf_is_attached(file, st.client_id), 'the first buffer is mirrored')
  H.expect(not vim.lsp.buf_is_attached(st.view.buf, st.client_id), 'the session buffer is not mirrored')
end

-- reject: a rejected edit leaves buffer and disk alone; the feedback
-- reaches the model.
function scenarios.reject()
  local file = start()
  H.ui.input_answer = function()
    return 'say hi instead'
  end
  vim.cmd('ClineTask make the greeting friendlier')
  local st = cline().state(env.ws)
  H.approve('R')
  wait_turn(st)
  H.eq(st.last_stop, 'end_turn', 'the turn goes on to end_turn')
  H.eq(#H.ui.inputs, 1, 'feedback was asked through vim.ui.input')
  H.eq(H.lines(file), { 'hello' }, 'the buffer is unchanged')
  H.expect(not vim.bo[file].modified, 'the buffer is not modified')
  H.eq(H.read(env.ws .. '/hello.txt'), 'hello\n', 'the disk is unchanged')
  local text = session_text()
  H.contains(text, '[approval] Edit hello.txt — rejected: say hi instead')
  H.contains(text, '[tool] Edit hello.txt (failed)')
  H.contains(text, 'You rejected this.', 'the tool result is shown, in the user\'s words')
  H.contains(text, 'Understood.')
end

-- plan: plan mode, plan updates, :ClineAct, then an act turn where
-- "Always allow" spares the second question.
function scenarios.plan()
  local file = start()
  vim.cmd('ClinePlan how should we greet?')
  local st = cline().state(env.ws)
  wait_turn(st, 'the plan turn')
  H.eq(st.mode, 'plan', 'the session is in plan mode')
  local text = session_text()
  H.contains(text, 'mode: plan')
  H.contains(text, 'Plan:\n  [ ] Change hello to hello, world\n  [ ] Save', 'the plan is shown')
  H.contains(text, 'Change the one line.', 'plan_mode_respond text is shown')
  H.eq(H.lines(file), { 'hello' }, 'plan mode changes nothing')

  vim.cmd('ClineAct')
  H.wait('act mode', function()
    return st.mode == 'act'
  end)
  H.contains(session_text(), '-- mode: act --')

  vim.cmd('ClineTask go ahead')
  H.approve('A')
  wait_turn(st, 'the act turn')
  H.eq(st.last_stop, 'end_turn', 'the act turn ends')
  local _, asked = session_text():gsub('%[approval%]', '')
  H.eq(asked, 1, 'Always allow spares the second approval')
  H.eq(H.lines(file), { 'hello, world!' }, 'both edits are in the buffer')
  H.eq(H.read(env.ws .. '/hello.txt'), 'hello\n', 'the disk is untouched')
  text = session_text()
  H.contains(text, '  [x] Change hello to hello, world', 'the plan update is shown')
  H.contains(text, '[approval] Edit hello.txt — always allowed')
  H.contains(text, '[diff] hello.txt +1 -1\n    ', 'an edit no approval showed has its diff in the session buffer')
  H.contains(text, '+1: hello, world!', 'that diff is the second edit')
  local _, ndiff = text:gsub('%+1: hello, world\n', '')
  H.eq(ndiff, 0, 'the approved edit is not shown again')
  local _, plans = text:gsub('Plan:', '')
  H.eq(plans, 2, 'each plan update is shown')
  H.expect(not H.has(text, 'Plan updated'), "a plan update's result is not repeated", text)
end

-- typeahead: keys typed before and while an approval appears, Enter,
-- digits, Escape and the view's own keys among them, go to the buffer
-- being edited and never answer the approval; only a key pressed in the
-- approval view does.
function scenarios.typeahead()
  local file = start()
  vim.ui.select, vim.ui.input = builtin_select, builtin_input
  vim.cmd('ClineTask make the greeting friendlier')
  local st = cline().state(env.ws)
  vim.api.nvim_feedkeys('o# note', 'ntx', false)
  H.wait('the approval view', H.approval_shown)
  vim.api.nvim_feedkeys('A for step 1\r34\27', 'ntx', false)
  vim.api.nvim_feedkeys('\raArRq\r', 'ntx', false)
  vim.wait(300) -- anything the keys set off has run
  H.expect(H.approval_shown(), 'the approval still waits')
  H.eq(require('cline.approvals').pending(), 1, 'no key answered it')
  H.expect(st.busy, 'the turn still waits for the answer')
  H.eq(vim.api.nvim_get_current_buf(), file, 'the cursor stayed in the file')
  local typed = table.concat(H.lines(file), '\n')
  H.contains(typed, '# note for step 1', 'the typed text is in the file')
  H.contains(typed, '34', 'the digits typed in insert mode are in the file')
  H.contains(session_text(), '[approval] Edit hello.txt — waiting')

  H.approve('a')
  wait_turn(st)
  H.eq(st.last_stop, 'end_turn', 'the deliberate answer lets the turn end')
  H.eq(H.lines(file)[1], 'hello, world', 'the allowed edit is in the buffer')
  H.contains(typed, '# note', 'the typed lines are kept')
  H.contains(session_text(), '[approval] Edit hello.txt — allowed')
end

-- typeahead_chat: the same in the session buffer's prompt area: keys
-- typed there before and while an approval appears, <CR> in normal mode
-- among them (it would send, but a turn runs), stay in the prompt area.
function scenarios.typeahead_chat()
  start()
  vim.ui.select, vim.ui.input = builtin_select, builtin_input
  vim.cmd('ClineTask make the greeting friendlier')
  local st = cline().state(env.ws)
  local swin = vim.fn.win_findbuf(st.view.buf)[1]
  vim.api.nvim_set_current_win(swin)
  vim.api.nvim_feedkeys('Gi# note', 'ntx', false)
  H.wait('the approval view', H.approval_shown)
  vim.api.nvim_feedkeys('A for step 1\r34\27', 'ntx', false)
  vim.api.nvim_feedkeys('\r', 'mtx', false)
  vim.api.nvim_feedkeys('aArRq\27', 'ntx', false) -- a appends: ArRq is text
  vim.wait(300) -- anything the keys set off has run
  H.expect(H.approval_shown(), 'the approval still waits')
  H.eq(require('cline.approvals').pending(), 1, 'no key answered it')
  H.expect(st.busy, 'the turn still waits for the answer')
  H.eq(vim.api.nvim_get_current_win(), swin, 'the cursor stayed in the session window')
  H.eq(st.view:input(), '# note for step 1\n34ArRq', 'the keys went to the prompt area')
  H.approve('a')
  wait_turn(st)
  H.eq(st.last_stop, 'end_turn', 'the deliberate answer lets the turn end')
  H.eq(st.view:input(), '# note for step 1\n34ArRq', 'the prompt area keeps the text for the next message')
end

-- question: ask_question goes through vim.ui.select and its answer
-- reaches the model, also when the picker answers later (on Neovim 0.7
-- the plugin then asks again with inputlist(); newer versions wait).
function scenarios.question()
  start()
  local later
  H.ui.select_answer = function(items, opts, call)
    if opts.prompt == 'Which colour?' then
      H.eq(items, { 'blue', 'green' }, 'the options are offered')
      return 'green'
    end
    later = call
    return 'later'
  end
  local inputlist = 0
  vim.fn.inputlist = function(items)
    inputlist = inputlist + 1
    H.eq(items, { 'Which shade?', '1. red', '2. blue' }, 'inputlist gets the question and the options')
    return 2
  end
  vim.cmd('ClineTask pick a colour')
  local st = cline().state(env.ws)
  H.wait('the second question', function()
    return later ~= nil
  end)
  if inputlist == 0 then
    later.on_choice('blue')
  end
  wait_turn(st)
  H.eq(st.last_stop, 'end_turn', 'the turn ends')
  local text = session_text()
  H.contains(text, '[question] Which colour? — answered: green')
  H.contains(text, '[question] Which shade? — answered: blue')
  H.contains(text, 'Green it is, and blue.')
end

-- cancel: :ClineCancel during an approval ends the turn as cancelled and
-- leaves the buffer alone; a late answer is harmless.
function scenarios.cancel()
  local file = start()
  vim.cmd('ClineTask make the greeting friendlier')
  local st = cline().state(env.ws)
  H.wait('the approval', H.approval_shown)
  vim.cmd('ClineCancel')
  wait_turn(st)
  H.eq(st.last_stop, 'cancelled', 'the turn ends as cancelled')
  H.eq(#vim.fn.win_findbuf(vim.fn.bufnr('cline://approval')), 0, 'the approval view closes with the turn')
  H.eq(require('cline.approvals').pending(), 0, 'nothing is left to answer')
  vim.wait(200)
  H.eq(H.lines(file), { 'hello' }, 'the buffer is unchanged')
  H.eq(H.read(env.ws .. '/hello.txt'), 'hello\n', 'the disk is unchanged')
  local text = session_text()
  H.contains(text, '-- cancelled')
  H.contains(text, 'too late', 'the dropped approval is reported, not sent')

  -- The session is still usable: the next task runs.
  vim.cmd('ClineTask try again')
  H.approve('a')
  wait_turn(st, 'the second turn')
  H.eq(st.last_stop, 'end_turn', 'a task after a cancel runs')
  H.eq(H.lines(file), { 'hello, world' }, 'the second task edits the buffer')
end

-- chat: a follow-up typed in the session buffer's prompt area (several
-- lines, a file mention) and one with a mention of the visual selection
-- go to the same session; the model receives the file and the selected
-- lines as resource blocks; the turn and session totals and the
-- statusline component follow.
function scenarios.chat()
  local file = start()
  local fwin = vim.api.nvim_get_current_win()
  vim.cmd('ClineTask how should we greet people?')
  local st = cline().state(env.ws)
  H.contains(st.view.waiting or '', 'waiting for the model', 'the session buffer shows that the model is awaited')
  H.contains(cline().status(), '', 'the statusline component answers while the session starts')
  wait_turn(st, 'the first turn')
  H.eq(st.last_stop, 'end_turn', 'the first turn ends')
  local sid = st.session_id
  H.expect(sid ~= nil, 'the session started')

  -- A follow-up typed in the prompt area, over two lines, with a file
  -- mention; <CR> in normal mode sends it.
  local f = assert(io.open(env.ws .. '/notes.txt', 'w'))
  f:write('alpha line\nbeta line\n')
  f:close()
  local swin = vim.fn.win_findbuf(st.view.buf)[1]
  vim.api.nvim_set_current_win(swin)
  -- <C-x><C-o> after @no completes the one path that starts so.
  vim.api.nvim_feedkeys('Gilook at @no\24\15\rand tell me\27', 'ntx', false)
  H.eq(st.view:input(), 'look at @notes.txt\nand tell me', 'the prompt area takes several lines')
  vim.api.nvim_feedkeys('\r', 'mtx', false)
  H.eq(st.view:input(), '', 'sending empties the prompt area')
  H.expect(st.busy, '<CR> sent the prompt area')
  wait_turn(st, 'the follow-up')
  H.eq(st.last_stop, 'end_turn', 'the follow-up ends (the model got notes.txt after the first turn)')
  H.eq(st.session_id, sid, 'the follow-up went to the same session')
  local text = session_text()
  H.contains(text, 'You: look at @notes.txt\n     and tell me', 'the follow-up is in the transcript')
  H.contains(text, 'Seen the notes.')

  -- The selection, changed and not saved, mentioned from the file.
  vim.api.nvim_set_current_win(fwin)
  vim.api.nvim_buf_set_lines(file, 0, -1, false, { 'hello', 'line two', 'line three' })
  vim.api.nvim_feedkeys('2GVj:ClineMention\r', 'mtx', false)
  H.eq(st.view:input(), '@hello.txt:2-3 ', 'the selection is mentioned in the prompt area')
  H.eq(vim.api.nvim_get_current_win(), fwin, 'mentioning leaves the cursor in the file')
  vim.api.nvim_set_current_win(swin)
  vim.api.nvim_feedkeys('GAwhat are these?\27\r', 'mtx', false)
  wait_turn(st, 'the turn with the selection')
  H.eq(st.last_stop, 'end_turn', 'that turn ends (the model got the unsaved lines 2-3)')
  H.eq(st.session_id, sid, 'still the same session')
  text = session_text()
  H.contains(text, 'You: @hello.txt:2-3 what are these?')
  H.contains(text, 'Got the lines.')
  H.contains(text, '-- end_turn · turn 300 in / 30 out · session 600 in / 60 out', 'the turn and the session totals are shown')

  -- The statusline component, in the session window's own statusline.
  H.contains(cline().status(), 'cline:act', 'the component names the mode')
  H.expect(not H.has(cline().status(), '⋯'), 'the component shows no running turn', cline().status())
  local sl = vim.api.nvim_eval_statusline(vim.wo[swin].statusline, { winid = swin }).str
  H.contains(sl, 'cline:act', "the session window's statusline holds the component")

  -- ? shows the keys in the buffer.
  H.expect(not st.view.help, 'the help is hidden at first')
  vim.api.nvim_feedkeys('?', 'mtx', false)
  H.expect(st.view.help, '? shows the help')
  local marks = vim.api.nvim_buf_get_extmarks(st.view.buf, require('cline.view').ns, 0, -1, { details = true })
  local shown = ''
  for _, m in ipairs(marks) do
    for _, vl in ipairs(m[4].virt_lines or {}) do
      shown = shown .. vl[1][1] .. '\n'
    end
  end
  H.contains(shown, 'undo the last turn', 'the help lists the keys')
  vim.api.nvim_feedkeys('?', 'mtx', false)
  H.expect(not st.view.help, '? again hides it')
end

-- resume: a session of a daemon that was stopped is picked from the
-- list and resumed; its history is shown again and a follow-up goes on
-- with it (the second transcript expects the earlier turn's messages).
function scenarios.resume()
  start()
  vim.cmd('ClineTask remember the word kiwi')
  local st = cline().state(env.ws)
  wait_turn(st, 'the first turn')
  local first = st.session_id
  vim.cmd('ClineStop')
  H.wait('the daemon to stop', function()
    return st.client_id == nil
  end)
  H.dead = nil
  cline().setup({ cmd = H.cmd(), settings = H.settings({ provider = { transcript = here .. '../testdata/resume2.json' } }) })
  local offered
  H.ui.select_answer = function(items, opts)
    offered = {}
    for _, it in ipairs(items) do
      table.insert(offered, opts.format_item(it))
    end
    return items[1]
  end
  vim.cmd('ClineSessions')
  H.wait('the session to be resumed', function()
    return st.session_id == first
  end)
  H.eq(#offered, 1, 'the one earlier session is offered')
  H.contains(offered[1], 'kiwi', 'it is offered by its title')
  local text = session_text()
  H.contains(text, 'remember the word kiwi', 'the earlier prompt is shown again')
  H.contains(text, 'Noted: kiwi.', "the earlier answer is shown again")
  H.contains(text, '-- resumed session ' .. first)

  st.view:set_input('what was the word?')
  vim.cmd('ClineSend')
  wait_turn(st, 'the follow-up')
  H.eq(st.last_stop, 'end_turn', 'the follow-up ends (the model got the earlier turn)')
  H.eq(st.session_id, first, 'it went to the resumed session')
  H.contains(session_text(), 'It was kiwi.')
end

-- model: switching the model mid-session keeps the conversation: the
-- second model (another transcript) gets the first turn's messages.
function scenarios.model()
  start()
  vim.cmd('ClineTask remember the word fig')
  local st = cline().state(env.ws)
  wait_turn(st, 'the first turn')
  local sid = st.session_id
  cline().set_model({ transcript = here .. '../testdata/model2.json' })
  H.wait('the session to be reopened', function()
    return H.has(session_text(), '-- model: ')
  end)
  H.eq(st.session_id, sid, 'the session is the same')
  H.contains(session_text(), 'Noted: fig.', 'its history is shown again')
  st.view:set_input('which word?')
  vim.cmd('ClineSend')
  wait_turn(st, 'the turn with the second model')
  H.eq(st.last_stop, 'end_turn', 'the second model got the conversation so far')
  H.contains(session_text(), 'The second model says fig.')
  -- The command's form.
  vim.cmd('ClineModel replay other-model')
  H.wait('the model note', function()
    return H.has(session_text(), '-- model: replay/other-model --')
  end)
  H.eq(cline().state(env.ws).session_id, sid, 'still the same session')
end

-- undo: the checkpoint list previews what a restore would change; undo
-- of the last turn puts the buffer back and drops the turn from the
-- conversation (the next request holds only the new prompt).
function scenarios.undo()
  local file = start({ approvals = { edit = 'allow' } })
  vim.cmd('ClineTask make the greeting friendlier')
  local st = cline().state(env.ws)
  wait_turn(st)
  H.eq(H.lines(file), { 'hello, world' }, 'the edit is in the buffer')
  H.contains(session_text(), '[diff] hello.txt +1 -1\n    ', 'an edit allowed without asking has its diff in the session buffer')

  H.ui.select_answer = function(items)
    return items[#items] -- the oldest: before the turn's edit
  end
  vim.cmd('ClineCheckpoints')
  local cbuf
  H.wait('the checkpoint preview', function()
    cbuf = vim.fn.bufnr('cline://checkpoint')
    return cbuf ~= -1 and #vim.fn.win_findbuf(cbuf) > 0
  end)
  local ctext = H.text(cbuf)
  H.contains(ctext, '=== hello.txt (modified)', 'the preview names the file a restore changes')
  H.contains(ctext, 'hello, world', 'and shows its diff')
  H.eq(vim.api.nvim_get_current_buf(), cbuf, 'the preview takes the cursor (it was asked for)')
  vim.api.nvim_feedkeys('q', 'mtx', false)
  H.eq(#vim.fn.win_findbuf(cbuf), 0, 'q closes the preview')
  H.eq(H.lines(file), { 'hello, world' }, 'a preview changes nothing')

  vim.cmd('ClineUndo')
  H.wait('the undo', function()
    return H.has(session_text(), '-- undone')
  end)
  H.eq(H.lines(file), { 'hello' }, 'the buffer is back as before the turn')
  H.eq(H.read(env.ws .. '/hello.txt'), 'hello\n', 'the disk is untouched')
  H.contains(session_text(), '-- undone: turn 1 (both): hello.txt --')

  st.view:set_input('try something else')
  vim.cmd('ClineSend')
  wait_turn(st, 'the turn after the undo')
  H.eq(st.last_stop, 'end_turn', 'the next turn ends (its request held no trace of the undone turn)')
  H.contains(session_text(), 'Starting over.')
end

-- hunks: from the approval view, d opens the edit in vimdiff in a tab of
-- its own; the user takes one of its two hunks into the buffer (do) and
-- ga answers: the hunk stays, the edit is refused, and the model is told
-- what the file now holds. Taking every hunk allows the edit.
function scenarios.hunks()
  start()
  local f = assert(io.open(env.ws .. '/hunks.txt', 'w'))
  f:write('one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n')
  f:close()
  vim.cmd('edit ' .. vim.fn.fnameescape(env.ws .. '/hunks.txt'))
  local file = vim.api.nvim_get_current_buf()
  vim.cmd('ClineTask change the first and last lines')
  local layout = vim.fn.winlayout() -- the file and the session buffer
  local st = cline().state(env.ws)
  H.wait('the approval view', H.approval_shown)
  vim.cmd('ClineApprove')
  vim.api.nvim_feedkeys('d', 'mtx', false)
  H.eq(#vim.api.nvim_list_tabpages(), 2, 'd opens a tab')
  vim.api.nvim_feedkeys('gq', 'mtx', false)
  H.eq(#vim.api.nvim_list_tabpages(), 1, 'gq leaves it')
  H.eq(require('cline.approvals').pending(), 1, 'the approval still waits')
  vim.cmd('ClineApprove')
  vim.api.nvim_feedkeys('d', 'mtx', false)
  vim.cmd('tabclose')
  H.eq(vim.fn.maparg('ga', 'n', false, true).buffer, nil, "a tab closed by hand leaves no ga map in the file's buffer")
  H.eq(require('cline.approvals').pending(), 1, 'and the approval waiting')
  vim.cmd('ClineApprove')
  vim.api.nvim_feedkeys('d', 'mtx', false)
  H.eq(#vim.api.nvim_list_tabpages(), 2, 'd opens a tab of its own')
  H.eq(vim.api.nvim_get_current_buf(), file, "the cursor is in the file's own buffer")
  H.expect(vim.wo.diff, 'in diff mode')
  local wins = vim.api.nvim_tabpage_list_wins(0)
  H.eq(#wins, 2, 'the proposal and the buffer side by side')
  local pbuf = vim.api.nvim_win_get_buf(wins[1])
  H.eq(H.lines(pbuf)[1], 'ONE', 'the proposal is on the left')
  H.eq(H.lines(pbuf)[10], 'TEN', 'with both hunks')
  vim.api.nvim_feedkeys('ggdo', 'ntx', false)
  H.eq(H.lines(file)[1], 'ONE', 'do takes the first hunk into the buffer')
  vim.api.nvim_feedkeys('ga', 'mtx', false)
  H.eq(#vim.api.nvim_list_tabpages(), 1, 'ga closes the tab')
  H.eq(vim.fn.winlayout(), layout, "the user's windows are as they were")
  wait_turn(st)
  H.eq(st.last_stop, 'end_turn', 'the turn goes on (the model was told which hunk landed)')
  H.eq(H.lines(file), { 'ONE', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten' }, 'only the hunk taken is in the buffer')
  local text = session_text()
  H.contains(text, '[approval] Edit hunks.txt — applied in part (the hunks taken by hand)')
  H.contains(text, '[tool] Edit hunks.txt (done)', 'the edit is reported done, not failed')
  H.contains(text, 'Only the first line, then.')

  -- Every hunk taken: the edit is allowed and applied by the daemon.
  vim.cmd('ClineTask now all of it')
  H.approve('d')
  H.eq(#vim.api.nvim_list_tabpages(), 2, 'd opens the tab again')
  vim.api.nvim_feedkeys('gg]cdo]cdo', 'ntx', false)
  H.eq(H.lines(file)[9], 'NINE', 'both hunks are taken')
  vim.api.nvim_feedkeys('ga', 'mtx', false)
  wait_turn(st, 'the second turn')
  H.eq(st.last_stop, 'end_turn', 'the second turn ends')
  H.eq(H.lines(file)[9], 'NINE', 'the edit is in the buffer')
  H.eq(H.lines(file)[10], 'TEN', 'all of it')
  H.eq(#H.lines(file), 10, 'once')
  H.contains(session_text(), '[approval] Edit hunks.txt — allowed')
  H.contains(session_text(), 'Both lines.')
  H.eq(vim.fn.maparg('ga', 'n', false, true).buffer, nil, "the file's buffer has no ga map left")
end

-- protect: the prompt area survives dd of its only line, x and o, and
-- what is typed there after is sent; the transcript and the separator
-- refuse edits from the keyboard, and what reaches them from the prompt
-- area (dgg, <BS> at the start of the first line) is put back.
function scenarios.protect()
  start()
  vim.cmd('ClineOpen')
  local st = cline().state(env.ws)
  local buf = st.view.buf
  local sep = require('cline.view').separator
  H.eq(vim.api.nvim_get_current_buf(), buf, ':ClineOpen goes to the session buffer')
  local function settle()
    H.wait('the repair of the change', function()
      return not st.view.repair_queued
    end)
  end
  local function keys(k, mode)
    pcall(vim.api.nvim_feedkeys, vim.api.nvim_replace_termcodes(k, true, false, true), mode or 'ntx', false)
    settle()
  end
  local function sep_ok(what)
    local lines = H.lines(buf)
    H.eq(lines[st.view:tail() + 1], sep, what .. ': the separator is intact')
    H.expect(#lines > st.view:tail() + 1, what .. ': the prompt area has a line')
  end
  keys('Gidraft<Esc>')
  H.eq(st.view:input(), 'draft', 'text typed in the prompt area')
  keys('dd')
  sep_ok('dd on the only prompt line')
  H.eq(st.view:input(), '', 'dd emptied the prompt area')
  H.expect(vim.api.nvim_win_get_cursor(0)[1] > st.view:tail() + 1, 'the cursor is in the prompt area after dd', vim.inspect(vim.api.nvim_win_get_cursor(0)))
  keys('ihow should we greet people??<Esc>')
  H.eq(st.view:input(), 'how should we greet people??', 'what is typed after dd goes to the prompt area')
  keys('x')
  H.eq(st.view:input(), 'how should we greet people?', 'x deletes in the prompt area')
  keys('otwo<Esc>')
  H.eq(st.view:input(), 'how should we greet people?\ntwo', 'o opens a prompt line')
  keys('dd')
  sep_ok('dd of the second prompt line')
  keys('<CR>', 'mtx')
  H.eq(st.view:input(), '', '<CR> sends the prompt area')
  wait_turn(st)
  H.eq(st.last_stop, 'end_turn', 'the model got the text typed after dd')
  H.contains(session_text(), 'You: how should we greet people?')

  -- The transcript does not take edits.
  local before = st.view:lines()
  H.expect(#before > 2, 'the transcript has lines')
  keys('gg')
  keys('x')
  H.expect(not vim.bo[buf].modifiable, "the transcript is not 'modifiable'")
  keys('dd')
  keys('ofoo<Esc>')
  keys('ifoo<Esc>')
  H.eq(st.view:lines(), before, 'x, dd, o and i in the transcript change nothing')
  keys(tostring(st.view:tail() + 1) .. 'G')
  keys('x')
  keys('dd')
  keys('ofoo<Esc>')
  sep_ok('x, dd and o on the separator')
  H.eq(st.view:lines(), before, 'nor on the separator')
  keys('G')
  keys('ixy<Esc>')
  H.expect(vim.bo[buf].modifiable, "the prompt area is 'modifiable'")
  keys('dgg')
  H.wait('the repair', function()
    return not st.view.damaged
  end)
  H.eq(st.view:lines(), before, 'dgg from the prompt area leaves the transcript as it was')
  sep_ok('dgg from the prompt area')
  H.eq(st.view:input(), 'xy', 'and the prompt area as it was')
  keys('GI<BS>ab<Esc>')
  H.wait('the repair', function()
    return not st.view.damaged
  end)
  sep_ok('<BS> at the start of the prompt area')
  H.eq(st.view:input(), 'abxy', 'the text joined to the separator is put back in the prompt area')
  H.eq(st.view:lines(), before, 'the transcript is unchanged')

  -- The daemon's writes still reach the transcript while the cursor sits
  -- in it (the buffer is not 'modifiable' then).
  keys('gg')
  keys('x')
  st.view:note('-- a note --')
  H.contains(session_text(), '-- a note --', 'a note is written with the cursor in the transcript')
  H.expect(not vim.bo[buf].modifiable, "and the transcript stays not 'modifiable'")
end

-- focus: after a checkpoint restore (from its preview, which took the
-- cursor) and after :ClineSessions, the cursor is in the session
-- buffer's prompt area, where it was in it when it was there, and never
-- in the file window.
function scenarios.focus()
  local file = start({ approvals = { edit = 'allow' } })
  local fwin = vim.api.nvim_get_current_win()
  vim.cmd('ClineTask make the greeting friendlier')
  local st = cline().state(env.ws)
  wait_turn(st)
  local swin = vim.fn.win_findbuf(st.view.buf)[1]
  local function in_prompt(what)
    H.eq(vim.api.nvim_get_current_win(), swin, what .. ': the cursor is in the session window')
    H.expect(vim.api.nvim_win_get_cursor(0)[1] > st.view:tail() + 1, what .. ': in the prompt area',
      vim.inspect({ cursor = vim.api.nvim_win_get_cursor(0), sep = st.view:tail() + 1 }))
  end
  local function restore_from_preview(n)
    vim.cmd('ClineCheckpoints')
    H.wait('the checkpoint preview', function()
      local cbuf = vim.fn.bufnr('cline://checkpoint')
      return cbuf ~= -1 and vim.api.nvim_get_current_buf() == cbuf
    end)
    vim.api.nvim_feedkeys('f', 'mtx', false)
    H.wait('the restore', function()
      local _, c = session_text():gsub('%-%- restored checkpoint', '')
      return c == n
    end)
  end
  H.ui.select_answer = function(items)
    return items[#items]
  end
  vim.api.nvim_set_current_win(fwin)
  restore_from_preview(1)
  H.eq(H.lines(file), { 'hello' }, 'the restore put the file back')
  in_prompt('a restore asked for from the file window')

  st.view:set_input('a draft')
  vim.api.nvim_win_set_cursor(swin, { st.view:tail() + 2, 2 })
  restore_from_preview(2)
  H.eq(vim.api.nvim_win_get_cursor(0), { st.view:tail() + 2, 2 }, 'a restore asked for from the prompt area leaves the cursor where it was')
  in_prompt('that restore')
  vim.api.nvim_feedkeys('ix', 'ntx', false)
  vim.api.nvim_feedkeys('\27', 'ntx', false)
  H.eq(st.view:input(), 'a xdraft', 'what is typed next goes to the prompt area')
  H.eq(H.lines(file), { 'hello' }, 'not to the file')

  vim.api.nvim_set_current_win(fwin)
  H.ui.select_answer = function(items)
    return items[1]
  end
  vim.cmd('ClineSessions')
  H.wait('the resume', function()
    return H.has(session_text(), '-- resumed session')
  end)
  in_prompt(':ClineSessions from the file window')
end

-- hunks_undo: one hunk of two taken in vimdiff is an edit the daemon
-- applies, reported applied in part, with a checkpoint before it, so that
-- :ClineUndo puts the file back and drops the turn.
function scenarios.hunks_undo()
  start()
  local original = { 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten' }
  local f = assert(io.open(env.ws .. '/hunks.txt', 'w'))
  f:write(table.concat(original, '\n') .. '\n')
  f:close()
  vim.cmd('edit ' .. vim.fn.fnameescape(env.ws .. '/hunks.txt'))
  local file = vim.api.nvim_get_current_buf()
  vim.cmd('ClineTask change the first and last lines')
  local st = cline().state(env.ws)
  H.approve('d')
  H.eq(#vim.api.nvim_list_tabpages(), 2, 'd opens the tab')
  vim.api.nvim_feedkeys('ggdo', 'ntx', false)
  vim.api.nvim_feedkeys('ga', 'mtx', false)
  wait_turn(st)
  H.eq(st.last_stop, 'end_turn', 'the turn ends (the model was told the part that landed)')
  local taken = vim.deepcopy(original)
  taken[1] = 'ONE'
  H.eq(H.lines(file), taken, 'the hunk taken is in the buffer, once')
  H.expect(vim.bo[file].modified, 'unsaved')
  local text = session_text()
  H.contains(text, '[approval] Edit hunks.txt — applied in part')
  H.contains(text, '[tool] Edit hunks.txt (done)', 'the edit is reported done')
  H.expect(not H.has(text, '(failed)') and not H.has(text, 'rejected'), 'nothing says failed or rejected', text)
  H.contains(text, '[diff] hunks.txt +1 -1', 'the part applied is the diff reported')

  vim.cmd('ClineUndo')
  H.wait('the undo', function()
    return H.has(session_text(), '-- undone')
  end)
  H.eq(H.lines(file), original, 'undo puts the file back as before the edit')
  H.contains(session_text(), '-- undone: turn 1 (both): hunks.txt --')
  st.view:set_input('start again')
  vim.cmd('ClineSend')
  wait_turn(st, 'the turn after the undo')
  H.eq(st.last_stop, 'end_turn', 'the next turn goes without the undone one')
  H.contains(session_text(), 'Fresh start.')
end

-- layout: at 80x24 the session window and the approval view above it
-- get a usable share of the columns, and keep it as the screen is
-- resized and windows open and close; a screen too narrow for two puts
-- the session window below, and back beside the file once wide again.
-- Headless Neovim has no terminal to report a resize: the test sets
-- 'columns' and fires VimResized, as a terminal resize does.
function scenarios.layout()
  vim.o.columns, vim.o.lines = 200, 24
  local file = start()
  local fwin = vim.api.nvim_get_current_win()
  vim.cmd('ClineTask make the greeting friendlier')
  local st = cline().state(env.ws)
  local swin = vim.fn.win_findbuf(st.view.buf)[1]
  local function w(win)
    return vim.api.nvim_win_get_width(win)
  end
  local function usable(what)
    H.expect(w(swin) >= 30, what .. ': the session window is usable', 'width ' .. w(swin))
    H.expect(w(fwin) >= 30, what .. ': so is the file window', 'width ' .. w(fwin))
  end
  local view = require('cline.view')
  local function laid_out()
    H.wait('the layout', function()
      return not view.layout_queued
    end)
  end
  local function resize(cols)
    vim.o.columns = cols
    vim.cmd('doautocmd VimResized')
    laid_out()
  end
  H.eq(w(swin), 80, 'opened at 200 columns: 40% of them')
  resize(80)
  usable('shrunk to 80x24')
  H.eq(w(swin), 32, 'the session window has 40% of 80 columns')
  H.wait('the approval view', H.approval_shown)
  local awin = vim.fn.win_findbuf(vim.fn.bufnr('cline://approval'))[1]
  H.eq(w(awin), w(swin), 'the approval view is as wide as the session window')
  H.expect(vim.api.nvim_win_get_height(swin) >= 3, 'the session window keeps some lines under the approval view', tostring(vim.api.nvim_win_get_height(swin)))

  resize(200)
  H.eq(w(swin), 80, 'wider: 40% of 200 columns')
  resize(80)
  usable('back at 80 columns')
  H.eq(w(swin), 32, 'the session window has its 40% again')

  vim.api.nvim_set_current_win(fwin)
  vim.cmd('vsplit')
  local extra = vim.api.nvim_get_current_win()
  laid_out()
  H.eq(w(swin), 32, 'a window opened beside the file leaves the session window its width')
  vim.api.nvim_win_close(extra, true)
  laid_out()
  usable('that window closed')
  H.eq(w(swin), 32, 'and after it closes')

  resize(50)
  H.eq(w(swin), 50, 'on a narrow screen the session window goes below, full width')
  H.expect(vim.api.nvim_win_get_height(swin) >= 6, 'with some lines', tostring(vim.api.nvim_win_get_height(swin)))
  H.eq(w(fwin), 50, 'and the file window has all the columns')
  H.expect(H.approval_shown(), 'the approval view is still shown')
  awin = vim.fn.win_findbuf(vim.fn.bufnr('cline://approval'))[1]
  H.eq(w(awin), 50, 'full width too')
  resize(80)
  usable('wide again')
  H.eq(vim.fn.win_screenpos(swin)[2] > vim.fn.win_screenpos(fwin)[2], true, 'the session window is back at the right')

  H.approve('a')
  wait_turn(st)
  H.eq(st.last_stop, 'end_turn', 'the turn ends')
  H.eq(H.lines(file), { 'hello, world' }, 'the edit is in the buffer')
  usable('after the approval view closed')
  vim.api.nvim_win_close(swin, true)
  vim.cmd('ClineOpen')
  swin = vim.api.nvim_get_current_win()
  H.eq(w(swin), 32, 'opened at 80 columns: 40% of them')
end

-- lost: the daemon is killed; the next message offers to resume the
-- session it had: yes goes on with its conversation in the new daemon
-- (the transcript not drawn twice), no starts a new session whose totals
-- start from nothing.
function scenarios.lost()
  start()
  vim.cmd('ClineTask remember the word kiwi')
  local st = cline().state(env.ws)
  wait_turn(st, 'the first turn')
  local first = st.session_id
  local function kill(what)
    local pid = H.daemon_pid()
    H.expect(pid ~= nil, what .. ': the daemon process is found')
    H.dead = nil
    require('cline.compat').uv.kill(pid, 'sigkill')
    H.wait('the client to see the daemon gone', function()
      return st.client_id == nil
    end)
  end
  kill('first kill')
  H.contains(session_text(), 'the next message offers to resume session ' .. first, 'the session buffer says what was lost')
  cline().setup({ cmd = H.cmd(), settings = H.settings({ provider = { transcript = here .. '../testdata/lost2.json' } }) })
  local asked
  H.ui.select_answer = function(items, opts)
    asked = { items = items, prompt = opts.prompt }
    return items[1]
  end
  st.view:set_input('what was the word?')
  vim.cmd('ClineSend')
  wait_turn(st, 'the turn after the restart')
  H.expect(asked ~= nil, 'resuming was offered')
  H.contains(asked.prompt, 'Resume the session it had?')
  H.contains(asked.items[1], first, 'the offer names the session')
  H.eq(st.last_stop, 'end_turn', 'the model got the conversation so far')
  H.eq(st.session_id, first, 'the message went to the session the daemon had')
  local text = session_text()
  H.contains(text, 'It was kiwi.')
  local _, n = text:gsub('Noted: kiwi%.', '')
  H.eq(n, 1, 'the earlier turn is shown once, not replayed again')

  kill('second kill')
  cline().setup({ cmd = H.cmd(), settings = H.settings({ provider = { transcript = here .. '../testdata/lost3.json' } }) })
  H.ui.select_answer = function(items)
    return items[2]
  end
  st.view:set_input('start over')
  vim.cmd('ClineSend')
  wait_turn(st, 'the turn in a new session')
  H.eq(st.last_stop, 'end_turn', 'the new session got only the new message')
  H.expect(st.session_id ~= first, 'it is a new session')
  H.contains(session_text(), '-- end_turn · turn 7 in / 1 out · session 7 in / 1 out', 'its totals start from nothing')
end

-- commands: :Cline {subcommand} with completion, the old commands kept
-- as aliases, <Plug> mappings for the main actions, and :checkhealth
-- cline (the binary, its version, the provider, its key variable named
-- but never shown, the editor's features).
function scenarios.commands()
  local notes = {}
  local notify = vim.notify
  vim.notify = function(msg, level)
    table.insert(notes, msg)
    return notify(msg, level)
  end
  start()
  local function complete(line)
    return vim.fn.getcompletion(line, 'cmdline')
  end
  H.eq(complete('Cline mo'), { 'mode', 'model' }, ':Cline completes its subcommands')
  H.expect(vim.tbl_contains(complete('Cline '), 'checkpoints'), 'all of them', vim.inspect(complete('Cline ')))
  H.eq(complete('Cline mode p'), { 'plan' }, 'and the arguments of one')
  H.eq(complete('Cline new y'), { 'yolo' }, 'of another')
  for _, old in ipairs({ 'ClineTask', 'ClinePlan', 'ClineAct', 'ClineMode', 'ClineModel', 'ClineSend', 'ClineMention',
    'ClineSessions', 'ClineFork', 'ClineUndo', 'ClineCheckpoints', 'ClineApprove', 'ClineCancel', 'ClineNew',
    'ClineOpen', 'ClineDiffs', 'ClineStop' }) do
    H.eq(vim.fn.exists(':' .. old), 2, 'the old command ' .. old .. ' is kept')
  end
  for _, plug in ipairs({ 'task', 'plan', 'open', 'send', 'approve', 'cancel', 'undo', 'checkpoints', 'sessions', 'mention', 'new' }) do
    H.expect(vim.fn.maparg('<Plug>(cline-' .. plug .. ')', 'n') ~= '', '<Plug>(cline-' .. plug .. ') is mapped')
  end
  H.expect(vim.fn.maparg('<Plug>(cline-mention)', 'x') ~= '', '<Plug>(cline-mention) is mapped in visual mode')

  vim.cmd('Cline nosuch')
  H.contains(notes[#notes] or '', 'no subcommand nosuch', 'an unknown subcommand is named')
  vim.cmd('Cline task how should we greet people?')
  local st = cline().state(env.ws)
  wait_turn(st)
  H.eq(st.last_stop, 'end_turn', ':Cline task runs a task')
  H.contains(session_text(), 'Which file?')

  -- A user's map to a <Plug> mapping, from visual mode: the selection
  -- is mentioned.
  vim.keymap.set('x', '<Leader>m', '<Plug>(cline-mention)')
  local file = vim.fn.bufnr(env.ws .. '/hello.txt')
  vim.api.nvim_set_current_win(vim.fn.win_findbuf(file)[1])
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('V<Leader>m', true, false, true), 'mtx', false)
  H.eq(st.view:input(), '@hello.txt:1 ', '<Plug>(cline-mention) mentions the selected line')
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<Plug>(cline-open)', true, false, true), 'mtx', false)
  H.eq(vim.api.nvim_get_current_buf(), st.view.buf, '<Plug>(cline-open) goes to the session buffer')

  local function health()
    vim.cmd('checkhealth cline')
    local text = H.text(0)
    vim.cmd('tabclose')
    return text
  end
  local text = health()
  H.contains(text, 'Neovim ' .. vim.version().major .. '.' .. vim.version().minor, 'the health check names Neovim')
  H.contains(text, 'found: ' .. env.bin, 'the binary found')
  H.contains(text, 'version: cline-ls', 'its version')
  H.contains(text, 'provider replay', 'the provider')
  H.contains(text, 'needs no key')
  H.contains(text, 'vim.diagnostic', 'the editor features')
  H.expect(not H.has(text, 'ERROR'), 'no error with the test setup', text)

  vim.env.CLINE_TEST_HEALTH_KEY = 'sk-test-secret-value'
  cline().setup({ cmd = H.cmd(), settings = { provider = { name = 'anthropic', apiKeyEnv = 'CLINE_TEST_HEALTH_KEY' } } })
  text = health()
  H.contains(text, 'the key variable CLINE_TEST_HEALTH_KEY is set', 'a key variable set is named')
  H.expect(not H.has(text, 'sk-test-secret-value'), 'its value is never shown', text)
  vim.env.CLINE_TEST_HEALTH_KEY = nil
  text = health()
  H.contains(text, 'CLINE_TEST_HEALTH_KEY is not set', 'a key variable missing is an error')
  cline().setup({ cmd = { env.ws .. '/no-such-cline-ls' } })
  text = health()
  H.contains(text, 'is not found on the PATH', 'a missing binary is an error')
end

-- held: the session is open in a second daemon on the same state
-- directory (another editor); resuming it here says so and offers a fork
-- or a read-only view. Read-only shows it and refuses prompts; the fork
-- goes on with its conversation here.
function scenarios.held()
  start()
  vim.cmd('ClineTask remember the word kiwi')
  local st = cline().state(env.ws)
  wait_turn(st, 'the first turn')
  local first = st.session_id
  vim.cmd('ClineStop')
  H.wait('the daemon to stop', function()
    return st.client_id == nil
  end)
  H.dead = nil

  -- The other editor's daemon opens the session and holds it.
  local compat = require('cline.compat')
  local other_log = env.log .. '.other'
  local other = vim.lsp.start_client({
    name = 'other-editor',
    cmd = { env.bin, '--log-file', other_log },
    root_dir = env.ws,
    init_options = H.settings(),
  })
  local loaded
  H.wait('the other daemon', function()
    local c = vim.lsp.get_client_by_id(other)
    return c ~= nil and c.initialized
  end)
  compat.request(vim.lsp.get_client_by_id(other), 'session/load', { sessionId = first, cwd = env.ws }, function(err)
    loaded = { err = err }
  end)
  H.wait('the other daemon to load the session', function()
    return loaded ~= nil
  end)
  H.eq(loaded.err, nil, 'the other daemon holds the session')
  local pid = H.daemon_pid(other_log)
  H.expect(pid ~= nil, "the other daemon's process is found")

  cline().setup({ cmd = H.cmd(), settings = H.settings({ provider = { transcript = here .. '../testdata/resume2.json' } }) })
  local offers, listed = {}, nil
  local pick = 'Open it read-only'
  H.ui.select_answer = function(items, opts)
    if opts.kind == 'cline_session' then
      listed = opts.format_item(items[1])
      return items[1]
    end
    if opts.kind == 'cline_held' then
      table.insert(offers, { prompt = opts.prompt, items = items })
      for _, it in ipairs(items) do
        if H.has(it, pick) then
          return it
        end
      end
    end
  end
  vim.cmd('ClineSessions')
  H.wait('the read-only view', function()
    return st.read_only ~= nil
  end)
  H.contains(listed, '(open in another editor)', 'the list says the session is open elsewhere')
  H.eq(#offers, 1, 'the user was told, and asked')
  H.contains(offers[1].prompt, 'is open in another editor (cline-ls process ' .. pid .. ')', 'the question names the daemon that holds it')
  H.eq(offers[1].items, { 'Fork it: a copy that goes on here', 'Open it read-only', 'Cancel' }, 'a fork or a read-only view is offered')
  local text = session_text()
  H.contains(text, 'Noted: kiwi.', 'the read-only view shows the conversation')
  H.contains(text, 'read-only: another editor holds it', 'and says it is read-only')
  H.eq(st.session_id, nil, 'no session is open here')

  st.view:set_input('what was the word?')
  vim.cmd('ClineSend')
  H.expect(not st.busy, 'a prompt to the read-only view is refused')
  H.eq(st.view:input(), 'what was the word?', 'its text stays in the prompt area')

  pick = 'Fork it'
  vim.cmd('ClineSessions')
  H.wait('the fork', function()
    return st.session_id ~= nil
  end)
  H.eq(#offers, 2, 'asked again')
  H.expect(st.session_id ~= first, 'the fork is a session of its own')
  H.eq(st.read_only, nil, 'it is not read-only')
  vim.cmd('ClineSend')
  wait_turn(st, 'the turn in the fork')
  H.eq(st.last_stop, 'end_turn', 'the fork goes on with the conversation (the model got the earlier turn)')
  H.contains(session_text(), 'It was kiwi.')
  vim.lsp.stop_client(other)
end

-- units: pieces that need no daemon.
function scenarios.units()
  H.stub_ui()
  require('cline').setup({ cmd = H.cmd() })

  -- From Neovim 0.10 on, server requests run in a coroutine, where a
  -- question waits for an asynchronous picker.
  local questions = require('cline.questions')
  local later
  H.ui.select_answer = function(_, _, call)
    later = call
    return 'later'
  end
  local got, finished
  local co = coroutine.create(function()
    got = questions.answer({ question = 'Q?', options = { 'a', 'b' } })
    finished = true
  end)
  assert(coroutine.resume(co))
  H.expect(not finished and coroutine.status(co) == 'suspended', 'in a coroutine a question waits for the picker')
  later.on_choice('b')
  H.wait('the answer', function()
    return finished
  end)
  H.eq(got, 'b', 'the late answer is returned')
  H.ui.select_answer = function()
    return nil
  end
  H.eq(questions.answer({ question = 'Q?', options = { 'a' } }), nil, 'a dismissed question has no answer')
  H.ui.input_answer = function(opts)
    H.eq(opts.prompt, 'Name? ', 'a question without options is asked with vim.ui.input')
    return 'Ada'
  end
  H.eq(questions.answer({ question = 'Name?', options = {} }), 'Ada', 'the typed answer is returned')

  -- Streaming joins chunks into lines.
  local v = require('cline.view').new('/units')
  v:user('hi')
  for _, chunk in ipairs({ 'Hel', 'lo\nwor', 'ld', '\n', 'end' }) do
    v:stream('agent', chunk)
  end
  v:stream('thought', 'a\nb', '│ ')
  v:tool_call({ toolCallId = 't1', title = 'run_commands', status = 'pending' })
  v:tool_call({ toolCallId = 't2', title = 'read_files', status = 'pending' })
  v:tool_update({ toolCallId = 't1', title = 'Run go test', status = 'failed',
    content = { { type = 'content', content = { type = 'text', text = 'FAIL\n```\nx\n```' } } } })
  v:tool_update({ toolCallId = 't2', status = 'completed' })
  v:plan_update({ { content = 'one', status = 'completed' }, { content = 'two', status = 'in_progress' } })
  H.eq(v:lines(), {
    'You: hi', '', 'Hello', 'world', 'end', '', '│ a', '│ b', '',
    '[tool] Run go test (failed)', '[tool] read_files (done)', '    FAIL', '    x', '',
    'Plan:', '  [x] one', '  [~] two',
  }, 'the session buffer reads as expected')

  -- Mentions: where they start and end.
  local mentions = require('cline.mentions')
  H.eq(mentions.parse('see @a.txt. and (@lua/b.lua:3-5), mail me@host.com, @c.go:7'), {
    { path = 'a.txt' }, { path = 'lua/b.lua', first = 3, last = 5 }, { path = 'c.go', first = 7, last = 7 },
  }, 'mentions are found, an address is not one')
  H.eq(mentions.token('/r/x/y.lua', '/r', 2, 4), '@x/y.lua:2-4', 'a selection is mentioned by its lines')
  H.eq(mentions.token('/r/x/y.lua', '/r', 3, 3), '@x/y.lua:3', 'one line by its number')
  H.eq(mentions.token('/elsewhere/z', '/r'), '@/elsewhere/z', 'a file outside the root by its full path')

  -- Hunks: a unified diff read by its counts, applied to lines.
  local hunks = require('cline.hunks')
  local parsed = assert(hunks.parse('--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n--- old comment\n+-- new comment\n x\n y\n'))
  H.eq(#parsed.hunks, 1, 'a removed line that starts with -- is not a header')
  H.eq(hunks.apply({ '-- old comment', 'x', 'y', 'z' }, parsed), { '-- new comment', 'x', 'y', 'z' }, 'the hunk applies')
  local none, why = hunks.apply({ 'changed', 'x', 'y' }, parsed)
  H.expect(none == nil and why:find('line 1', 1, true), 'lines that no longer match are refused', tostring(why))

  -- The approval preview of a command.
  local lines = require('cline.approvals').preview_lines({
    toolCall = { title = 'Run go test', kind = 'execute', locations = {} }, command = 'go test ./...',
  })
  H.eq(lines, { '# Cline asks: Run go test', '# kind: execute', '', '$ go test ./...' }, 'a command is previewed')
end

-- hostile: what the model, commands and files send is shown visibly
-- wherever the plugin draws it (the session buffer, the approval view,
-- messages, pickers): escape sequences, carriage returns, C1 controls,
-- bidi overrides and zero-width characters as \x1b, \r, \u202e; the
-- command approved is shown exactly; a line break in a one-line field is
-- not an error; the answer to a question is the option as sent.
function scenarios.hostile()
  local notes = {}
  vim.notify = function(msg)
    table.insert(notes, msg)
  end
  start()
  local raw = '[%z\1-\8\11-\31\127]'
  local function clean(text, what)
    H.expect(not text:find(raw), what .. ' holds no raw control character', vim.inspect(text))
    for _, seq in ipairs({ '\194[\128-\159]', '\226\128[\139\170-\174]', '\226\129[\166-\169]' }) do
      H.expect(not text:find(seq), what .. ' holds no C1, bidi or zero-width character', vim.inspect(text))
    end
  end
  H.ui.select_answer = function(items)
    return items[1]
  end
  vim.cmd('ClineTask be hostile')
  local st = cline().state(env.ws)
  local first = H.approve('a')
  local ptext = table.concat(first.lines, '\n')
  clean(ptext, 'the approval view')
  H.contains(ptext, '$ touch pwned-spoof\\r\\x1b[2K\\x1b[1Als\n', 'the approval shows the command exactly')
  H.contains(ptext, 'the command holds characters that do not show', 'and says it held some')
  H.approve('a')
  wait_turn(st)
  H.eq(st.last_stop, 'end_turn', 'the turn ends with end_turn')
  local text = session_text()
  clean(text, 'the session buffer')
  H.contains(text, 'think \\x1b]52;c;cm0gLXJmIH4=\\x07 done', 'a thought shows its escape sequence')
  H.contains(text, 'hello \\x1b[2J\\r \\u009b31m \\u202eevil zw\\u200bsp\nnext line', 'streamed text shows its controls, its lines kept')
  H.contains(text, '\\x1b]52;c;aGk=\\x07out\\r', 'command output shows its escape sequence')
  H.contains(text, '\\u009bJ\\u202ex', 'and its C1 and bidi characters')
  H.contains(text, '[question] Pick\\none \\x1b[2K\\u202eplease — answered: a\\rb', 'a question with a line break is one line')
  H.contains(text, '[ ] step \\x1b[1A\\nfake', 'a plan entry is one line')
  H.contains(text, '[tool] Run touch pwned-spoof\\r\\x1b[2K\\x1b[1Als', 'a tool title shows its controls')
  local sel = H.ui.selects[1]
  H.expect(sel ~= nil, 'the question went to vim.ui.select')
  H.eq(sel.items, { 'a\rb', 'c' }, 'the picker gets the options as sent')
  H.eq(sel.opts.format_item(sel.items[1]), 'a\\rb', 'and shows them visibly')
  H.eq(sel.opts.prompt, 'Pick\none \\x1b[2K\\u202eplease', 'its prompt shows the controls')
  local all = table.concat(notes, '\n')
  H.contains(all, 'approval needed: Run touch pwned-spoof\\r\\x1b', 'the approval message shows the controls')
  clean(all:gsub('\n', ' '), 'the messages')
end

-- diagnostics: an edit that breaks the file comes back with the new
-- error from the editor's diagnostics, and the edit that fixes it says
-- so. The source is the test's own: an error on each line holding BROKEN,
-- checked after every change, as a language server would.
function scenarios.diagnostics()
  local file = start({ approvals = { edit = 'allow' } })
  local ns = vim.api.nvim_create_namespace('testlint')
  local function check(buf)
    local found = {}
    for i, l in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
      local col = l:find('BROKEN', 1, true)
      if col then
        table.insert(found, { lnum = i - 1, col = col - 1, severity = vim.diagnostic.severity.ERROR,
          source = 'testlint', message = 'undefined: BROKEN' })
      end
    end
    vim.diagnostic.set(ns, buf, found)
  end
  check(file)
  vim.api.nvim_buf_attach(file, false, {
    on_lines = function(_, buf)
      vim.schedule(function()
        check(buf)
      end)
    end,
  })

  vim.cmd('ClineTask break it, then fix it')
  local st = cline().state(env.ws)
  wait_turn(st)
  local text = session_text()
  H.eq(st.last_stop, 'end_turn', 'the turn ends with end_turn (the model saw the new error, then its fix)', text)
  H.contains(text, 'Done.')
  H.eq(H.lines(file), { 'hello, world' }, 'the buffer holds both edits')
  H.eq(#vim.diagnostic.get(file), 0, 'no diagnostic is left')
end

H.run(function()
  local fn = scenarios[env.scenario]
  if not fn then
    H.fail('unknown scenario ' .. tostring(env.scenario))
  end
  fn()
end)
