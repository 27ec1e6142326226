" Syntax for the cline session buffer.
if exists('b:current_syntax')
  finish
endif

syntax match clineUser /^You: .*$/
syntax match clineThought /^│ .*$/
syntax match clineTool /^\[tool\] .*$/ contains=clineDone,clineFailed,clineRunning
syntax match clineDone /(done)$/ contained
syntax match clineFailed /(failed)$/ contained
syntax match clineRunning /(\(pending\|running\))$/ contained
syntax match clineApproval /^\[\(approval\|question\)\] .*$/
syntax match clineDiff /^\[diff\] .*$/
syntax match clineError /^\[\(error\|conflict\)\] .*$/
syntax match clineSeparator /^──── .* ────$/
syntax match clineNote /^-- .* --$/
syntax match clinePlan /^Plan:$/
syntax match clinePlanDone /^  \[x\] .*$/
syntax match clinePlanDoing /^  \[\~\] .*$/
syntax match clineOutput /^    .*$/

highlight default link clineUser Title
highlight default link clineThought Comment
highlight default link clineTool Identifier
highlight default link clineDone String
highlight default link clineFailed ErrorMsg
highlight default link clineRunning WarningMsg
highlight default link clineApproval Question
highlight default link clineDiff Special
highlight default link clineError ErrorMsg
highlight default link clineSeparator NonText
highlight default link clineNote Comment
highlight default link clinePlan Title
highlight default link clinePlanDone Comment
highlight default link clinePlanDoing Todo
highlight default link clineOutput Comment

let b:current_syntax = 'cline'
