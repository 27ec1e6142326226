;;; cline.el --- Cline coding agent through cline-ls and Eglot  -*- lexical-binding: t; -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1") (eglot "1.9") (jsonrpc "1.0.14"))
;; Keywords: tools, convenience, languages

;; This file is not part of GNU Emacs.

;;; Commentary:

;; cline-ls is a language server that runs the Cline coding agent.  This
;; package starts it through Eglot (the `cline-eglot-server' class), so
;; the agent sees and edits your open, unsaved buffers, and adds what
;; plain Eglot lacks:
;;
;; - `cline-task' and `cline-plan' start a turn in act or plan mode,
;;   `cline-set-mode' switches modes and `cline-cancel' stops a turn;
;; - the `*cline*' buffer streams the session: agent text as it
;;   arrives, tool calls with their status, the plan, mode changes;
;; - approvals (`cline/approvalRequest') show the proposed diff and ask
;;   Allow / Always allow / Reject / Always reject;
;; - every applied edit (`cline/diff') is shown in `*cline-diff*';
;; - the agent's questions (`cline/askQuestion') are asked with
;;   `completing-read'.
;;
;; Start with M-x cline-start in a file of your project.  The wire
;; protocol is docs/PROTOCOL.md in the cline-ls repository.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'seq)
(require 'button)
(require 'url-util)
(require 'json)
(require 'jsonrpc)
(require 'eglot)

;; Eglot's names for the "confirm server edits" option: the first is
;; Eglot < 1.16's, the second the current one.  Declared so that `let'
;; binds them dynamically whichever Eglot is loaded.
(defvar eglot-confirm-server-initiated-edits)
(defvar eglot-confirm-server-edits)

(declare-function diff-mode "diff-mode")
(declare-function eglot--languages "eglot")

(cl-defstruct (cline--session (:constructor cline--session-make) (:copier nil))
  "An agent session: its SERVER, ID, current MODE, the MODES it offers,
whether a turn is running (BUSY) and the last USAGE report."
  server id mode modes busy usage)

(defvar cline--session nil
  "The session that `cline-task' and the other commands act on.")

(defvar cline--approval-queue nil
  "Approval requests waiting to be asked, oldest first.")

(defvar cline--asking nil
  "Non-nil while an approval is being asked.")

(defvar cline--cancelled (make-hash-table :test #'equal)
  "Map from session id to the time of its last `cline-cancel'.
The daemon drops a cancelled turn's pending approvals itself, so an
answer to one asked before the cancel is not sent.")


;;; Options

(defgroup cline nil
  "The Cline coding agent through cline-ls."
  :group 'tools
  :prefix "cline-")

(defcustom cline-program '("cline-ls")
  "Command that starts the daemon: the program and its arguments.
For example (\"cline-ls\" \"--log-file\" \"/tmp/cline-ls.log\")."
  :type '(repeat string))

(defcustom cline-initialization-options nil
  "The `initializationOptions' sent to cline-ls, as a plist.
For example:

  (:provider (:name \"anthropic\" :model \"claude-sonnet-4-5\"
              :apiKeyEnv \"ANTHROPIC_API_KEY\")
   :approvals (:edit \"ask\" :execute \"ask\"))

nil sends none: the daemon then reads its environment variables and
$XDG_CONFIG_HOME/cline-ls/config.json.  It may also be a function of
the server object that returns the plist."
  :type '(choice (const :tag "None" nil) sexp function))

(defcustom cline-major-modes
  '(text-mode markdown-mode gfm-mode org-mode emacs-lisp-mode
    c-mode c++-mode c-ts-mode c++-ts-mode go-mode go-ts-mode
    python-mode python-ts-mode js-mode js-ts-mode typescript-ts-mode
    tsx-ts-mode rust-mode rust-ts-mode java-mode java-ts-mode ruby-mode
    sh-mode bash-ts-mode json-mode json-ts-mode yaml-mode yaml-ts-mode
    css-mode html-mode mhtml-mode conf-mode makefile-gmake-mode)
  "Major modes whose buffers cline-ls follows.
The agent reads and edits these buffers rather than the files on
disk.  Eglot gives a buffer to one server only: modes that another
Eglot server already manages in the project are left to it, and the
current buffer's mode is always added."
  :type '(repeat symbol))

(defcustom cline-approval-style 'buffer
  "How approvals are asked.
`buffer' shows the diff or command in `*cline-approval*' without
selecting it, so nothing typed meanwhile can answer it; switch to
it (\\[cline-approve] or any window command) and press a (allow),
A (always allow), r (reject), R (reject with feedback) or q (later:
\[cline-approve] brings it back).  `completing-read' offers the four
answers in the minibuffer, with no default; `y-or-n-p' asks yes
\(allow once) or no (reject once).  Both minibuffer styles take the
keyboard when they ask: keys typed ahead can answer them."
  :type '(choice (const buffer) (const completing-read) (const y-or-n-p)))

(defcustom cline-ask-feedback t
  "When non-nil, a rejection asks for feedback to send to the agent."
  :type 'boolean)

(defcustom cline-display-diffs t
  "When non-nil, show `*cline-diff*' after each edit the agent applies."
  :type 'boolean)

(defcustom cline-display-session t
  "When non-nil, `cline-task' and `cline-plan' display `*cline*'."
  :type 'boolean)

(defface cline-user-face '((t :inherit font-lock-keyword-face :weight bold))
  "Face of the user's prompts in `*cline*'.")

(defface cline-thought-face '((t :inherit shadow :slant italic))
  "Face of the agent's thinking in `*cline*'.")

(defface cline-tool-face '((t :inherit font-lock-function-name-face))
  "Face of tool call titles in `*cline*'.")

(defface cline-meta-face '((t :inherit shadow))
  "Face of mode changes, turn ends and other notes in `*cline*'.")

(defface cline-pending-face '((t :inherit warning))
  "Face of a tool call that has not finished.")

(defface cline-completed-face '((t :inherit success))
  "Face of a tool call that completed.")

(defface cline-failed-face '((t :inherit error))
  "Face of a tool call that failed, and of errors.")


;;; The Eglot server class

(defclass cline-eglot-server (eglot-lsp-server) ()
  :documentation "A cline-ls connection: Eglot plus the cline/ methods.")

(cl-defmethod eglot-client-capabilities ((_server cline-eglot-server))
  "Eglot's capabilities plus experimental.cline (approvals, diffs, questions)."
  (let ((caps (copy-sequence (cl-call-next-method))))
    (plist-put caps :experimental
               (list :cline (list :approvals t :diffs t :questions t)))))

(defun cline--settings (server)
  "The value of `cline-initialization-options' for SERVER."
  (if (functionp cline-initialization-options)
      (funcall cline-initialization-options server)
    cline-initialization-options))

(cl-defmethod eglot-initialization-options ((server cline-eglot-server))
  "`cline-initialization-options', or Eglot's default when it is nil."
  (or (cline--settings server) (cl-call-next-method)))

(defun cline--resend-settings (server)
  "Send SERVER its settings again, as workspace/didChangeConfiguration.
On connecting, Eglot sends `eglot-workspace-configuration' (usually
empty), and cline-ls takes those settings in place of the
initializationOptions; sending them again keeps
`cline-initialization-options' in force."
  (when (cl-typep server 'cline-eglot-server)
    (when-let ((opts (cline--settings server)))
      (jsonrpc-notify server :workspace/didChangeConfiguration
                      (list :settings opts)))))

(add-hook 'eglot-connect-hook #'cline--resend-settings t)

(cl-defmethod eglot-handle-request
  ((server cline-eglot-server) (_method (eql 'workspace/applyEdit)) &rest _)
  "Apply the agent's edit without a second confirmation.
The user approved it already through `cline/approvalRequest' (or the
daemon's rules allowed it).  The change is reported at once rather
than after Eglot's idle delay, since the daemon waits for it."
  (with-suppressed-warnings ((obsolete eglot-confirm-server-initiated-edits))
    (let ((eglot-confirm-server-initiated-edits nil)
          (eglot-confirm-server-edits nil))
      (prog1 (cl-call-next-method)
        (cline--flush-changes server)))))

(defun cline--flush-changes (server)
  "Send the pending didChange of SERVER's buffers now."
  (when (fboundp 'eglot--signal-textDocument/didChange)
    (dolist (buf (buffer-list))
      (with-current-buffer buf
        (when (and (bound-and-true-p eglot--managed-mode)
                   (eq (eglot-current-server) server))
          (ignore-errors (eglot--signal-textDocument/didChange)))))))

(defun cline--short-buffer-names (server)
  "Name SERVER's log buffers after the project, not the long list of modes."
  (when (cl-typep server 'cline-eglot-server)
    (let ((nick (eglot--project-nickname server)))
      (dolist (pair `((,(ignore-errors (jsonrpc-events-buffer server)) . "events")
                      (,(ignore-errors (jsonrpc-stderr-buffer server)) . "stderr")))
        (when (buffer-live-p (car pair))
          (with-current-buffer (car pair)
            (rename-buffer (format "*cline-ls (%s) %s*" nick (cdr pair)) t)))))))

(add-hook 'eglot-server-initialized-hook #'cline--short-buffer-names)

(defun cline-eglot-contact (&rest _)
  "The `eglot-server-programs' contact of cline-ls."
  (cons 'cline-eglot-server cline-program))

;;;###autoload
(defun cline-register-eglot-server-program (&optional modes)
  "Make \\[eglot] start cline-ls in buffers of MODES.
MODES defaults to `cline-major-modes'.  This takes those modes from
any other server in `eglot-server-programs'; `cline-start' does not."
  (setq eglot-server-programs
        (cons (cons (or modes cline-major-modes) #'cline-eglot-contact)
              eglot-server-programs)))

(defun cline--project-servers (project)
  "Live Eglot servers of PROJECT."
  (cl-remove-if-not #'jsonrpc-running-p
                    (gethash project eglot--servers-by-project)))

(defun cline--server-modes (server)
  "Major modes that SERVER manages."
  (with-no-warnings
    (if (fboundp 'eglot--major-modes)
        (eglot--major-modes server)
      (mapcar #'car (eglot--languages server)))))

(defun cline--all-servers ()
  "Every live cline-ls server."
  (let (out)
    (maphash (lambda (_project servers)
               (dolist (s servers)
                 (when (and (cl-typep s 'cline-eglot-server)
                            (jsonrpc-running-p s))
                   (push s out))))
             eglot--servers-by-project)
    out))

;;;###autoload
(defun cline-start ()
  "Start cline-ls for the current buffer's project.
Buffers of `cline-major-modes' in the project are then shared with the
agent.  Returns the server, or nil when it is still starting."
  (interactive)
  (unless buffer-file-name
    (user-error "cline-start: visit a file of your project first"))
  (let* ((project (eglot--current-project))
         (servers (cline--project-servers project))
         (existing (cl-find-if (lambda (s) (cl-typep s 'cline-eglot-server))
                               servers))
         (claimed (cl-loop for s in servers
                           unless (cl-typep s 'cline-eglot-server)
                           append (cline--server-modes s)))
         (own-mode (not (memq major-mode claimed)))
         (modes (cl-remove-if (lambda (m) (memq m claimed))
                              (delete-dups (cons major-mode
                                                 (copy-sequence cline-major-modes))))))
    (cond
     (existing
      (when (called-interactively-p 'interactive)
        (message "cline-ls is already running for this project"))
      existing)
     (t
      (unless own-mode
        (message "cline: %s buffers stay with their own server; the agent sees them on disk"
                 major-mode))
      (let* ((eglot-server-programs (list (cons modes #'cline-eglot-contact)))
             (current-prefix-arg nil)
             (guess (let ((major-mode (if own-mode major-mode (car modes))))
                      (eglot--guess-contact))))
        (apply #'eglot--connect guess)
        (cl-find-if (lambda (s) (cl-typep s 'cline-eglot-server))
                    (cline--project-servers project)))))))

(defun cline--server (&optional start)
  "The cline-ls server for the current buffer.
It is the buffer's own Eglot server when that is cline-ls.  Else, with
START in a file buffer, the project's (started when there is none);
else the current session's, else any."
  (or (let ((s (ignore-errors (eglot-current-server))))
        (and (cl-typep s 'cline-eglot-server) (jsonrpc-running-p s) s))
      (and start buffer-file-name
           (or (cline-start)
               (user-error "cline-ls is starting; try again in a moment")))
      (let ((s (and cline--session (cline--session-server cline--session))))
        (and s (jsonrpc-running-p s) s))
      (car (cline--all-servers))
      (user-error "No cline-ls is running: M-x cline-start in a file of your project")))


;;; Sessions

(defvar cline-modes-default '("plan" "act" "search" "minimal" "yolo")
  "Mode ids offered before a session reports its own.")

(defun cline--root (server)
  "SERVER's project root, as an absolute directory name without slash."
  (directory-file-name (expand-file-name (project-root (eglot--project server)))))

(defun cline--live-session-p (s)
  "Non-nil when session S's server is still running."
  (and s (jsonrpc-running-p (cline--session-server s))))

(defun cline--new-session (server mode then)
  "Open a session on SERVER in MODE, make it current and call THEN with it."
  (jsonrpc-async-request
   server :session/new
   (list :cwd (cline--root server) :mode mode :mcpServers [])
   :success-fn
   (lambda (res)
     (let* ((modes (plist-get res :modes))
            (s (cline--session-make
                :server server :id (plist-get res :sessionId)
                :mode (or (plist-get modes :currentModeId) mode)
                :modes (mapcar (lambda (m) (plist-get m :id))
                               (plist-get modes :availableModes)))))
       (setq cline--session s)
       (cline--log-session-start s)
       (funcall then s)))
   :error-fn (lambda (err) (cline--log-error "session/new" err))
   :timeout 60))

(defun cline--with-session (mode new then)
  "Call THEN with the current session, set to MODE.
A session is opened when there is none, when NEW is non-nil or when
the current one belongs to another server."
  (let ((server (cline--server t))
        (s cline--session))
    (cond
     ((null server) (user-error "cline-ls is still starting; try again in a moment"))
     ((or new (not (cline--live-session-p s))
          (not (eq (cline--session-server s) server)))
      (cline--new-session server mode then))
     ((or (null mode) (equal (cline--session-mode s) mode))
      (funcall then s))
     (t
      (cline--request-mode s mode (lambda () (funcall then s)))))))

(defun cline--request-mode (s mode &optional then)
  "Ask for MODE in session S, then call THEN."
  (jsonrpc-async-request
   (cline--session-server s) :session/set_mode
   (list :sessionId (cline--session-id s) :modeId mode)
   :success-fn (lambda (_)
                 (setf (cline--session-mode s) mode)
                 (cline--header-refresh)
                 (when then (funcall then)))
   :error-fn (lambda (err) (cline--log-error "session/set_mode" err))
   :timeout 30))

(defun cline--prompt (s text)
  "Send TEXT to session S; the answer streams into `*cline*'.
The request returns when the turn ends, so it is asynchronous and has
no time limit."
  (setf (cline--session-busy s) t)
  (cline--log-user text)
  (cline--header-refresh)
  (jsonrpc-async-request
   (cline--session-server s) :session/prompt
   (list :sessionId (cline--session-id s)
         :prompt (vector (list :type "text" :text text)))
   :success-fn (lambda (res)
                 (setf (cline--session-busy s) nil)
                 (cline--log-stop (plist-get res :stopReason))
                 (cline--header-refresh))
   :error-fn (lambda (err)
               (setf (cline--session-busy s) nil)
               (cline--log-error "session/prompt" err)
               (cline--header-refresh))
   :timeout nil))

(defun cline--start-turn (mode text new)
  "Run TEXT as a turn in MODE; NEW opens a new session."
  (when (and (not new) (cline--live-session-p cline--session)
             (cline--session-busy cline--session))
    (user-error "A cline turn is running: wait for it or M-x cline-cancel"))
  (when (string-empty-p (string-trim text))
    (user-error "Nothing to send"))
  (when cline-display-session
    (display-buffer (cline--log-buffer)))
  (cline--with-session mode new (lambda (s) (cline--prompt s text))))

;;;###autoload
(defun cline-task (text &optional new)
  "Give the agent TEXT as a task in act mode.
With a prefix argument NEW, start a new session first.  The agent's
answer streams into `*cline*'; edits ask for approval."
  (interactive (list (read-string "Cline task: ") current-prefix-arg))
  (cline--start-turn "act" text new))

;;;###autoload
(defun cline-plan (text &optional new)
  "Ask the agent to plan TEXT (plan mode: it reads but does not edit).
With a prefix argument NEW, start a new session first."
  (interactive (list (read-string "Cline plan: ") current-prefix-arg))
  (cline--start-turn "plan" text new))

;;;###autoload
(defun cline-set-mode (mode)
  "Switch the current session to MODE (plan, act, search, minimal, yolo)."
  (interactive
   (list (completing-read "Cline mode: "
                          (or (and cline--session (cline--session-modes cline--session))
                              cline-modes-default)
                          nil t)))
  (if (cline--live-session-p cline--session)
      (cline--request-mode cline--session mode
                           (lambda () (message "cline: %s mode" mode)))
    (cline--new-session (cline--server t) mode
                        (lambda (_) (message "cline: new session in %s mode" mode)))))

;;;###autoload
(defun cline-cancel ()
  "Stop the current turn; pending approvals of it are dropped."
  (interactive)
  (let ((s cline--session))
    (unless (cline--live-session-p s)
      (user-error "No cline session"))
    (jsonrpc-notify (cline--session-server s) :session/cancel
                    (list :sessionId (cline--session-id s)))
    (puthash (cline--session-id s) (float-time) cline--cancelled)
    (setq cline--approval-queue
          (cl-remove-if (lambda (a) (equal (plist-get a :sessionId)
                                           (cline--session-id s)))
                        cline--approval-queue))
    (cline--log-meta "[cancel requested]")
    (cline--drop-approval (cline--session-id s))))

;;;###autoload
(defun cline-show ()
  "Display the `*cline*' session buffer."
  (interactive)
  (pop-to-buffer (cline--log-buffer)))

(defvar cline-command-map
  (let ((map (make-sparse-keymap)))
    (define-key map "t" #'cline-task)
    (define-key map "p" #'cline-plan)
    (define-key map "m" #'cline-set-mode)
    (define-key map "c" #'cline-cancel)
    (define-key map "s" #'cline-start)
    (define-key map "b" #'cline-show)
    map)
  "Keymap of the cline commands, to bind to a prefix key.")
(fset 'cline-command-map cline-command-map)


;;; The *cline* buffer

(defvar-local cline--last-block nil
  "Kind of the last thing written to `*cline*', to know where text joins.")

(defvar-local cline--tool-lines nil
  "Map from \"SESSION/TOOLCALL\" to the markers of that call's line.")

(define-derived-mode cline-session-mode special-mode "Cline"
  "Major mode of `*cline*', where the agent's session streams."
  (setq-local cline--tool-lines (make-hash-table :test #'equal))
  (setq-local truncate-lines nil)
  (setq-local word-wrap t)
  (setq header-line-format '(:eval (cline--header-line))))

(defun cline--log-buffer ()
  "The `*cline*' buffer."
  (or (get-buffer "*cline*")
      (with-current-buffer (get-buffer-create "*cline*")
        (cline-session-mode)
        (current-buffer))))

(defun cline--header-line ()
  "Header line of `*cline*'."
  (let ((s cline--session))
    (if (not s)
        " cline: no session (M-x cline-task)"
      (let ((u (cline--session-usage s)))
        (concat " cline " (cline--session-id s)
                "  mode: " (or (cline--session-mode s) "?")
                (if (cline--session-busy s) "  [running]" "")
                (if u (format "  tokens: %s in / %s out"
                              (plist-get u :inputTokens) (plist-get u :outputTokens))
                  ""))))))

(defun cline--header-refresh ()
  "Redisplay the header line of `*cline*'."
  (when-let ((b (get-buffer "*cline*")))
    (with-current-buffer b (force-mode-line-update))))

(defmacro cline--appending (&rest body)
  "Run BODY at the end of `*cline*', keeping windows that were at the end there."
  (declare (indent 0) (debug t))
  `(with-current-buffer (cline--log-buffer)
     (let* ((inhibit-read-only t)
            (at-end (= (point) (point-max)))
            (wins (cl-remove-if-not
                   (lambda (w) (= (window-point w) (point-max)))
                   (get-buffer-window-list (current-buffer) nil t))))
       (save-excursion
         (goto-char (point-max))
         ,@body)
       (when at-end (goto-char (point-max)))
       (dolist (w wins) (set-window-point w (point-max))))))

(defun cline--block (kind)
  "Start a block of KIND at point (the end of `*cline*').
Text of the same kind as the last block joins it; other kinds start
on a fresh line."
  (unless (eq kind cline--last-block)
    (unless (bolp) (insert "\n"))
    (when (and (memq kind '(agent thought user)) (> (point) (point-min)))
      (insert "\n")))
  (setq cline--last-block kind))

(defun cline--log-line (kind text &optional face)
  "Write TEXT as a line of KIND in FACE."
  (cline--appending
    (cline--block kind)
    (insert (if face (propertize text 'face face) text) "\n")
    (setq cline--last-block kind)))

(defun cline--log-meta (text)
  "Write TEXT as a note."
  (cline--log-line 'meta text 'cline-meta-face))

(defun cline--log-session-start (s)
  "Note the start of session S; `*cline*' then works in its folder."
  (with-current-buffer (cline--log-buffer)
    (setq default-directory (file-name-as-directory (cline--root (cline--session-server s)))))
  (cline--log-meta (format "[session %s in %s, mode %s]"
                           (cline--session-id s)
                           (cline--root (cline--session-server s))
                           (cline--session-mode s))))

(defun cline--log-user (text)
  "Write the user's prompt TEXT."
  (cline--appending
    (cline--block 'user)
    (insert (propertize (concat "> " text) 'face 'cline-user-face) "\n")
    (setq cline--last-block 'user-done)))

(defun cline--log-stop (reason)
  "Note that the turn ended for REASON."
  (cline--log-meta (format "[turn ended: %s]" reason)))

(defun cline--error-text (err)
  "The message of the JSON-RPC error ERR.
The daemon's \"no model\" error gets how to choose one in Emacs."
  (let ((msg (or (and (listp err) (plist-get err :message)) (format "%s" err))))
    (if (string-match-p "no model is configured" msg)
        (concat msg "\nIn Emacs: (setq cline-initialization-options '(:provider "
                "(:name \"anthropic\" :model \"claude-sonnet-4-5\" :apiKeyEnv \"ANTHROPIC_API_KEY\"))) "
                "then restart cline-ls (M-x eglot-reconnect), or set ANTHROPIC_API_KEY (or OPENAI_API_KEY, GEMINI_API_KEY) "
                "in the environment Emacs starts from.")
      msg)))

(defun cline--log-error (what err)
  "Write the error ERR of WHAT."
  (cline--log-line 'error (format "[%s failed: %s]" what (cline--error-text err))
                   'cline-failed-face)
  (message "cline: %s failed: %s" what (cline--error-text err)))

(defun cline--log-chunk (kind text)
  "Append the streamed TEXT to a block of KIND (agent or thought)."
  (cline--appending
    (cline--block kind)
    (insert (if (eq kind 'thought) (propertize text 'face 'cline-thought-face) text))))

(defun cline--status-face (status)
  "Face of a tool call STATUS."
  (pcase status
    ("completed" 'cline-completed-face)
    ("failed" 'cline-failed-face)
    (_ 'cline-pending-face)))

(defun cline--tool-key (sid id)
  "Key of tool call ID of session SID."
  (concat sid "/" id))

(defun cline--replace-field (beg end text face)
  "Replace the text between markers BEG and END by TEXT in FACE."
  (save-excursion
    (goto-char beg)
    (delete-region beg end)
    (insert (propertize text 'face face))
    (set-marker end (point))))

(defun cline--log-tool-call (sid u)
  "Write the tool call of update U of session SID, with its status."
  (let ((id (plist-get u :toolCallId))
        (title (or (plist-get u :title) "tool"))
        (kind (plist-get u :kind))
        (status (or (plist-get u :status) "pending")))
    (cline--appending
      (cline--block 'tool)
      (insert "  * ")
      (let ((tb (point)))
        (insert (propertize title 'face 'cline-tool-face))
        (let ((te (point)))
          (insert (if (and kind (not (equal kind "other"))) (format " (%s)" kind) "") " [")
          (let ((sb (point)))
            (insert (propertize status 'face (cline--status-face status)))
            (let ((se (point)))
              (insert "]\n")
              (puthash (cline--tool-key sid id)
                       (list (copy-marker tb) (copy-marker te)
                             (copy-marker sb) (copy-marker se))
                       cline--tool-lines)))))
      (setq cline--last-block 'tool))))

(defun cline--content-text (content)
  "The text of tool call CONTENT items."
  (mapconcat (lambda (item)
               (let ((inner (plist-get item :content)))
                 (or (and (listp inner) (plist-get inner :text)) "")))
             content "\n"))

(defun cline--log-tool-update (sid u)
  "Update the line of the tool call in update U of session SID."
  (let* ((id (plist-get u :toolCallId))
         (title (plist-get u :title))
         (status (plist-get u :status))
         (buf (cline--log-buffer))
         (markers (with-current-buffer buf
                    (gethash (cline--tool-key sid id) cline--tool-lines))))
    (if (not markers)
        (cline--log-tool-call sid u)
      (cline--appending
        (pcase-let ((`(,tb ,te ,sb ,se) markers))
          (when (and title (not (string-empty-p title)))
            (cline--replace-field tb te title 'cline-tool-face))
          (when status
            (cline--replace-field sb se status (cline--status-face status))))))
    (when (equal status "failed")
      (let ((text (string-trim (cline--content-text (plist-get u :content)))))
        (unless (string-empty-p text)
          (let ((lines (split-string text "\n")))
            (cline--log-line 'tool-output
                             (mapconcat (lambda (l) (concat "      " l))
                                        (seq-take lines 8) "\n")
                             'cline-failed-face)))))))

(defun cline--log-plan (entries)
  "Write the plan ENTRIES."
  (cline--appending
    (cline--block 'plan)
    (insert (propertize "Plan:" 'face 'bold) "\n")
    (mapc (lambda (e)
            (insert (format "  [%s] %s\n"
                            (pcase (plist-get e :status)
                              ("completed" "x") ("in_progress" "~") (_ " "))
                            (plist-get e :content))))
          entries)
    (setq cline--last-block 'plan)))

(defun cline--on-update (_server sid u)
  "Handle the session/update U of session SID from SERVER."
  (let ((kind (plist-get u :sessionUpdate))
        (s (and cline--session (equal (cline--session-id cline--session) sid)
                cline--session)))
    (pcase kind
      ("agent_message_chunk"
       (cline--log-chunk 'agent (or (plist-get (plist-get u :content) :text) "")))
      ("agent_thought_chunk"
       (cline--log-chunk 'thought (or (plist-get (plist-get u :content) :text) "")))
      ("user_message_chunk"
       (cline--log-chunk 'user (or (plist-get (plist-get u :content) :text) "")))
      ("tool_call" (cline--log-tool-call sid u))
      ("tool_call_update" (cline--log-tool-update sid u))
      ("plan" (cline--log-plan (plist-get u :entries)))
      ("current_mode_update"
       (let ((mode (plist-get u :currentModeId)))
         (when s (setf (cline--session-mode s) mode))
         (cline--log-meta (format "[mode: %s]" mode))))
      ("usage_update" (when s (setf (cline--session-usage s) u)))
      (_ nil))
    (cline--header-refresh)))

(cl-defmethod eglot-handle-notification
  ((server cline-eglot-server) (_method (eql 'session/update))
   &key sessionId update &allow-other-keys)
  "Stream a session update into `*cline*'."
  (cline--on-update server sessionId update))


;;; Diffs

(defvar cline-diff-mode-font-lock-keywords
  '(("^\\+.*$" . 'diff-added)
    ("^-.*$" . 'diff-removed)
    ("^cline-ls: .*$" . 'diff-header))
  "Highlighting of the compact diffs of `cline-diff-mode'.")

(define-derived-mode cline-diff-mode special-mode "Cline-Diff"
  "Major mode for the agent's compact diffs: \"-N: old\" and \"+N: new\" lines."
  (require 'diff-mode)
  (setq-local font-lock-defaults '(cline-diff-mode-font-lock-keywords t)))

(defun cline--unified-p (text)
  "Non-nil when TEXT is a unified diff."
  (and text (string-match-p "^@@ " text)))

(defun cline--fill-diff-buffer (name header text)
  "Fill buffer NAME with HEADER and the diff TEXT, and return it."
  (with-current-buffer (get-buffer-create name)
    (let ((inhibit-read-only t))
      (erase-buffer)
      (if (cline--unified-p text) (diff-mode) (cline-diff-mode))
      (insert header "\n")
      (insert (or text ""))
      (unless (bolp) (insert "\n"))
      (goto-char (point-min))
      (setq buffer-read-only t)
      (set-buffer-modified-p nil))
    (current-buffer)))

(defun cline--path (uri)
  "The file name of the file URI."
  (if (and (stringp uri) (string-prefix-p "file://" uri))
      (decode-coding-string (url-unhex-string (substring uri (length "file://"))) 'utf-8)
    uri))

(defun cline--show-diff (path added removed diff)
  "Show DIFF of PATH (ADDED and REMOVED lines) in `*cline-diff*'."
  (let ((buf (cline--fill-diff-buffer
              "*cline-diff*"
              (format "cline-ls: edited %s (+%s -%s)" path added removed)
              diff)))
    (when cline-display-diffs
      (display-buffer buf '((display-buffer-reuse-window display-buffer-pop-up-window)
                            (inhibit-same-window . t))))
    buf))

(defun cline--display-path (server file)
  "FILE relative to SERVER's project root when it is inside it."
  (let ((root (file-name-as-directory (cline--root server))))
    (if (and file (string-prefix-p root (expand-file-name file)))
        (file-relative-name file root)
      (abbreviate-file-name (or file "?")))))

(cl-defmethod eglot-handle-notification
  ((server cline-eglot-server) (_method (eql 'cline/diff))
   &key uri diff added removed &allow-other-keys)
  "Show an edit the agent applied."
  (let ((path (cline--display-path server (cline--path uri))))
    (cline--show-diff path added removed diff)
    (cline--appending
      (cline--block 'diff)
      (insert "  ")
      (insert-text-button (format "diff %s +%s -%s" path added removed)
                          'action (lambda (_) (cline--show-diff path added removed diff))
                          'follow-link t
                          'help-echo "Show this diff")
      (insert "\n")
      (setq cline--last-block 'diff))))


;;; Approvals

(cl-defmethod eglot-handle-notification
  ((server cline-eglot-server) (_method (eql 'cline/approvalRequest))
   &rest params)
  "Queue an approval request; it is asked from a timer, outside the process filter."
  (let ((title (plist-get (plist-get params :toolCall) :title)))
    (cline--log-line 'approval (format "  ? approval needed: %s" title) 'cline-pending-face))
  (setq cline--approval-queue
        (append cline--approval-queue
                (list (append (list :server server :received (float-time)) params))))
  (run-at-time 0 nil #'cline--next-approval))

(defun cline--next-approval ()
  "Ask the oldest queued approval, when no other prompt is active."
  (cond
   ((or cline--asking (null cline--approval-queue)) nil)
   ((active-minibuffer-window)
    ;; The user is typing something else: come back later.
    (run-at-time 0.5 nil #'cline--next-approval))
   (t
    (let ((req (pop cline--approval-queue)))
      (setq cline--asking t)
      (if (eq cline-approval-style 'buffer)
          ;; Answered later, by a key in its buffer (`cline--approval-done').
          (cline--show-approval req)
        (unwind-protect
            (cline--ask-approval req)
          (setq cline--asking nil)
          (when cline--approval-queue
            (run-at-time 0 nil #'cline--next-approval))))))))

(defun cline--approval-buffer (req)
  "Fill `*cline-approval*' for REQ and return it."
  (let* ((call (plist-get req :toolCall))
         (diff (plist-get req :diff))
         (command (plist-get req :command))
         (header (concat (format "cline-ls asks to run: %s" (plist-get call :title))
                         (if command (format "\n$ %s" command) ""))))
    (cline--fill-diff-buffer
     "*cline-approval*" header
     (or diff
         (and (not command)
              (let ((raw (plist-get call :rawInput)))
                (and raw (json-encode raw))))))))

(defvar cline-approval-keys-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map "a" #'cline-approval-allow)
    (define-key map "A" #'cline-approval-allow-always)
    (define-key map "r" #'cline-approval-reject)
    (define-key map "R" #'cline-approval-reject-with-feedback)
    (define-key map "q" #'cline-approval-later)
    map)
  "Keys of `*cline-approval*': the only way a `buffer' approval is answered.")

(define-minor-mode cline-approval-keys-mode
  "Answer the approval shown in this buffer: \\{cline-approval-keys-mode-map}"
  :lighter " Approve")

(defvar-local cline--approval-req nil
  "The approval request `*cline-approval*' shows, while it waits.")

(defun cline--show-approval (req)
  "Show REQ in `*cline-approval*' without selecting it, and wait for its keys."
  (let ((buf (cline--approval-buffer req)))
    (with-current-buffer buf
      (let ((inhibit-read-only t))
        (goto-char (point-min))
        (end-of-line)
        (insert "\n[a] allow  [A] always allow  [r] reject  [R] reject with feedback  [q] later"
                "  (switch here first: M-x cline-approve)")
        (goto-char (point-min)))
      (setq cline--approval-req req)
      (cline-approval-keys-mode 1)
      ;; A read-only `diff-mode' buffer overrides minor modes' keys
      ;; (r, R...) with its own: ours come first.
      (setq-local minor-mode-overriding-map-alist
                  (cons (cons 'cline-approval-keys-mode cline-approval-keys-mode-map)
                        (assq-delete-all 'cline-approval-keys-mode
                                         (copy-sequence minor-mode-overriding-map-alist)))))
    ;; Keys go to the selected window: never select this one for the user.
    (when (eq (window-buffer (selected-window)) buf)
      (select-window (or (get-mru-window nil nil t) (next-window))))
    (display-buffer buf '((display-buffer-reuse-window display-buffer-pop-up-window)
                          (inhibit-same-window . t)))
    (message "cline: approval needed: %s (M-x cline-approve, then a/A/r/R)"
             (or (plist-get (plist-get req :toolCall) :title) "a tool"))))

(defun cline-approve ()
  "Select the window of the waiting approval, to answer it with its keys."
  (interactive)
  (let ((buf (get-buffer "*cline-approval*")))
    (unless (and buf (buffer-local-value 'cline--approval-req buf))
      (user-error "No cline approval is waiting"))
    (pop-to-buffer buf '((display-buffer-reuse-window display-buffer-pop-up-window)))))

(defun cline--approval-key (kind &optional feedback-p)
  "Answer the approval of the current buffer with an option of KIND.
With FEEDBACK-P, ask for feedback for the agent first."
  (let ((req cline--approval-req))
    (unless req (user-error "This approval was answered already"))
    (let* ((options (append (plist-get req :options) nil))
           (opt (or (cl-find kind options :key (lambda (o) (plist-get o :kind)) :test #'equal)
                    (list :optionId kind :name kind :kind kind)))
           (feedback (and feedback-p
                          (let ((fb (string-trim (read-string "Feedback for the agent (RET for none): "))))
                            (unless (string-empty-p fb) fb)))))
      (cline--approval-done req (plist-get opt :name)
                            (list :outcome "selected" :optionId (plist-get opt :optionId))
                            feedback))))

(defun cline-approval-allow ()
  "Allow the call shown once."
  (interactive)
  (cline--approval-key "allow_once"))

(defun cline-approval-allow-always ()
  "Allow the call shown, and its like for the rest of the session."
  (interactive)
  (cline--approval-key "allow_always"))

(defun cline-approval-reject ()
  "Reject the call shown."
  (interactive)
  (cline--approval-key "reject_once"))

(defun cline-approval-reject-with-feedback ()
  "Reject the call shown, telling the agent why."
  (interactive)
  (cline--approval-key "reject_once" t))

(defun cline-approval-later ()
  "Hide the approval; \[cline-approve] brings it back."
  (interactive)
  (quit-window))

(defun cline--approval-done (req answer outcome feedback)
  "Close REQ's view, send OUTCOME (ANSWER in words, with FEEDBACK), ask the next."
  (when-let ((buf (get-buffer "*cline-approval*")))
    (with-current-buffer buf
      (setq cline--approval-req nil)
      (cline-approval-keys-mode -1))
    (dolist (w (get-buffer-window-list buf nil t))
      (ignore-errors (quit-window nil w))))
  (cline--send-approval req answer outcome feedback)
  (setq cline--asking nil)
  (when cline--approval-queue
    (run-at-time 0 nil #'cline--next-approval)))

(defun cline--drop-approval (session-id)
  "Close the view of the waiting approval of SESSION-ID, sending nothing."
  (when-let ((buf (get-buffer "*cline-approval*")))
    (let ((req (buffer-local-value 'cline--approval-req buf)))
      (when (and req (equal (plist-get req :sessionId) session-id))
        (cline--approval-done req "dismissed" (list :outcome "cancelled") nil)))))

(defun cline--choose (title options)
  "Ask which of OPTIONS (approval options) to take for TITLE; return one."
  (pcase cline-approval-style
    ('y-or-n-p
     (let ((kind (if (y-or-n-p (format "cline: allow %s? " title))
                     "allow_once" "reject_once")))
       (or (cl-find kind options :key (lambda (o) (plist-get o :kind)) :test #'equal)
           (list :optionId kind :name kind :kind kind))))
    (_
     (let* ((names (mapcar (lambda (o) (plist-get o :name)) options))
            ;; No default: RET typed ahead must not allow.
            (choice (completing-read (format "cline: %s: " title) names nil t)))
       (cl-find choice options :key (lambda (o) (plist-get o :name)) :test #'equal)))))

(defun cline--ask-approval (req)
  "Ask the user about approval request REQ and send the answer."
  (let* ((call (plist-get req :toolCall))
         (title (or (plist-get call :title) "a tool"))
         (options (append (plist-get req :options) nil))
         (buf (cline--approval-buffer req))
         (win (display-buffer buf '((display-buffer-reuse-window display-buffer-pop-up-window)
                                    (inhibit-same-window . t))))
         outcome feedback answer)
    (unwind-protect
        (condition-case nil
            (let ((opt (cline--choose title options)))
              (setq answer (plist-get opt :name))
              (setq outcome (list :outcome "selected" :optionId (plist-get opt :optionId)))
              (when (and cline-ask-feedback
                         (string-prefix-p "reject" (or (plist-get opt :kind) "")))
                (let ((fb (string-trim (read-string "Feedback for the agent (RET for none): "))))
                  (unless (string-empty-p fb) (setq feedback fb)))))
          (quit (setq outcome (list :outcome "cancelled") answer "dismissed")))
      (when (and (window-live-p win) (eq (window-buffer win) buf))
        (ignore-errors (quit-window nil win))))
    (cline--send-approval req answer outcome feedback)))

(defun cline--send-approval (req answer outcome feedback)
  "Send OUTCOME and FEEDBACK for REQ, noting ANSWER, unless its turn was cancelled."
  (let ((server (plist-get req :server))
        (id (plist-get req :approvalId)))
    (if (> (gethash (plist-get req :sessionId) cline--cancelled 0)
           (plist-get req :received))
        (cline--log-meta "    -> dropped: the turn was cancelled")
      (cline--log-line 'approval
                       (format "    -> %s%s" answer
                               (if feedback (format " (feedback: %s)" feedback) ""))
                       'cline-meta-face)
      (jsonrpc-async-request
       server :cline/approvalResponse
       (append (list :approvalId id :outcome outcome)
               (and feedback (list :feedback feedback)))
       :success-fn #'ignore
       :error-fn (lambda (err) (cline--log-error "approval" err))
       :timeout 30))))


;;; Questions

(cl-defmethod eglot-handle-request
  ((_server cline-eglot-server) (_method (eql 'cline/askQuestion))
   &key question options &allow-other-keys)
  "Ask the agent's QUESTION, offering OPTIONS; a quit answers null."
  (cline--log-line 'question (format "  ? %s" question) 'cline-pending-face)
  (let* ((choices (append options nil))
         (answer (condition-case nil
                     (if choices
                         (completing-read (format "cline asks: %s " question) choices)
                       (read-string (format "cline asks: %s " question)))
                   (quit nil))))
    (when (and answer (string-empty-p answer)) (setq answer nil))
    (cline--log-line 'question (format "    -> %s" (or answer "(no answer)"))
                     'cline-meta-face)
    (list :answer answer)))

(provide 'cline)
;;; cline.el ends here
