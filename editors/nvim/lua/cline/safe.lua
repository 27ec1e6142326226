-- visible: the one rule for text from the daemon (a model's reply, a
-- file's text or name, a command and its output) that the plugin puts
-- in a buffer, a message or a picker. What a terminal would act on or
-- Neovim would draw misleadingly (C0 controls but line breaks and tabs,
-- DEL, C1 controls and the 8-bit CSI, bidi overrides and isolates,
-- zero-width and other invisible characters, bytes that are not UTF-8)
-- is written as a visible escape: \r, \x1b, \u202e. A carriage return
-- in a message would otherwise draw over it, a newline in a buffer line
-- is an error, and a bidi override reorders what is shown.
local M = {}

-- hidden reports a code point above U+007F to escape; joiners (ZWJ,
-- ZWNJ), which emoji and several scripts need, only when exact.
local function hidden(cp, exact)
  if cp <= 0x9F then
    return true -- C1, 0x9B being an 8-bit CSI
  end
  if cp == 0x200C or cp == 0x200D or cp == 0x034F or (cp >= 0xFE00 and cp <= 0xFE0F) or (cp >= 0xE0100 and cp <= 0xE01EF) then
    return exact
  end
  return cp == 0x00AD and exact
    or cp == 0x061C or cp == 0x180E or cp == 0x115F or cp == 0x1160 or cp == 0x17B4 or cp == 0x17B5
    or (cp >= 0x200B and cp <= 0x200F)
    or (cp >= 0x2028 and cp <= 0x202E)
    or (cp >= 0x2060 and cp <= 0x206F)
    or cp == 0x3164 or cp == 0xFEFF or cp == 0xFFA0
    or (cp >= 0xFFF0 and cp <= 0xFFFB)
    or (cp >= 0xE0000 and cp <= 0xE0FFF)
end

-- visible returns s with what is not plainly visible escaped. how says
-- what stays: 'text' (the default) keeps line breaks and tabs; 'line'
-- is one buffer line, so a line break is escaped too; 'exact' is for
-- what the user approves (a command) or one-line fields (a title, a
-- file name): tabs and joiners are escaped as well.
function M.visible(s, how)
  if type(s) ~= 'string' then
    s = tostring(s == nil and '' or s)
  end
  local keep_nl = how == nil or how == 'text'
  local keep_tab = how ~= 'exact'
  local exact = how == 'exact'
  if not s:find('[%z\1-\31\127-\255]') then
    return s
  end
  local out, i, n = {}, 1, #s
  while i <= n do
    local c = s:byte(i)
    if c < 0x80 then
      if (c >= 32 and c < 127) or (c == 10 and keep_nl) or (c == 9 and keep_tab) then
        out[#out + 1] = string.char(c)
      elseif c == 13 then
        out[#out + 1] = '\\r'
      elseif c == 10 then
        out[#out + 1] = '\\n'
      elseif c == 9 then
        out[#out + 1] = '\\t'
      else
        out[#out + 1] = string.format('\\x%02x', c)
      end
      i = i + 1
    else
      local len, cp
      if c >= 0xC2 and c <= 0xDF then
        len, cp = 2, c - 0xC0
      elseif c >= 0xE0 and c <= 0xEF then
        len, cp = 3, c - 0xE0
      elseif c >= 0xF0 and c <= 0xF4 then
        len, cp = 4, c - 0xF0
      end
      local ok = len ~= nil and i + len - 1 <= n
      if ok then
        for j = i + 1, i + len - 1 do
          local b = s:byte(j)
          if b < 0x80 or b > 0xBF then
            ok = false
            break
          end
          cp = cp * 64 + (b - 0x80)
        end
      end
      if ok and ((len == 3 and cp < 0x800) or (len == 4 and (cp < 0x10000 or cp > 0x10FFFF)) or (cp >= 0xD800 and cp <= 0xDFFF)) then
        ok = false -- overlong, out of range or a surrogate
      end
      if not ok then
        out[#out + 1] = string.format('\\x%02x', c)
        i = i + 1
      else
        if hidden(cp, exact) then
          out[#out + 1] = cp <= 0xFFFF and string.format('\\u%04x', cp) or string.format('\\U%08x', cp)
        else
          out[#out + 1] = s:sub(i, i + len - 1)
        end
        i = i + len
      end
    end
  end
  return table.concat(out)
end

return M
