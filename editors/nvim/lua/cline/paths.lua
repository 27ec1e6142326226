-- Paths against a workspace root, one rule for every part of the plugin:
-- a path is inside the root when it is the root or below it, and is shown
-- relative to the root when inside it, else in full.
local M = {}

function M.inside(path, root)
  return root == '/' or path == root or path:sub(1, #root + 1) == root .. '/'
end

function M.relative(path, root)
  if root and path ~= root and M.inside(path, root) then
    return path:sub(#root + (root == '/' and 1 or 2))
  end
  return path
end

return M
