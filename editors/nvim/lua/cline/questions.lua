-- cline/askQuestion (PROTOCOL.md §6): the daemon's ask_question tool,
-- answered through vim.ui.select (or vim.ui.input when there are no
-- options). It is a request, so the handler must return the answer.
-- From Neovim 0.10 on the handler runs in a coroutine and can wait for
-- an asynchronous picker; on older versions it runs on the main thread,
-- where only a picker that answers before returning (the built-in one)
-- can be used, and others fall back to inputlist().
local compat = require('cline.compat')
local visible = require('cline.safe').visible

local M = {}

local function ask(params, answer)
  -- Shown visibly; the answer is the option as the daemon sent it.
  local question = visible(type(params.question) == 'string' and params.question or 'Cline asks')
  local options = type(params.options) == 'table' and params.options or {}
  if #options > 0 then
    vim.ui.select(options, { prompt = question, kind = 'cline_question', format_item = function(o)
      return visible(o, 'exact')
    end }, answer)
  else
    vim.ui.input({ prompt = question .. ' ' }, answer)
  end
end

-- fallback asks synchronously with inputlist() or input().
local function fallback(params)
  local options = type(params.options) == 'table' and params.options or {}
  if #options == 0 then
    local ok, text = pcall(vim.fn.input, visible(params.question or 'Cline asks') .. ' ')
    return ok and text ~= '' and text or nil
  end
  local items = { visible(params.question or 'Cline asks:') }
  for i, o in ipairs(options) do
    table.insert(items, string.format('%d. %s', i, visible(o, 'exact')))
  end
  local ok, choice = pcall(vim.fn.inputlist, items)
  if ok and choice >= 1 and choice <= #options then
    return options[choice]
  end
  return nil
end

-- answer asks the user and returns their answer, nil when dismissed.
function M.answer(params)
  local can_yield, co = compat.in_coroutine()
  local done, result, waiting = false, nil, false
  ask(params, function(choice)
    if done then
      return
    end
    done, result = true, choice
    if waiting then
      -- Resume outside the picker's callback, once yield has happened.
      vim.schedule(function()
        local ok, err = coroutine.resume(co)
        if not ok then
          vim.notify('cline: answering a question failed: ' .. tostring(err), vim.log.levels.ERROR)
        end
      end)
    end
  end)
  if not done then
    if can_yield then
      waiting = true
      coroutine.yield()
    else
      -- The picker is asynchronous and cannot be waited for here: a
      -- nested wait does not read the keyboard. Ask again synchronously.
      done = true
      result = fallback(params)
    end
  end
  if type(result) ~= 'string' then
    return nil
  end
  return result
end

return M
