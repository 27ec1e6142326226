;;; hooks.el --- Claude Code hooks through cline.el  -*- lexical-binding: t; -*-

;; Flows of e2e.el (loaded by it) for the hook scripts of testdata/hooks at
;; the module's root; hooks_test.go writes the Go module, the hooks (the
;; user's config file or the folder's .cline/settings.json) and passes what
;; the cards must say in CLINE_HOOK_* variables.

;;; Code:

(defun e2e-hooks-task ()
  "Run the hooks scenario's task from hello.txt, answering each approval
with the next of KEYS; return the approval views' texts."
  (let* ((buf (e2e-open))
         (server (e2e-start-plugin buf)))
    (switch-to-buffer buf)
    (delete-other-windows)
    (list buf server)))

(defun e2e-hooks-run (buf keys)
  "Run the task from BUF, answer the approvals with KEYS in turn, wait for
the turn to end; return the approval views' texts, in order."
  (let ((before (e2e-turns-ended)) seen)
    (with-current-buffer buf (cline-task (e2e-env "CLINE_HOOK_PROMPT")))
    (dolist (k keys)
      (push (car (e2e-approve k)) seen)
      (e2e-wait "the approval to be sent" (lambda () (not (e2e-approval-waiting)))))
    ;; go vet runs inside the hook: more than a plain turn's time.
    (e2e-wait "the turn to end" (lambda () (> (e2e-turns-ended) before)) 150)
    (nreverse seen)))

(defun e2e-hooks-check-cards ()
  "Check that *cline* shows both hooks' outcomes and the model's answer."
  (e2e-check-session-log "Hook PreToolUse (" (e2e-env "CLINE_HOOK_BLOCKED")
                         "Hook PostToolUse (" (e2e-env "CLINE_HOOK_CONTEXT")
                         (e2e-env "CLINE_HOOK_LAST") "[turn ended: end_turn]"))

(defun e2e-flow-hooks ()
  "The user's hooks: the rm -rf is refused with no question, the edit asks."
  (setq e2e-script nil)
  (pcase-let* ((`(,buf ,server) (e2e-hooks-task))
               (`(,edit) (e2e-hooks-run buf '("a"))))
    (e2e-check-contains "the one approval is the edit of main.go" edit "main.go")
    (e2e-hooks-check-cards)
    (e2e-shutdown server)))

(defun e2e-flow-hooks-trust ()
  "The folder's hooks: the trust question lists them; A trusts, they run."
  (setq e2e-script nil)
  (pcase-let* ((`(,buf ,server) (e2e-hooks-task))
               (`(,trust ,edit) (e2e-hooks-run buf '("A" "a"))))
    (e2e-check-contains "the trust question names the folder" trust
                        (concat "Trust the hooks of " (directory-file-name e2e-workspace)))
    (e2e-check-contains "it lists the PreToolUse command" trust "PreToolUse: ")
    (e2e-check-contains "then the edit asks" edit "main.go")
    (e2e-hooks-check-cards)
    (e2e-shutdown server)))

(defun e2e-flow-hooks-distrust ()
  "The folder's hooks declined with r: they never run; the rm -rf asks."
  (setq e2e-script nil)
  (pcase-let* ((`(,buf ,server) (e2e-hooks-task))
               (`(,trust ,command) (e2e-hooks-run buf '("r" "r"))))
    (e2e-check-contains "the trust question comes first" trust "Trust the hooks of ")
    (e2e-check-contains "the rm -rf, refused by no hook, asks" command "rm -rf build")
    (e2e-check "no hook ran" (not (string-search "Hook PreToolUse" (e2e-buffer-text "*cline*")))
               (e2e-buffer-text "*cline*"))
    (e2e-check-session-log "Left the build folder alone." "[turn ended: end_turn]")
    (e2e-shutdown server)))

;;; hooks.el ends here
