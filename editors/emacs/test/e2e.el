;;; e2e.el --- End-to-end flows of cline.el against the real cline-ls  -*- lexical-binding: t; -*-

;; Run by emacs_test.go as
;;
;;   emacs --batch -Q -l test/e2e.el
;;
;; with the environment:
;;   CLINE_TEST_FLOW        approve | reject | plan | cancel | stock | typeahead
;;                          | chat | resume | codeaction | nokey | review
;;                          | model | hostile | diagnostics | planresume
;;                          | stockedits | livemodel | killed | held | hunks
;;                          | hunkparse | lsp (e2e-lsp.el)
;;                          | hooks | hooks-trust | hooks-distrust (test/hooks.el)
;;                          | mcp (test/mcp.el)
;;   CLINE_LS               the daemon binary
;;   CLINE_TEST_LOG         the daemon's --log-file
;;   CLINE_TEST_WORKSPACE   folder holding hello.txt ("hello\n")
;;   CLINE_TEST_TRANSCRIPT  replay transcript for the flow (the resume flow's
;;                          second daemon reads FLOW-2.json beside it)
;;   CLINE_TEST_STATE       the daemon's stateDir
;;   CLINE_TEST_RESULT      file that receives one "ok NAME" or
;;                          "FAIL NAME: detail" line per check
;;
;; Emacs exits 0 when every check passed.  The user is scripted: the
;; functions that ask (completing-read, y-or-n-p, read-string) are
;; replaced by `e2e-answer', which answers from `e2e-script' and fails
;; the run on any question it was not told about.

;;; Code:

(require 'cl-lib)
(require 'subr-x)

;; Eglot: built in from Emacs 29; on Emacs 28 Debian's elpa-eglot, which
;; "emacs -Q" does not activate by itself.
(unless (require 'eglot nil t)
  (require 'package)
  (setq package-user-dir (make-temp-file "cline-e2e-elpa" t)
        package-directory-list '("/usr/share/emacs/site-lisp/elpa"))
  (package-initialize)
  (require 'eglot))

(defvar e2e-here (file-name-directory (or load-file-name buffer-file-name)))

(defun e2e-env (name)
  "The value of the environment variable NAME, which must be set."
  (let ((v (getenv name)))
    (if (or (null v) (string-empty-p v))
        (error "Environment variable %s is not set" name)
      v)))

(defvar e2e-flow (e2e-env "CLINE_TEST_FLOW"))
(defvar e2e-daemon (e2e-env "CLINE_LS"))
(defvar e2e-log (e2e-env "CLINE_TEST_LOG"))
(defvar e2e-workspace (file-name-as-directory (e2e-env "CLINE_TEST_WORKSPACE")))
(defvar e2e-file (expand-file-name "hello.txt" e2e-workspace))
(defvar e2e-settings
  (list :provider (list :name "replay" :transcript (e2e-env "CLINE_TEST_TRANSCRIPT"))
        :stateDir (e2e-env "CLINE_TEST_STATE")
        :approvals (list :edit "ask")))

(setq eglot-sync-connect 10
      eglot-autoshutdown nil)


;;; Checks

(defvar e2e-results nil "Lines for the result file, newest first.")
(defvar e2e-failed nil "Non-nil once a check failed.")

(defun e2e-check (name ok &optional detail)
  "Record the check NAME: passed when OK, else failed with DETAIL."
  (push (if ok (format "ok %s" name)
          (setq e2e-failed t)
          ;; One line per check: newlines in DETAIL become " | ".
          (format "FAIL %s: %s" name
                  (replace-regexp-in-string "\n" " | " (or detail ""))))
        e2e-results)
  (message "%s %s%s" (if ok "ok  " "FAIL") name
           (if (and (not ok) detail) (format ": %s" detail) ""))
  ok)

(defun e2e-check-equal (name got want)
  "Check that GOT equals WANT."
  (e2e-check name (equal got want) (format "got %S, want %S" got want)))

(defun e2e-check-contains (name text needle)
  "Check that TEXT contains NEEDLE."
  (e2e-check name (and text (string-search needle text))
             (format "%S not found in:\n%s" needle text)))

(defun e2e-wait (what pred &optional seconds)
  "Let Emacs run until PRED holds; fail with WHAT after SECONDS (60)."
  (let ((deadline (+ (float-time) (or seconds 60))))
    (while (and (not (funcall pred)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (unless (funcall pred)
      (error "Timed out waiting for %s" what))))

(defun e2e-disk ()
  "The text of hello.txt on disk."
  (with-temp-buffer
    (insert-file-contents e2e-file)
    (buffer-string)))

(defun e2e-buffer-text (name)
  "The text of buffer NAME, or nil."
  (when-let ((b (get-buffer name)))
    (with-current-buffer b (buffer-substring-no-properties (point-min) (point-max)))))


;;; The scripted user

(defvar e2e-script nil
  "List of (KIND REGEXP ANSWER): a question of KIND (completing-read,
y-or-n-p or read-string) whose prompt matches REGEXP gets ANSWER.")

(defvar e2e-asked nil
  "Questions asked so far, newest first: (KIND PROMPT ANSWER CONTEXT),
where CONTEXT is the text of `*cline-approval*' when it was shown.")

(defun e2e-answer (kind prompt &optional collection)
  "Answer the question of KIND with PROMPT from `e2e-script'.
An answer that is a function is called with the COLLECTION offered."
  (let ((rule (cl-find-if (lambda (r) (and (eq (car r) kind)
                                           (string-match-p (nth 1 r) prompt)))
                          e2e-script)))
    (unless rule
      (e2e-check (format "unexpected %s" kind) nil prompt)
      (error "Unexpected %s: %s" kind prompt))
    (let ((context (let ((w (get-buffer-window "*cline-approval*" t)))
                     (and w (e2e-buffer-text "*cline-approval*"))))
          (answer (if (functionp (nth 2 rule)) (funcall (nth 2 rule) collection) (nth 2 rule))))
      (push (list kind prompt answer context) e2e-asked)
      (message "scripted user: %s %S -> %S" kind prompt answer)
      answer)))

(advice-add 'completing-read :override
            (lambda (prompt &optional collection &rest _)
              (e2e-answer 'completing-read prompt collection)))
(advice-add 'y-or-n-p :override
            (lambda (prompt &rest _) (e2e-answer 'y-or-n-p prompt)))
(advice-add 'yes-or-no-p :override
            (lambda (prompt &rest _) (e2e-answer 'y-or-n-p prompt)))
(advice-add 'read-string :override
            (lambda (prompt &rest _) (e2e-answer 'read-string prompt)))

(defvar e2e-diff-shown nil
  "Non-nil once the scripted user took \"Show diff\" of a stock approval.")

(defun e2e-stock-approval (collection)
  "The scripted user's answer to a stock approval offering COLLECTION:
a look at the change first when it is offered as a document (\"Show
diff\": the Eglot of Emacs 30 shows documents, that of Emacs 28 does
not), then \"Allow\"."
  (if (and (not e2e-diff-shown) (member "Show diff" (all-completions "" collection)))
      (progn (setq e2e-diff-shown t) "Show diff")
    "Allow"))

(defun e2e-check-stock-approval ()
  "Check that the user was asked about the edit once through
showMessageRequest (twice with \"Show diff\", which shows the change and
asks again) and saw the change: in the question, or in the document
\"Show diff\" opened."
  (let ((qs (cl-remove-if-not (lambda (q) (and (eq (car q) 'completing-read)
                                               (string-match-p "cline-ls wants to run" (nth 1 q))))
                              e2e-asked)))
    (e2e-check-equal "approval asked through showMessageRequest, once"
                     (length qs) (if e2e-diff-shown 2 1))
    (if (not e2e-diff-shown)
        (e2e-check-contains "the request shows the diff" (nth 1 (car qs)) "+hello, world")
      (let ((doc (cl-find-if (lambda (b) (string-suffix-p ".diff" (or (buffer-file-name b) "")))
                             (buffer-list))))
        (e2e-check-contains "Show diff opens the change"
                            (if doc (with-current-buffer doc (buffer-string)) "(no .diff buffer)")
                            "+hello, world")))))

(defun e2e-asked (kind regexp)
  "The first recorded question of KIND whose prompt matches REGEXP."
  (cl-find-if (lambda (q) (and (eq (car q) kind) (string-match-p regexp (nth 1 q))))
              (reverse e2e-asked)))

;;; Flows

(defun e2e-open ()
  "Visit hello.txt and check it is the original text."
  (let ((buf (find-file-noselect e2e-file)))
    (with-current-buffer buf
      (e2e-check-equal "buffer starts as hello" (buffer-string) "hello\n"))
    buf))

(defun e2e-start-plugin (buf)
  "Load cline.el and start cline-ls for BUF; return the server."
  (load (expand-file-name "../cline.el" e2e-here) nil t)
  (setq cline-program (list e2e-daemon "--log-file" e2e-log)
        cline-initialization-options e2e-settings)
  (with-current-buffer buf
    (cline-start)
    (e2e-wait "eglot to manage hello.txt"
              (lambda () (with-current-buffer buf (bound-and-true-p eglot--managed-mode))))
    (let ((server (eglot-current-server)))
      (e2e-check "server is a cline-eglot-server"
                 (and server (eq (eieio-object-class-name server) 'cline-eglot-server))
                 (format "%S" server))
      server)))

(defun e2e-shutdown (server)
  "Shut SERVER down from a buffer it manages (hello.txt's when it is one).
The Eglot of Emacs 30.1 sends the current buffer's pending changes
first, and in a buffer it does not manage fails an assertion of
track-changes instead."
  (let* ((hello (find-buffer-visiting e2e-file))
         (managed (cl-remove-if-not #'buffer-live-p (eglot--managed-buffers server)))
         (buf (if (memq hello managed) hello (car managed))))
    (if buf
        (with-current-buffer buf (eglot-shutdown server))
      (eglot-shutdown server))))

(defun e2e-count (regexp)
  "How many times REGEXP occurs in `*cline*'."
  (let ((text (or (e2e-buffer-text "*cline*") "")) (n 0) (start 0))
    (while (string-match regexp text start)
      (setq n (1+ n) start (match-end 0)))
    n))

(defun e2e-turns-ended ()
  "How many turns `*cline*' shows as ended, or failed."
  (+ (e2e-count "\\[turn ended: ") (e2e-count "\\[session/prompt failed: ")))

(defun e2e-run-task (buf text)
  "Run TEXT as an act task from BUF and wait for the turn to end."
  (let ((before (e2e-turns-ended)))
    (with-current-buffer buf (cline-task text))
    (e2e-wait "the turn to end" (lambda () (> (e2e-turns-ended) before)) 60)))

(defun e2e-check-session-log (&rest needles)
  "Check that `*cline*' contains each of NEEDLES."
  (let ((log (e2e-buffer-text "*cline*")))
    (dolist (n needles)
      (e2e-check-contains (format "*cline* shows %S" n) log n))))

(defun e2e-approval-waiting ()
  "Non-nil when an approval waits in a displayed `*cline-approval*'."
  (let ((buf (get-buffer "*cline-approval*")))
    (and buf (buffer-local-value 'cline--approval-req buf)
         (get-buffer-window buf t))))

(defun e2e-windows ()
  "The names of the buffers the windows show, selected window first."
  (mapcar (lambda (w) (buffer-name (window-buffer w))) (window-list nil 'no-minibuf)))

(defun e2e-approve (key)
  "Wait for the approval view, then answer it as a user does: switch
there with `cline-approve' and press KEY.  Return (TEXT ELSEWHERE
WINDOWS STATUS): the view's text, whether the cursor was in another
window, the windows' buffers and the mode line's status then."
  (e2e-wait "the approval view" #'e2e-approval-waiting)
  (let ((seen (list (e2e-buffer-text "*cline-approval*")
                    (not (eq (window-buffer (selected-window)) (get-buffer "*cline-approval*")))
                    (e2e-windows)
                    (cline-status-string))))
    (cline-approve)
    (execute-kbd-macro (kbd key))
    seen))

(defun e2e-run-task-approving (buf text key)
  "Run TEXT as an act task from BUF, answer its approval with KEY and
wait for the turn to end; return what `e2e-approve' saw."
  (let ((before (e2e-turns-ended)) seen)
    (with-current-buffer buf (cline-task text))
    (setq seen (e2e-approve key))
    (e2e-wait "the turn to end" (lambda () (> (e2e-turns-ended) before)) 60)
    seen))

(defun e2e-flow-approve ()
  "Flow 1: an approved edit lands in the unsaved buffer, then on save on disk."
  (setq e2e-script nil) ; no minibuffer question: any would fail the flow
  (let* ((buf (e2e-open))
         (server (e2e-start-plugin buf))
         (seen (progn (switch-to-buffer buf)
                      (delete-other-windows)
                      (e2e-run-task-approving buf "Greet the world in hello.txt" "a"))))
    (e2e-check-equal "the approval came in a window of its own, the file's kept selected"
                     (cons (car (nth 2 seen)) (sort (copy-sequence (nth 2 seen)) #'string<))
                     '("hello.txt" "*cline*" "*cline-approval*" "hello.txt"))
    (e2e-check-contains "the status says an approval waits" (nth 3 seen) "approval needed")
    (e2e-check-equal "once answered, the user's windows are as before"
                     (e2e-windows) '("hello.txt" "*cline*"))
    (with-current-buffer buf
      (e2e-check-equal "buffer holds the edit" (buffer-string) "hello, world\n")
      (e2e-check "buffer is modified (unsaved)" (buffer-modified-p)))
    (e2e-check-equal "disk untouched before save" (e2e-disk) "hello\n")
    (e2e-check-contains "approval shows the diff" (nth 0 seen) "+hello, world")
    (e2e-check-contains "approval lists its keys" (nth 0 seen) "[a] allow  [A] always  [r] reject  [R] reject, say why  [h] hunks")
    (e2e-check "approval view did not take the cursor" (nth 1 seen))
    (e2e-check "approval view closes once answered" (not (e2e-approval-waiting)))
    (e2e-check "the diff is shown once: no *cline-diff* window"
               (not (get-buffer-window "*cline-diff*" t)))
    (e2e-check "*cline* links the approved diff without repeating it"
               (not (string-match-p "^    [-+][0-9]+: " (e2e-buffer-text "*cline*"))))
    (e2e-check-session-log "> Greet the world in hello.txt" "Editing." "Done."
                           "[completed]" "-> Allow" "diff hello.txt +1 -1" "[turn ended: end_turn]")
    ;; Batch Emacs draws no mode line: the chat flow, in a terminal, checks
    ;; them drawn.
    (e2e-check-contains "the status has the mode, the state and the tokens"
                        (cline-status-string) "Cline[act idle 129/129 tok]")
    (e2e-check-contains "the long status has the turn and session totals and the context"
                        (cline-status-string t) "act · idle · turn 129 tok · session 129 tok · context ")
    (with-current-buffer buf (save-buffer))
    (e2e-check-equal "disk has the edit after save" (e2e-disk) "hello, world\n")
    (e2e-shutdown server)))

(defun e2e-flow-reject ()
  "Flow 2: a rejected edit leaves buffer and disk unchanged."
  (setq e2e-script '((read-string "Feedback" "not now")))
  (let* ((buf (e2e-open))
         (server (e2e-start-plugin buf)))
    (e2e-run-task-approving buf "Greet the world in hello.txt" "R")
    (with-current-buffer buf
      (e2e-check-equal "buffer unchanged" (buffer-string) "hello\n")
      (e2e-check "buffer not modified" (not (buffer-modified-p))))
    (e2e-check-equal "disk unchanged" (e2e-disk) "hello\n")
    (e2e-check "feedback asked" (e2e-asked 'read-string "Feedback"))
    (e2e-check-session-log "[failed]" "-> Reject (feedback: not now)"
                           "Understood" "[turn ended: end_turn]")
    (e2e-shutdown server)))

(defun e2e-flow-plan ()
  "Plan, a question, a mode switch, then an act turn approved with y-or-n-p."
  (setq e2e-script '((completing-read "cline asks: Which greeting" "hello, world")
                     (y-or-n-p "cline: allow .*hello.txt" t)))
  (let* ((buf (e2e-open))
         (server (e2e-start-plugin buf)))
    (setq cline-approval-style 'y-or-n-p)
    (let ((before (e2e-turns-ended)))
      (with-current-buffer buf (cline-plan "Greet the world"))
      (e2e-wait "the plan turn to end" (lambda () (> (e2e-turns-ended) before))))
    (e2e-check-equal "session is in plan mode" (cline--session-mode cline--session) "plan")
    (e2e-check-session-log "Plan:" "[ ] Greet the world in hello.txt"
                           "? Which greeting?" "-> hello, world"
                           "Plan: replace hello by hello, world.")
    (with-current-buffer buf (cline-set-mode "act"))
    (e2e-wait "the act mode" (lambda () (equal (cline--session-mode cline--session) "act")))
    (e2e-wait "the mode change in *cline*"
              (lambda () (string-search "[mode: act]" (or (e2e-buffer-text "*cline*") ""))))
    (e2e-run-task buf "Go ahead")
    (e2e-check "approval asked with y-or-n-p" (e2e-asked 'y-or-n-p "cline: allow"))
    (with-current-buffer buf
      (e2e-check-equal "buffer holds the edit" (buffer-string) "hello, world\n"))
    (e2e-check-equal "disk untouched" (e2e-disk) "hello\n")
    (e2e-check-session-log "Done." "[turn ended: end_turn]")
    (e2e-shutdown server)))

(defun e2e-flow-cancel ()
  "The user cancels the turn while its approval is asked."
  (setq e2e-script nil)
  (let* ((buf (e2e-open))
         (server (e2e-start-plugin buf))
         (before (e2e-turns-ended)))
    (with-current-buffer buf (cline-task "Greet the world in hello.txt"))
    (e2e-wait "the approval view" #'e2e-approval-waiting)
    (with-current-buffer buf (cline-cancel))
    (e2e-wait "the turn to end" (lambda () (> (e2e-turns-ended) before)) 60)
    (e2e-check "the approval view closes with the turn" (not (e2e-approval-waiting)))
    (e2e-check "session is idle" (not (cline--session-busy cline--session)))
    (with-current-buffer buf
      (e2e-check-equal "buffer unchanged" (buffer-string) "hello\n"))
    (e2e-check-equal "disk unchanged" (e2e-disk) "hello\n")
    (e2e-check-session-log "[cancel requested]" "dropped: the turn was cancelled"
                           "[turn ended: cancelled]")
    (e2e-check "no failed request in *cline*"
               (not (string-search "failed:" (e2e-buffer-text "*cline*"))))
    ;; The session takes the next task.
    (e2e-run-task-approving buf "Greet the world in hello.txt, again" "a")
    (with-current-buffer buf
      (e2e-check-equal "the next task edits the buffer" (buffer-string) "hello, world\n"))
    (e2e-shutdown server)))

(defun e2e-flow-typeahead ()
  "Keys typed while an approval waits, its own keys and a space among
them, go to the buffer being edited and never answer it."
  (setq e2e-script nil) ; a minibuffer prompt taking the keys fails the flow
  (let* ((buf (e2e-open))
         (server (e2e-start-plugin buf))
         (before (e2e-turns-ended)))
    (switch-to-buffer buf)
    (with-current-buffer buf (cline-task "Greet the world in hello.txt"))
    (e2e-wait "the approval view" #'e2e-approval-waiting)
    ;; The user goes on typing in hello.txt, as a real keyboard would.
    (execute-kbd-macro (kbd "SPC y a A r R q RET 3 4 SPC"))
    (accept-process-output nil 0.3)
    (e2e-check "the approval still waits" (e2e-approval-waiting))
    (e2e-check "the turn still waits" (cline--session-busy cline--session))
    (e2e-check "the cursor stayed in hello.txt" (eq (current-buffer) buf))
    (with-current-buffer buf
      (e2e-check-contains "the typed keys went into hello.txt" (buffer-string) " yaArRq\n")
      (e2e-check-contains "RET and the digits too" (buffer-string) "34 hello"))
    (e2e-check "no answer was logged" (not (string-search "    -> " (or (e2e-buffer-text "*cline*") ""))))
    ;; Only a key pressed in the approval view answers it.
    (cline-approve)
    (execute-kbd-macro (kbd "r"))
    (e2e-wait "the turn to end" (lambda () (> (e2e-turns-ended) before)) 60)
    (e2e-check-session-log "-> Reject")
    (with-current-buffer buf
      (e2e-check-contains "the typed text is kept" (buffer-string) " yaArRq\n")
      (set-buffer-modified-p nil))
    (e2e-shutdown server)))


;; The stock flow runs in a terminal Emacs (emacs -nw under script(1)),
;; started from a timer once the command loop runs, so Emacs goes idle
;; between events as it does for a user and Eglot's didChange timer fires
;; on its own; nothing here runs an idle timer by hand.
(defun e2e-flow-stock ()
  "Flow 3: no plugin.  Eglot alone, the task started with
workspace/executeCommand cline.prompt, which answers at once, the
approval answered through window/showMessageRequest."
  (setq e2e-script '((completing-read "cline-ls wants to run editor" e2e-stock-approval)
                     ;; Stock Eglot confirms server edits; the user says yes.
                     (y-or-n-p "Server wants to edit" t)))
  (add-to-list 'eglot-server-programs
               `(text-mode . (,e2e-daemon "--log-file" ,e2e-log "--log-level" "debug"
                                          :initializationOptions ,e2e-settings)))
  ;; Eglot sends `eglot-workspace-configuration' as
  ;; workspace/didChangeConfiguration right after connecting, and
  ;; cline-ls takes it in place of the initializationOptions: the same
  ;; settings go there too (the README's set-up without the plugin).
  (setq-default eglot-workspace-configuration e2e-settings)
  (let ((buf (e2e-open))
        server res)
    (e2e-check "Emacs runs its command loop (not batch)" (not noninteractive))
    (with-current-buffer buf
      (call-interactively #'eglot)
      (e2e-wait "eglot to manage hello.txt" (lambda () (bound-and-true-p eglot--managed-mode)))
      (setq server (eglot-current-server))
      (e2e-check "server is plain eglot" (not (featurep 'cline)))
      ;; What the README tells a user without the plugin to evaluate.
      (setq res (eglot-execute-command
                 server "cline.prompt"
                 (vector (list :text "Greet the world in hello.txt" :mode "act")))))
    (e2e-check "cline.prompt answers at once with the session" (stringp (plist-get res :sessionId)))
    (e2e-wait "the turn to end"
              (lambda () (string-search "turn ended (end_turn)" (or (e2e-buffer-text "*Messages*") ""))))
    (e2e-check-stock-approval)
    (let ((events (cl-loop for b in (buffer-list)
                           when (string-match-p "EGLOT.*events" (buffer-name b))
                           concat (e2e-buffer-text (buffer-name b)))))
      (e2e-check-contains "the edit is reported applied to the model" events "Edited hello.txt")
      (e2e-check "no edit reported as failed"
                 (not (string-search "was not applied" events))))
    (with-current-buffer buf
      (e2e-check-equal "buffer holds the edit" (buffer-string) "hello, world\n")
      (e2e-check "buffer is modified (unsaved)" (buffer-modified-p)))
    (e2e-check-equal "disk untouched before save" (e2e-disk) "hello\n")
    (with-current-buffer buf (save-buffer))
    (e2e-check-equal "disk has the edit after save" (e2e-disk) "hello, world\n")
    (e2e-shutdown server)))


(defun e2e-type (keys)
  "Type KEYS (a `kbd' string) into the selected window, as a keyboard does."
  (execute-kbd-macro (kbd keys)))

(defun e2e-type-text (text)
  "Type the characters of TEXT into the selected window."
  (execute-kbd-macro text))

(defun e2e-chat-window ()
  "Select the window of `*cline*', at the end of its prompt area."
  (select-window (or (get-buffer-window "*cline*") (display-buffer "*cline*")))
  (goto-char (point-max)))

(defun e2e-session-file-text (id)
  "The text of the persisted log of session ID."
  (mapconcat (lambda (f) (with-temp-buffer (insert-file-contents f) (buffer-string)))
             (cl-remove-if-not (lambda (f) (string-search id f))
                               (directory-files-recursively (e2e-env "CLINE_TEST_STATE") "\\.jsonl\\'"))
             "\n"))

(defun e2e-send-and-wait (keys &optional approve)
  "Type KEYS in the chat and wait for the turn they start to end.
With APPROVE, answer the turn's approval with that key first."
  (let ((before (e2e-turns-ended)))
    (e2e-chat-window)
    (e2e-type keys)
    (when approve (e2e-approve approve))
    (e2e-wait "the turn to end" (lambda () (> (e2e-turns-ended) before)) 60)))

(defvar e2e-statuses nil
  "The chat's header line as drawn each time the status changed, newest first.")

(defun e2e-record-status ()
  "Record the chat's header line as it is drawn now."
  (when-let ((b (get-buffer "*cline*")))
    (push (with-current-buffer b
            (format-mode-line header-line-format nil (get-buffer-window b)))
          e2e-statuses)))

(defun e2e-flow-chat ()
  "The chat: a multi-line prompt typed in `*cline*', a follow-up in the
same session with a file and a selection mentioned, the waiting
indicator and the totals, ? help, then the last turn undone."
  (setq e2e-script '((y-or-n-p "Undo the last turn" t)))
  (with-temp-file (expand-file-name "notes.txt" e2e-workspace)
    (insert "remember: greet warmly\n"))
  (let* ((buf (e2e-open))
         (server (e2e-start-plugin buf))
         (before (e2e-turns-ended))
         first-id)
    (switch-to-buffer buf)
    (delete-other-windows)
    (cline-show)
    (e2e-check "the chat opens at its prompt area"
               (with-current-buffer "*cline*" (= (point) (point-max) cline--input)))
    ;; The first prompt, on two lines: RET is a newline, C-c C-c sends.
    (e2e-type-text "Greet the world in hello.txt")
    (e2e-type "RET")
    (e2e-type-text "keep it short")
    ;; The replay model answers at once: the header is recorded each time
    ;; the status changes rather than looked at later.
    (advice-add 'cline--status-changed :after #'e2e-record-status)
    (e2e-type "C-c C-c")
    (e2e-check-equal "the prompt area is emptied once sent" (cline--input-text) "")
    (e2e-approve "a")
    (advice-remove 'cline--status-changed #'e2e-record-status)
    (let ((seen (reverse e2e-statuses)))
      (e2e-check "the header said the model was awaited, then working, then the approval"
                 (let ((w (cl-position-if (lambda (x) (string-search "waiting for the model" x)) seen)))
                   (and w
                        (cl-position-if (lambda (x) (string-search "working" x)) seen :start w)
                        (cl-position-if (lambda (x) (string-search "approval needed" x)) seen :start w)))
                 (mapconcat #'identity seen "\n")))
    (e2e-wait "the turn to end" (lambda () (> (e2e-turns-ended) before)) 60)
    (setq first-id (cline--session-id cline--session))
    (with-current-buffer buf
      (e2e-check-equal "the first turn edited the buffer" (buffer-string) "hello, world\n"))
    (e2e-check-equal "the file and the chat keep their windows" (sort (e2e-windows) #'string<)
                     '("*cline*" "hello.txt"))
    ;; The follow-up: the region of hello.txt and @notes.txt mentioned.
    (select-window (get-buffer-window buf))
    (with-current-buffer buf
      (goto-char (point-min))
      (set-mark (point-max))
      (activate-mark)
      (call-interactively #'cline-mention-region))
    (e2e-check-contains "the selection is mentioned in the prompt area"
                        (cline--input-text) "@hello.txt#L1 ")
    (let ((before (e2e-turns-ended)))
      (e2e-chat-window)
      (e2e-type "A d d SPC a n SPC e x c l a m a t i o n , SPC s e e SPC @ n o t e s . t x t C-c C-c")
      (e2e-wait "the approval view" #'e2e-approval-waiting)
      ;; Writing the next prompt meanwhile, the approval's keys among it.
      (e2e-chat-window)
      (e2e-type "a SPC A SPC r SPC q")
      (e2e-check "keys typed in the chat do not answer the approval" (e2e-approval-waiting))
      (e2e-check-equal "they are the next prompt's text" (cline--input-text) "a A r q")
      (e2e-type "C-a C-k")
      (e2e-approve "a")
      (e2e-wait "the turn to end" (lambda () (> (e2e-turns-ended) before)) 60))
    (e2e-check-equal "the follow-up ran in the same session" (cline--session-id cline--session) first-id)
    (let ((log (e2e-session-file-text first-id)))
      (e2e-check-contains "the selection reached the model" log "hello.txt#L1\\\">\\nhello, world\\n")
      (e2e-check-contains "the mentioned file's text reached the model" log "notes.txt\\\">\\nremember: greet warmly")
      (e2e-check-contains "both prompts are in the one session's log" log "keep it short"))
    (e2e-check-session-log "> @hello.txt#L1 Add an exclamation, see @notes.txt" "  @ hello.txt#L1" "  @ notes.txt"
                           "Done again.")
    (with-current-buffer buf
      (e2e-check-equal "the follow-up edited the buffer" (buffer-string) "hello, world!\n"))
    (e2e-check-contains "the mode line has the turn's and the session's totals"
                        (format-mode-line mode-line-format nil (get-buffer-window buf))
                        "Cline[act idle 210/339 tok]")
    ;; ? in the transcript shows the keys; in the prompt area it is a character.
    (e2e-chat-window)
    (goto-char (point-min))
    (e2e-type "?")
    (let ((help (e2e-buffer-text "*Help*")))
      (e2e-check-contains "? shows the chat's help" help "chat: the session streams above")
      (dolist (cmd '(cline-send cline-cancel cline-mention-file cline-set-mode cline-set-model
                     cline-new-session cline-resume cline-undo-turn cline-checkpoints
                     cline-approve cline-previous-prompt))
        (e2e-check-contains (format "the help lists %s with its key" cmd) help (symbol-name cmd))))
    (quit-window nil (get-buffer-window "*Help*"))
    ;; The checkpoint list, and what restoring the first would change.
    (e2e-chat-window)
    (e2e-type "C-c C-l")
    (e2e-check-contains "the checkpoints are listed with their files"
                        (e2e-buffer-text "*cline-checkpoints*") "hello.txt")
    (e2e-check "the list has the cursor, on the first checkpoint"
               (and (eq (window-buffer (selected-window)) (get-buffer "*cline-checkpoints*"))
                    (get-text-property (line-beginning-position) 'cline-checkpoint)))
    (e2e-type "v")
    (let ((preview (e2e-buffer-text "*cline-checkpoint-diff*")))
      (e2e-check-contains "the preview says what a restore would change" preview "would change 1 file")
      (e2e-check-contains "with the diff" preview "hello, world!"))
    (with-current-buffer buf
      (e2e-check-equal "a preview changes nothing" (buffer-string) "hello, world!\n"))
    (e2e-type "q")
    (quit-window nil (get-buffer-window "*cline-checkpoint-diff*"))
    (e2e-check-equal "the list and the preview gone, the windows are as before"
                     (sort (e2e-windows) #'string<) '("*cline*" "hello.txt"))
    ;; Undo the last turn: its edit leaves the buffer, its exchange the history.
    (e2e-chat-window)
    (e2e-type "C-c C-u")
    (e2e-wait "the restore" (lambda () (string-search "[restored to the checkpoint"
                                                      (or (e2e-buffer-text "*cline*") ""))))
    (e2e-check "the undo was asked" (e2e-asked 'y-or-n-p "Undo the last turn"))
    (with-current-buffer buf
      (e2e-check-equal "undo took the follow-up's edit back" (buffer-string) "hello, world\n"))
    (e2e-check-session-log "(both): hello.txt]")
    ;; The model's next request holds the first turn only (checked by the transcript).
    (e2e-send-and-wait "W h i c h SPC v e r s i o n ? C-c C-c")
    (e2e-check-session-log "> Which version?" "The first one.")
    (e2e-check "no request failed" (not (string-search "failed:" (e2e-buffer-text "*cline*"))))
    (with-current-buffer buf (set-buffer-modified-p nil))
    (e2e-shutdown server)))

(defun e2e-flow-resume ()
  "A session of an earlier daemon is resumed: its history is shown again
and the next prompt goes on in it."
  (setq e2e-script
        `((completing-read "Resume cline session"
                           ,(lambda (collection)
                              (or (car (cl-find-if (lambda (c) (string-search "Remember the word" (car c)))
                                                   collection))
                                  (error "No candidate for the earlier session in %S" collection))))))
  (let* ((buf (e2e-open))
         (server (e2e-start-plugin buf))
         id)
    (e2e-run-task buf "Remember the word banana")
    (setq id (cline--session-id cline--session))
    (e2e-check-session-log "OK, banana.")
    (e2e-shutdown server)
    (e2e-wait "the daemon to stop" (lambda () (not (jsonrpc-running-p server))))
    ;; A new daemon; its model has the second part of the transcript.
    (setq cline-initialization-options
          (plist-put (copy-tree e2e-settings) :provider
                     (list :name "replay"
                           :transcript (concat (file-name-sans-extension
                                                (e2e-env "CLINE_TEST_TRANSCRIPT"))
                                               "-2.json"))))
    (with-current-buffer buf
      (cline-start)
      (e2e-wait "eglot to manage hello.txt again"
                (lambda () (with-current-buffer buf
                             (and (bound-and-true-p eglot--managed-mode)
                                  (jsonrpc-running-p (eglot-current-server))))))
      (setq server (eglot-current-server))
      (cline-resume))
    (e2e-check "the list offered the earlier session"
               (string-search id (nth 2 (car e2e-asked))))
    (e2e-wait "the session to load"
              (lambda () (string-search "resumed, mode" (or (e2e-buffer-text "*cline*") ""))))
    (e2e-check-equal "the resumed session is current" (cline--session-id cline--session) id)
    (e2e-check-session-log "> Remember the word banana" "OK, banana." "resumed, mode act")
    (e2e-send-and-wait "W h a t SPC w a s SPC t h e SPC w o r d ? C-c C-c")
    (e2e-check-equal "the follow-up went to the resumed session" (cline--session-id cline--session) id)
    (e2e-check-session-log "> What was the word?" "It was banana.")
    (e2e-check-contains "the session's log holds both prompts" (e2e-session-file-text id) "What was the word?")
    (e2e-shutdown server)))

;; Runs in a terminal Emacs, as the stock flow does.
(defun e2e-flow-codeaction ()
  "No plugin: a code action on a flymake diagnostic runs a turn whose
edit lands in the buffer, and the code action returns at once."
  (setq e2e-script '((completing-read "Pick an action" "Fix with agent")
                     (completing-read "cline-ls wants to run editor" e2e-stock-approval)
                     (y-or-n-p "Server wants to edit" t)))
  (add-to-list 'eglot-server-programs
               `(text-mode . (,e2e-daemon "--log-file" ,e2e-log
                                          :initializationOptions ,e2e-settings)))
  (setq-default eglot-workspace-configuration e2e-settings)
  (let ((buf (e2e-open))
        server asked-during)
    (e2e-check "Emacs runs its command loop (not batch)" (not noninteractive))
    (switch-to-buffer buf)
    (call-interactively #'eglot)
    (e2e-wait "eglot to manage hello.txt" (lambda () (bound-and-true-p eglot--managed-mode)))
    (setq server (eglot-current-server))
    (e2e-check "server is plain eglot" (not (featurep 'cline)))
    ;; cline-ls publishes no diagnostics: this one is a linter's, given
    ;; to Eglot's own publishDiagnostics handler as a server's would be.
    (eglot-handle-notification
     server 'textDocument/publishDiagnostics
     :uri (eglot--path-to-uri e2e-file)
     :diagnostics (vector (list :range (list :start (list :line 0 :character 0)
                                             :end (list :line 0 :character 5))
                                :severity 2 :source "greeter"
                                :message "the greeting names nobody")))
    (e2e-wait "flymake to show the diagnostic"
              (lambda () (with-current-buffer buf (flymake-diagnostics (point-min) (point-max)))))
    (goto-char (point-min))
    ;; Typed, as a user does: from a key, Eglot asks in the minibuffer
    ;; (called from a timer it would pop up a menu).
    (global-set-key (kbd "C-c a") #'eglot-code-actions)
    (execute-kbd-macro (kbd "C-c a"))
    (setq asked-during (e2e-asked 'completing-read "cline-ls wants to run"))
    (e2e-check "the code action offered Fix with agent" (e2e-asked 'completing-read "Pick an action"))
    (e2e-check "the code action returned before the turn asked anything (no freeze)"
               (not asked-during))
    (e2e-wait "the turn to end"
              (lambda () (string-search "turn ended (end_turn)" (or (e2e-buffer-text "*Messages*") ""))))
    (e2e-check-stock-approval)
    (with-current-buffer buf
      (e2e-check-equal "buffer holds the edit" (buffer-string) "hello, world\n")
      (e2e-check "buffer is modified (unsaved)" (buffer-modified-p)))
    (e2e-check-equal "disk untouched" (e2e-disk) "hello\n")
    (e2e-check-contains "the diagnostic reached the model with its line"
                        (e2e-session-file-text "") "line 1: the greeting names nobody (greeter)")
    (with-current-buffer buf (save-buffer))
    (e2e-check-equal "disk has the edit after save" (e2e-disk) "hello, world\n")
    (e2e-shutdown server)))


(defun e2e-flow-nokey ()
  "A first run with no API key: the chat's first prompt says how to set
a model; the README's offline model (the replay transcript) then runs
the same prompt, taken back with C-c C-p."
  (setq e2e-script nil)
  (let* ((buf (e2e-open))
         (e2e-settings (list :stateDir (e2e-env "CLINE_TEST_STATE") :approvals (list :edit "allow")))
         (server (e2e-start-plugin buf)))
    (switch-to-buffer buf)
    (cline-show)
    (e2e-type-text "Greet the world in hello.txt")
    (e2e-type "C-c C-c")
    (e2e-wait "the prompt to fail" (lambda () (> (e2e-turns-ended) 0)))
    (e2e-check-session-log "no model is configured" "(setq cline-initialization-options"
                           "ANTHROPIC_API_KEY")
    ;; The README's first run without a key: the replay model.
    (setq cline-initialization-options
          (list :provider (list :name "replay" :transcript (e2e-env "CLINE_TEST_TRANSCRIPT"))
                :stateDir (e2e-env "CLINE_TEST_STATE")))
    (with-current-buffer buf (eglot-reconnect server))
    (e2e-wait "the new daemon" (lambda () (with-current-buffer buf
                                            (and (eglot-current-server)
                                                 (not (eq (eglot-current-server) server))
                                                 (jsonrpc-running-p (eglot-current-server))))))
    (setq server (with-current-buffer buf (eglot-current-server)))
    (e2e-chat-window)
    (e2e-type "C-c C-p")
    (e2e-check-equal "C-c C-p takes the last prompt back" (cline--input-text) "Greet the world in hello.txt")
    (e2e-send-and-wait "C-c C-c" "a")
    (with-current-buffer buf
      (e2e-check-equal "the offline model's edit is in the buffer" (buffer-string) "hello, world\n")
      (set-buffer-modified-p nil))
    (e2e-check-session-log "Done." "[turn ended: end_turn]")
    (e2e-shutdown server)))

;; Runs in a terminal Emacs: Ediff draws its windows there as for a user.
(defun e2e-flow-review ()
  "An edit the settings allow without asking: its diff is shown once, in
the chat; reviewed hunk by hunk in Ediff, taking its hunk back leaves
the buffer as before, unsaved."
  (setq e2e-script '((y-or-n-p "Quit this Ediff session" t)))
  (let* ((buf (e2e-open))
         (e2e-settings (plist-put (copy-tree e2e-settings) :approvals (list :edit "allow")))
         (server (e2e-start-plugin buf)))
    (switch-to-buffer buf)
    (delete-other-windows)
    (cline-show)
    (e2e-send-and-wait "G r e e t SPC t h e SPC w o r l d C-c C-c")
    (with-current-buffer buf
      (e2e-check-equal "the edit is in the buffer" (buffer-string) "hello, world\n"))
    (e2e-check "no approval was asked" (not (string-search "approval needed" (e2e-buffer-text "*cline*"))))
    (e2e-check-session-log "diff hello.txt +1 -1  review")
    (e2e-check "the chat shows the diff's lines under its link"
               (string-match-p "review\n    -1: hello\n    \\+1: hello, world\n" (e2e-buffer-text "*cline*")))
    (e2e-check "the diff is shown once: no *cline-diff* window"
               (not (get-buffer-window "*cline-diff*" t)))
    (e2e-chat-window)
    (e2e-type "C-c C-e")
    (e2e-check "Ediff compares the text before the edit with the buffer"
               (and (boundp 'ediff-buffer-A) (get-buffer "*Ediff Control Panel*")
                    (with-current-buffer "*Ediff Control Panel*"
                      (and (equal (with-current-buffer ediff-buffer-A (buffer-string)) "hello\n")
                           (eq ediff-buffer-B buf)))))
    (e2e-check "the text before is read-only"
               (buffer-local-value 'buffer-read-only (get-buffer "*cline before hello.txt*")))
    ;; In the control panel: to the first hunk, take it back, quit.
    (e2e-type "n a q")
    (with-current-buffer buf
      (e2e-check-equal "the hunk taken back leaves the buffer as before" (buffer-string) "hello\n"))
    (e2e-check "the review asked to quit" (e2e-asked 'y-or-n-p "Quit this Ediff session"))
    (e2e-check "the file is shown again" (get-buffer-window buf))
    (e2e-wait "the review to clean up" (lambda () (not (get-buffer "*cline before hello.txt*"))) 10)
    (e2e-check "the text before is gone with Ediff"
               (not (get-buffer "*cline before hello.txt*")))
    (e2e-check-equal "the windows are as before the review"
                     (sort (e2e-windows) #'string<) '("*cline*" "hello.txt"))
    (e2e-check-equal "disk untouched" (e2e-disk) "hello\n")
    (with-current-buffer buf (set-buffer-modified-p nil))
    (e2e-shutdown server)))

(defun e2e-flow-model ()
  "The model and the mode switched from the chat: the next new session
runs on the model chosen (its context window says so), in the mode chosen."
  (setq e2e-script '((completing-read "Cline model" "claude-sonnet-4-5")
                     (completing-read "Cline mode" "plan")))
  (let* ((buf (e2e-open))
         (server (e2e-start-plugin buf))
         first)
    (switch-to-buffer buf)
    (cline-show)
    (e2e-send-and-wait "W h i c h SPC m o d e l ? C-c C-c")
    (setq first (cline--session-id cline--session))
    (e2e-check-contains "the replay model has the hosted default window"
                        (cline-status-string t) "/128k")
    (e2e-chat-window)
    (e2e-type "C-c M-o")
    (e2e-type "C-c C-o")
    (e2e-wait "the plan mode" (lambda () (equal (cline--session-mode cline--session) "plan")))
    (e2e-type "C-c C-n")
    (e2e-wait "the new session" (lambda () (not (equal (cline--session-id cline--session) first))))
    (e2e-check-equal "the new session keeps the mode chosen" (cline--session-mode cline--session) "plan")
    (e2e-send-and-wait "W h i c h SPC m o d e l ? C-c C-c")
    (e2e-check-contains "the new session runs on the model chosen (its window)"
                        (cline-status-string t) "/200k")
    (e2e-check-contains "in plan mode" (cline-status-string) "Cline[plan idle")
    (e2e-shutdown server)))

;;; Sessions people keep: resumed plans, stock edits, the live model

(defvar e2e-offered nil "The candidates the last scripted `completing-read' offered.")

(defun e2e-pick (needle)
  "An answer function for `e2e-script': the candidate holding NEEDLE.
The candidates offered are kept in `e2e-offered'."
  (lambda (collection)
    (setq e2e-offered (mapcar (lambda (c) (if (consp c) (car c) c)) collection))
    (or (cl-find-if (lambda (c) (string-search needle c)) e2e-offered)
        (error "No candidate with %S in %S" needle e2e-offered))))

(defun e2e-restart-plugin (buf transcript)
  "Start a new daemon for BUF whose model plays TRANSCRIPT (FLOW-N.json)."
  (setq cline-initialization-options
        (plist-put (copy-tree e2e-settings) :provider
                   (list :name "replay"
                         :transcript (concat (file-name-sans-extension
                                              (e2e-env "CLINE_TEST_TRANSCRIPT"))
                                             transcript))))
  (with-current-buffer buf
    (cline-start)
    (e2e-wait "eglot to manage the file again"
              (lambda () (with-current-buffer buf
                           (and (bound-and-true-p eglot--managed-mode)
                                (jsonrpc-running-p (eglot-current-server))))))
    (eglot-current-server)))

(defun e2e-flow-planresume ()
  "A plan-mode turn whose prompt mentions a file, resumed by a new
daemon: the session list and the replay show the prompt as typed (the
mention as @hello.txt, not the file's text), and the plan is shown again."
  (setq e2e-script `((completing-read "Resume cline session" ,(e2e-pick "Plan the greeting"))))
  (let* ((buf (e2e-open))
         (server (e2e-start-plugin buf))
         (text "Plan the greeting for @hello.txt")
         id)
    (let ((before (e2e-turns-ended)))
      (with-current-buffer (cline--log-buffer)
        (setq default-directory e2e-workspace)
        ;; What C-c C-c in the chat does, in plan mode.
        (cline--start-turn "plan" text nil (cline--mention-blocks text)))
      (e2e-wait "the plan turn to end" (lambda () (> (e2e-turns-ended) before))))
    (setq id (cline--session-id cline--session))
    (e2e-check-session-log "PLAN: greet the world in hello.txt, one line.")
    (e2e-shutdown server)
    (e2e-wait "the daemon to stop" (lambda () (not (jsonrpc-running-p server))))
    (setq server (e2e-restart-plugin buf "-2.json"))
    (with-current-buffer buf (cline-resume))
    (let ((label (cl-find-if (lambda (c) (string-search id c)) e2e-offered)))
      (e2e-check-contains "the session list shows the prompt as typed" label text)
      (e2e-check "the session list shows none of the file's text"
                 (not (string-match-p "<file\\|hello\n" (or label ""))) label)
      (e2e-check "the session list shows a relative time, not a timestamp"
                 (and label (string-match-p "ago\\|just now" label)
                      (not (string-match-p "[0-9]T[0-9]" label)))
                 label))
    (e2e-wait "the session to load"
              (lambda () (string-search "resumed, mode" (or (e2e-buffer-text "*cline*") ""))))
    (e2e-check-session-log (concat "> " text) "PLAN: greet the world in hello.txt, one line.")
    (e2e-check "the replay shows none of the file's text"
               (not (string-search "<file" (e2e-buffer-text "*cline*")))
               (e2e-buffer-text "*cline*"))
    (e2e-send-and-wait "G o SPC a h e a d C-c C-c")
    (e2e-check-session-log "Going ahead with the plan.")
    (e2e-shutdown server)))

(defun e2e-flow-stockedits ()
  "Stock Eglot (no plugin): one edit of two replacements.  Eglot applies
both and says so; the model is told the edit was applied, and the
buffer holds both replacements."
  (setq e2e-script '((completing-read "cline-ls wants to run editor" "Allow")
                     (y-or-n-p "Server wants to edit" t)))
  (let ((two (expand-file-name "two.txt" e2e-workspace)))
    (with-temp-file two (insert "alpha\nbeta\ngamma\ndelta\n"))
    (add-to-list 'eglot-server-programs
                 `(text-mode . (,e2e-daemon "--log-file" ,e2e-log
                                            :initializationOptions ,e2e-settings)))
    (setq-default eglot-workspace-configuration e2e-settings)
    (let ((buf (find-file-noselect two)) server)
      (e2e-check "Emacs runs its command loop (not batch)" (not noninteractive))
      (with-current-buffer buf
        (call-interactively #'eglot)
        (e2e-wait "eglot to manage two.txt" (lambda () (bound-and-true-p eglot--managed-mode)))
        (setq server (eglot-current-server))
        (e2e-check "server is plain eglot" (not (featurep 'cline)))
        (eglot-execute-command server "cline.prompt"
                               (vector (list :text "Shout the ends of two.txt" :mode "act"))))
      (e2e-wait "the turn to end"
                (lambda () (string-search "turn ended (end_turn)" (or (e2e-buffer-text "*Messages*") ""))))
      (let ((events (cl-loop for b in (buffer-list)
                             when (string-match-p "EGLOT.*events" (buffer-name b))
                             concat (e2e-buffer-text (buffer-name b)))))
        (e2e-check "the edit went as one applyEdit of two replacements"
                   (string-match-p "ALPHA[^\n]*\n?[^\n]*DELTA\\|DELTA[^\n]*\n?[^\n]*ALPHA" events))
        (e2e-check-contains "the model is told the edit was applied" events "Edited two.txt")
        (e2e-check "the model is not told the edit failed"
                   (not (string-match-p "never showed\\|was not applied\\|is unchanged" events)))
        (e2e-check-contains "the model's answer came after it" (e2e-buffer-text "*Messages*") "Both ends shouted."))
      (e2e-check-contains "Eglot said the edit succeeded" (e2e-buffer-text "*Messages*") "Edit successful")
      (with-current-buffer buf
        (e2e-check-equal "the buffer holds both replacements" (buffer-string) "ALPHA\nbeta\ngamma\nDELTA\n")
        (set-buffer-modified-p nil))
      (e2e-shutdown server))))

(defun e2e-flow-livemodel ()
  "The model switched from the chat applies to the session in use: its
next turn runs on the model chosen, in the same session.  (The replay
model, made anew for the new model, plays its transcript from the start:
both turns get its one reply.)"
  (setq e2e-script '((completing-read "Cline model" "claude-sonnet-4-5")))
  (let* ((buf (e2e-open))
         (server (e2e-start-plugin buf))
         first)
    (switch-to-buffer buf)
    (cline-show)
    (e2e-send-and-wait "W h i c h SPC m o d e l ? C-c C-c")
    (setq first (cline--session-id cline--session))
    (e2e-check-contains "the replay model has the hosted default window"
                        (cline-status-string t) "/128k")
    (e2e-chat-window)
    (e2e-type "C-c M-o")
    (e2e-send-and-wait "A n d SPC n o w ? C-c C-c")
    (e2e-check-equal "the same session goes on" (cline--session-id cline--session) first)
    (e2e-check-contains "its next turn runs on the model chosen (its window)"
                        (cline-status-string t) "/200k")
    (e2e-check-contains "the switch says it applies to this session"
                        (e2e-buffer-text "*Messages*") "from the next turn of this session")
    (e2e-shutdown server)))

(defun e2e-flow-killed ()
  "The daemon is killed after a turn; once cline-ls runs again, the next
prompt in the chat offers to resume the session, which goes on with its
history and its honest token totals."
  (setq e2e-script '((y-or-n-p "cline-ls stopped since session .* began; resume it" t)))
  (let* ((buf (e2e-open))
         (server (e2e-start-plugin buf))
         id)
    (switch-to-buffer buf)
    (cline-show)
    (e2e-send-and-wait "R e m e m b e r SPC t h e SPC w o r d SPC b a n a n a C-c C-c")
    (setq id (cline--session-id cline--session))
    (e2e-check-session-log "OK, banana.")
    ;; The next daemon's model has the second part of the transcript,
    ;; whoever starts it (Eglot's reconnection or the user).
    (setq cline-initialization-options
          (plist-put (copy-tree e2e-settings) :provider
                     (list :name "replay"
                           :transcript (concat (file-name-sans-extension
                                                (e2e-env "CLINE_TEST_TRANSCRIPT"))
                                               "-2.json"))))
    (signal-process (jsonrpc--process server) 'kill)
    (e2e-wait "the daemon to die" (lambda () (not (jsonrpc-running-p server))))
    (setq server (e2e-restart-plugin buf "-2.json"))
    (e2e-check-session-log "offers to resume session")
    ;; The resumed session's replay starts `*cline*' afresh: wait for
    ;; the turn's own end.
    (e2e-chat-window)
    (e2e-type "W h a t SPC w a s SPC t h e SPC w o r d ? C-c C-c")
    (e2e-wait "the turn after the resume to end"
              (lambda () (string-match-p "It was banana\\.\n\\[turn ended: " (or (e2e-buffer-text "*cline*") ""))))
    (e2e-check "the user was offered to resume the session"
               (e2e-asked 'y-or-n-p "resume it"))
    (e2e-check-equal "the follow-up went to the same session" (cline--session-id cline--session) id)
    (e2e-check-session-log "It was banana.")
    (e2e-check-contains "the session's totals are the daemon's, both turns counted"
                        (cline-status-string t) "session 107 tok")
    (e2e-shutdown server)))

(defun e2e-jsonrpc-daemon (name)
  "Start another cline-ls NAME on the same state folder, as another
editor's would be, initialized for the workspace; return its connection."
  (let* ((proc (make-process :name name :command (list e2e-daemon "--log-file" (concat e2e-log "." name))
                             :connection-type 'pipe :coding 'utf-8-emacs-unix :noquery t
                             :stderr (get-buffer-create (format "*%s stderr*" name))))
         (conn (make-instance 'jsonrpc-process-connection :name name :process proc)))
    (jsonrpc-request conn :initialize
                     (list :processId (emacs-pid)
                           :rootUri (concat "file://" (directory-file-name e2e-workspace))
                           :capabilities (make-hash-table)
                           :initializationOptions e2e-settings)
                     :timeout 30)
    (jsonrpc-notify conn :initialized (make-hash-table))
    conn))

(defun e2e-flow-held ()
  "A session another daemon holds open: resuming it tells the user and
offers a fork or a read-only view.  The fork goes on here; the other
daemon's session file never sees its turns; the read-only copy refuses
prompts."
  (let* ((other (e2e-jsonrpc-daemon "cline-ls-other"))
         (held (plist-get (jsonrpc-request other :session/new
                                           (list :cwd (directory-file-name e2e-workspace) :mode "act" :mcpServers [])
                                           :timeout 30)
                          :sessionId)))
    (jsonrpc-request other :session/prompt
                     (list :sessionId held :prompt (vector (list :type "text" :text "Remember the word banana")))
                     :timeout 60)
    (setq e2e-script
          `((completing-read "Resume cline session" ,(e2e-pick held))
            (completing-read "is open in another cline-ls" "Fork it: go on here in a copy")))
    (let* ((buf (e2e-open))
           (e2e-settings (plist-put (copy-tree e2e-settings) :provider
                                    (list :name "replay"
                                          :transcript (concat (file-name-sans-extension
                                                               (e2e-env "CLINE_TEST_TRANSCRIPT"))
                                                              "-2.json"))))
           (server (e2e-start-plugin buf))
           fork)
      (switch-to-buffer buf)
      (cline-show)
      (with-current-buffer buf (cline-resume))
      (e2e-check-contains "the list says the session is open elsewhere"
                          (cl-find-if (lambda (c) (string-search held c)) e2e-offered)
                          "open in another cline-ls (pid")
      (e2e-wait "the fork to load"
                (lambda () (and cline--session (not (equal (cline--session-id cline--session) held))
                                (cline--session-mode cline--session))))
      (setq fork (cline--session-id cline--session))
      (e2e-check "the user was told and offered a fork"
                 (e2e-asked 'completing-read "is open in another cline-ls (pid [0-9]+)"))
      (e2e-check-session-log "is open in another cline-ls" "> Remember the word banana" "OK, banana.")
      (e2e-send-and-wait "W h a t SPC w a s SPC t h e SPC w o r d ? C-c C-c")
      (e2e-check-equal "the follow-up went to the fork" (cline--session-id cline--session) fork)
      (e2e-check-session-log "It was banana.")
      (e2e-check "the held session's file has none of the fork's turns"
                 (not (string-search "What was the word?" (e2e-session-file-text held))))
      ;; Again, read-only this time.
      (setq e2e-script
            `((completing-read "Resume cline session" ,(e2e-pick (concat "[" held "]")))
              (completing-read "is open in another cline-ls" "View it read-only")))
      (with-current-buffer buf (cline-resume))
      (e2e-wait "the read-only copy to load"
                (lambda () (string-search "a read-only copy of" (or (e2e-buffer-text "*cline*") ""))))
      (e2e-check "the copy is read-only" (equal (cline--session-read-only cline--session) held))
      (e2e-check "a prompt to the read-only copy is refused"
                 (condition-case err (progn (cline--prompt cline--session "hello") nil)
                   (user-error (string-search "read-only" (error-message-string err)))))
      (jsonrpc-shutdown other)
      (e2e-shutdown server))))

(defun e2e-fully-shown (buf)
  "Non-nil when a window shows BUF's text whole, first line to last."
  (let ((w (get-buffer-window buf)))
    (when w
      (redisplay t)
      (with-current-buffer buf
        (and (= (window-start w) (point-min))
             (pos-visible-in-window-p
              (save-excursion (goto-char (point-max)) (skip-chars-backward "\n") (line-beginning-position))
              w))))))

;; Runs in a terminal Emacs of 80x24, as a user's small terminal.
(defun e2e-flow-hunks ()
  "At 80x24 the approval shows its whole diff beside the file and the
chat; h picks hunks in Ediff before the edit is applied: one hunk taken,
the model told what the file now holds, Ediff's buffers and windows gone.
Then the checkpoints are listed by what the user typed, with a relative
time, and previewed without fences."
  (setq e2e-script '((y-or-n-p "Quit this Ediff session" t)))
  (let* ((ten (expand-file-name "ten.txt" e2e-workspace))
         (lines '("one" "two" "three" "four" "five" "six" "seven" "eight" "nine" "ten" "eleven" "twelve"))
         (text (concat (mapconcat #'identity lines "\n") "\n")))
    (with-temp-file ten (insert text))
    (let* ((buf (find-file-noselect ten))
           (server (e2e-start-plugin buf)))
      (switch-to-buffer buf)
      (delete-other-windows)
      (cline-show)
      (e2e-check "the terminal is 80 columns, 24 lines"
                 (and (= (frame-width) 80) (<= (frame-height) 24)) (format "%sx%s" (frame-width) (frame-height)))
      (e2e-chat-window)
      (e2e-type "S h o u t SPC t h e SPC e n d s SPC o f SPC t e n . t x t C-c C-c")
      (e2e-wait "the approval view" #'e2e-approval-waiting)
      (e2e-check "the approval shows every line of its diff"
                 (e2e-fully-shown "*cline-approval*")
                 (format "%S %s" (mapcar (lambda (w) (cons (buffer-name (window-buffer w)) (window-total-height w)))
                                         (window-list nil 'no-minibuf))
                         (e2e-buffer-text "*cline-approval*")))
      (e2e-check-contains "the approval's diff has both ends" (e2e-buffer-text "*cline-approval*") "+TWELVE")
      (e2e-check "the chat keeps its window and the cursor"
                 (and (get-buffer-window "*cline*")
                      (eq (window-buffer (selected-window)) (get-buffer "*cline*"))))
      (cline-approve)
      (e2e-type "h")
      (e2e-wait "Ediff" (lambda () (get-buffer "*Ediff Control Panel*")))
      (e2e-check "Ediff compares the proposal with the buffer as it is"
                 (with-current-buffer "*Ediff Control Panel*"
                   (and (equal (with-current-buffer ediff-buffer-A (buffer-string))
                               (replace-regexp-in-string "twelve" "TWELVE" (replace-regexp-in-string "\\`one" "ONE" text)))
                        (eq ediff-buffer-B buf))))
      (e2e-check-equal "nothing is applied before the choice" (with-current-buffer buf (buffer-string)) text)
      ;; In the control panel: to the first hunk, take it, quit.
      (e2e-type "n a q")
      (e2e-wait "the turn to end"
                (lambda () (string-search "Only the first end, then." (or (e2e-buffer-text "*cline*") ""))))
      (with-current-buffer buf
        (e2e-check-equal "the buffer has the hunk taken, not the other" (buffer-string)
                         (replace-regexp-in-string "\\`one" "ONE" text)))
      (e2e-check "the approval is answered" (not (e2e-approval-waiting)))
      (e2e-check "no Ediff or proposal buffer is left"
                 (not (cl-find-if (lambda (b) (string-match-p "\\*cline proposal\\|\\*Ediff Control" (buffer-name b)))
                                  (buffer-list))))
      (e2e-check-equal "the windows are the file's and the chat's again"
                       (sort (e2e-windows) #'string<) '("*cline*" "ten.txt"))
      (e2e-check-equal "disk untouched" (with-temp-buffer (insert-file-contents ten) (buffer-string)) text)
      (e2e-wait "the turn to end" (lambda () (not (cline--session-busy cline--session))))
      ;; A turn that changes the file makes a checkpoint.
      (e2e-send-and-wait "N o w SPC s h o u t SPC t h e SPC m i d d l e SPC o f SPC @ t e n . t x t C-c C-c" "a")
      (e2e-check-session-log "Middle shouted.")
      (with-current-buffer "*cline*"
        (goto-char (point-max))
        (search-backward "diff ten.txt")
        (push-button))
      (let ((shown (e2e-buffer-text "*cline-diff*")))
        (e2e-check-contains "the edit's diff shows again from its link" shown "SIX")
        (e2e-check "the edit's diff has no Markdown fences" (not (string-search "```" shown)) shown))
      (cline-checkpoints)
      (let ((list (e2e-buffer-text "*cline-checkpoints*")))
        (e2e-check-contains "a checkpoint is named by what the user typed" list "Before: Now shout the middle of @ten.txt")
        (e2e-check "a checkpoint's name has none of the mentioned file's text"
                   (not (string-match-p "<file\\|twelve" list)) list)
        (e2e-check "checkpoints show a relative time, not a timestamp"
                   (and (string-match-p "just now\\|ago" list) (not (string-match-p "[0-9]T[0-9]" list)))
                   list))
      (with-current-buffer "*cline-checkpoints*"
        (goto-char (point-min))
        (search-forward "Before: Now shout")
        (cline-checkpoint-preview))
      (let ((preview (e2e-buffer-text "*cline-checkpoint-diff*")))
        (e2e-check-contains "the preview shows the change back" preview "SIX")
        (e2e-check "the preview has no Markdown fences" (not (string-search "```" preview)) preview))
      (with-current-buffer buf (set-buffer-modified-p nil))
      (e2e-shutdown server))))

(defun e2e-flow-hunkparse ()
  "The reading of an approval's diff into hunks and their application to
the buffer's text, on the shapes a diff takes: a removed line that itself
starts with \"--\", counts left out, the no-newline marker, a new first
line, a buffer changed since, several files."
  (load (expand-file-name "../cline.el" e2e-here) nil t)
  (let* ((text "a\n-- x\n--- y\nb\nc\nd\ne\nf\ng\nh\n")
         (diff (concat "--- a/f.txt\n+++ b/f.txt\n"
                       "@@ -1,4 +1,4 @@\n a\n--- x\n---- y\n+-- X\n+--- Y\n b\n"
                       "@@ -10 +10 @@\n-h\n+H\n"))
         (hunks (cline--parse-unified diff)))
    (e2e-check-equal "two hunks, read by their counts" (length hunks) 2)
    (e2e-check-equal "a removed line starting with -- is a line of the hunk"
                     (cdr (car hunks)) '(" a" "--- x" "---- y" "+-- X" "+--- Y" " b"))
    (e2e-check-equal "both hunks apply" (cline--apply-hunks text hunks)
                     "a\n-- X\n--- Y\nb\nc\nd\ne\nf\ng\nH\n")
    (e2e-check-equal "one hunk applies alone" (cline--apply-hunks text (last hunks))
                     "a\n-- x\n--- y\nb\nc\nd\ne\nf\ng\nH\n")
    (e2e-check "a buffer changed since is refused"
               (null (cline--apply-hunks (replace-regexp-in-string "^h" "z" text) hunks)))
    (e2e-check-equal "the no-newline marker is no line"
                     (cline--apply-hunks "one\ntwo"
                                         (cline--parse-unified
                                          "--- a/g\n+++ b/g\n@@ -1,2 +1,2 @@\n one\n-two\n\\ No newline at end of file\n+TWO\n\\ No newline at end of file\n"))
                     "one\nTWO")
    (e2e-check-equal "a line added before the first"
                     (cline--apply-hunks "x\n" (cline--parse-unified "--- a/g\n+++ b/g\n@@ -0,0 +1 @@\n+first\n"))
                     "first\nx\n")
    (e2e-check "a diff of two files is not taken hunk by hunk"
               (null (cline--parse-unified (concat diff "--- a/h\n+++ b/h\n@@ -1 +1 @@\n-a\n+b\n"))))
    (e2e-check "a hunk cut short is not read"
               (null (cline--parse-unified "--- a/g\n+++ b/g\n@@ -1,3 +1,3 @@\n a\n-b\n")))
    (e2e-check-equal "fences are no lines of a diff"
                     (cline--unfenced "Edited a\n```diff\n-1: a\n+1: b\n```") "Edited a\n-1: a\n+1: b\n")))

;;; Main

;; Characters a terminal would act on, or Emacs draw misleadingly.
(defconst e2e-hidden-re
  "[\x00-\x08\x0b-\x1f\x7f\u0080-\u009f\u200b\u202a-\u202e\u2066-\u2069]")

(defun e2e-check-clean (what text)
  "Check that TEXT holds no character of `e2e-hidden-re'."
  (let ((case-fold-search nil))
    (e2e-check (format "%s holds no raw control, C1, bidi or zero-width character" what)
               (and text (not (string-match-p e2e-hidden-re text)))
               (format "%S" text))))

(defun e2e-flow-hostile ()
  "What the model, commands and files send shows visibly: escape
sequences, carriage returns, C1, bidi and zero-width characters as
\\x1b, \\r, \\u202e in `*cline*', the approval view, the minibuffer's
prompts and messages; the command approved is shown exactly; the
answer to a question is the option as sent."
  (setq e2e-script
        '((completing-read "cline asks: " (lambda (choices) (car choices)))))
  (let* ((messages nil)
         (record (lambda (fmt &rest args)
                   (when fmt (push (apply #'format-message fmt args) messages))))
         (buf (e2e-open))
         (server (e2e-start-plugin buf))
         first)
    (advice-add 'message :before record)
    (unwind-protect
        (let ((before (e2e-turns-ended)))
          (with-current-buffer buf (cline-task "be hostile"))
          (setq first (e2e-approve "a"))
          (e2e-approve "a")
          (e2e-wait "the turn to end" (lambda () (> (e2e-turns-ended) before)) 60))
      (advice-remove 'message record))
    (let ((view (car first))
          (log (e2e-buffer-text "*cline*"))
          (asked (e2e-asked 'completing-read "cline asks: ")))
      (e2e-check-clean "the approval view" view)
      (e2e-check-contains "the approval shows the command exactly" view
                          "$ touch pwned-spoof\\r\\x1b[2K\\x1b[1Als\n")
      (e2e-check-contains "and says it held some" view "the command holds characters that do not show")
      (e2e-check-clean "*cline*" log)
      (e2e-check-session-log
       "think \\x1b]52;c;cm0gLXJmIH4=\\x07 done"
       "hello \\x1b[2J\\r \\u009b31m \\u202eevil zw\\u200bsp"
       "[ ] step \\x1b[1A\\nfake 100% %s"
       "Run touch pwned-spoof\\r\\x1b[2K\\x1b[1Als"
       "Run touch y; printf '\\033]52;c;aGk=\\007out"
       "-> a\\rb"
       "[turn ended: end_turn]")
      (e2e-check-contains "streamed text keeps its line breaks" log "zw\\u200bsp\nnext line")
      (e2e-check "the question was asked" asked)
      (e2e-check-clean "the question's prompt" (nth 1 asked))
      (e2e-check-contains "its prompt shows the controls" (nth 1 asked) "one \\x1b[2K\\u202eplease 50% ")
      (e2e-check-equal "its choices are shown visibly" (nth 2 asked) "a\\rb")
      (e2e-check-clean "the messages" (mapconcat #'identity messages " | "))
      (e2e-check-contains "the approval message shows the controls"
                          (mapconcat #'identity messages " | ") "approval needed: Run touch pwned-spoof\\r\\x1b"))
    (e2e-shutdown server)))

(defun e2e-broken-backend (report-fn &rest _)
  "The test's Flymake backend: an error on each line holding BROKEN,
as a compiler would report an undefined name."
  (let (diags)
    (save-excursion
      (goto-char (point-min))
      (while (search-forward "BROKEN" nil t)
        (push (flymake-make-diagnostic (current-buffer) (match-beginning 0) (match-end 0)
                                       :error "undefined: BROKEN")
              diags)))
    (funcall report-fn diags)))

(defun e2e-wait-idle (what pred &optional seconds)
  "Like `e2e-wait', but wait in a command loop of its own (a recursive
edit), so that Emacs goes idle as it does for a user and idle timers
(Flymake's checks after a change) run: in Emacs 30 they do not while a
timer's function waits in `sit-for'.  Fail with WHAT."
  (let* ((deadline (+ (float-time) (or seconds 60)))
         (poll (run-with-timer 0.05 0.05
                               (lambda ()
                                 (when (or (funcall pred) (>= (float-time) deadline))
                                   (exit-recursive-edit))))))
    (unwind-protect
        (unless (funcall pred) (recursive-edit))
      (cancel-timer poll))
    (unless (funcall pred)
      (error "Timed out waiting for %s" what))))

(defun e2e-flow-diagnostics ()
  "An edit that breaks hello.txt comes back to the model with the new
error from Flymake, and the edit that fixes it says so: the transcript
expects both in the tool results, or the turn fails."
  (setq e2e-script nil
        e2e-settings (plist-put (copy-sequence e2e-settings) :approvals (list :edit "allow")))
  (let* ((buf (e2e-open))
         (server (e2e-start-plugin buf))
         (before (e2e-turns-ended)))
    (e2e-check "Emacs runs its command loop (not batch)" (not noninteractive))
    (switch-to-buffer buf)
    (delete-other-windows)
    (with-current-buffer buf
      ;; After Eglot took the buffer: Eglot 1.12 on keeps only its own
      ;; backend when it starts managing one.  Last, so that Eglot's
      ;; backend reports first in each check, while this one's
      ;; diagnostics are still those of the text before the edit.
      (add-hook 'flymake-diagnostic-functions #'e2e-broken-backend t t)
      (e2e-check "flymake is on" (bound-and-true-p flymake-mode))
      (cline-task "break it, then fix it"))
    (e2e-wait-idle "the turn to end" (lambda () (> (e2e-turns-ended) before)) 60)
    (e2e-check-session-log "Breaking." "Fixing." "Done." "[turn ended: end_turn]")
    (with-current-buffer buf
      (e2e-check-equal "buffer holds both edits" (buffer-string) "hello, world\n"))
    (e2e-shutdown server)))

(load (expand-file-name "hooks.el" e2e-here) nil t)
(load (expand-file-name "mcp.el" e2e-here) nil t)

(defun e2e-dump (name)
  "Print buffer NAME to stderr, for a failure's report."
  (when-let ((text (e2e-buffer-text name)))
    (message "----- %s -----\n%s" name text)))

(defun e2e-main ()
  "Run the flow named by CLINE_TEST_FLOW, write the results, exit."
  (let ((code 0))
  (condition-case err
      (pcase e2e-flow
        ("approve" (e2e-flow-approve))
        ("reject" (e2e-flow-reject))
        ("plan" (e2e-flow-plan))
        ("cancel" (e2e-flow-cancel))
        ("stock" (e2e-flow-stock))
        ("typeahead" (e2e-flow-typeahead))
        ("chat" (e2e-flow-chat))
        ("resume" (e2e-flow-resume))
        ("codeaction" (e2e-flow-codeaction))
        ("nokey" (e2e-flow-nokey))
        ("review" (e2e-flow-review))
        ("model" (e2e-flow-model))
        ("hostile" (e2e-flow-hostile))
        ("diagnostics" (e2e-flow-diagnostics))
        ("mcp" (e2e-flow-mcp))
        ("hooks" (e2e-flow-hooks))
        ("hooks-trust" (e2e-flow-hooks-trust))
        ("hooks-distrust" (e2e-flow-hooks-distrust))
        ("planresume" (e2e-flow-planresume))
        ("stockedits" (e2e-flow-stockedits))
        ("livemodel" (e2e-flow-livemodel))
        ("killed" (e2e-flow-killed))
        ("held" (e2e-flow-held))
        ("hunks" (e2e-flow-hunks))
        ("hunkparse" (e2e-flow-hunkparse))
        ("lsp" (load (expand-file-name "e2e-lsp.el" e2e-here) nil t) (e2e-flow-lsp))
        (_ (error "Unknown flow %S" e2e-flow)))
    (error (e2e-check "flow ran to the end" nil (error-message-string err))))
  (when (or e2e-failed (not (string-empty-p (or (getenv "CLINE_TEST_VERBOSE") ""))))
    (setq code (if e2e-failed 1 0))
    (e2e-dump "*cline*")
    (dolist (b (buffer-list))
      (when (string-match-p "EGLOT.*events\\|cline-ls.*events" (buffer-name b))
        (e2e-dump (buffer-name b)))))
  (with-temp-file (e2e-env "CLINE_TEST_RESULT")
    (insert (mapconcat #'identity (reverse e2e-results) "\n") "\n"))
  (kill-emacs code)))

(if noninteractive
    (e2e-main)
  ;; A terminal Emacs: run once the command loop has started.
  (run-with-timer 0.1 nil #'e2e-main))

;;; e2e.el ends here
