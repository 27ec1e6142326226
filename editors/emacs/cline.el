;;; cline.el --- Cline coding agent through cline-ls and Eglot  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The cline-ls authors

;; Author: The cline-ls authors
;; Maintainer: The cline-ls authors
;; URL: https://github.com/cline-ls/cline-ls
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
;; - the `*cline*' chat (`cline-show'): the session streams above (agent
;;   text as it arrives, tool calls with their status, the plan, mode
;;   changes, each edit's diff once), you write below and send with
;;   C-c C-c, follow-ups in the same session; @FILE and the region
;;   (`cline-mention-region') go with the prompt as the text you see;
;; - `cline-task' and `cline-plan' start a turn from the minibuffer,
;;   `cline-set-mode' and `cline-set-model' switch, `cline-cancel' stops;
;; - `cline-resume' reopens an earlier session, `cline-undo-turn' undoes
;;   the last turn's edits and conversation, `cline-checkpoints' lists
;;   every checkpoint with a preview of what restoring it changes;
;; - approvals (`cline/approvalRequest') show the proposed diff in
;;   another window that never takes the keyboard;
;; - `cline-mode-line-mode': mode, state (waiting for the model, an
;;   approval) and the turn's and session's tokens in the mode line;
;; - the agent's questions (`cline/askQuestion') are asked with
;;   `completing-read'.
;;
;; Start with M-x cline-start in a file of your project, then M-x
;; cline-show; ? in `*cline*' lists its keys.  The wire protocol is
;; docs/PROTOCOL.md in the cline-ls repository.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'seq)
(require 'button)
(require 'text-property-search)
(require 'url-util)
(require 'parse-time)
(require 'json)
(require 'jsonrpc)
(require 'eglot)
(require 'flymake)

;; Eglot's names for the "confirm server edits" option: the first is
;; Eglot < 1.16's, the second the current one.  Declared so that `let'
;; binds them dynamically whichever Eglot is loaded.
(defvar eglot-confirm-server-initiated-edits)
(defvar eglot-confirm-server-edits)

(declare-function diff-mode "diff-mode")
(declare-function ediff-buffers "ediff")
(declare-function diff-no-select "diff")
(declare-function eglot--languages "eglot")

(cl-defstruct (cline--session (:constructor cline--session-make) (:copier nil))
  "An agent session: its SERVER, ID, current MODE, the MODES it offers,
whether a turn is running (BUSY), whether that turn waits for the
model's next words (WAITING) and the last USAGE report (the reply's
tokens with the turn's and the session's totals and the context).
READ-ONLY, when set, is the id of the session another daemon holds that
this one (a copy of it) shows: prompts are refused."
  server id mode modes busy waiting usage read-only)

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

(defcustom cline-display-diffs nil
  "When non-nil, show `*cline-diff*' after an edit no approval showed.
Either way each edit's diff is shown once: by its approval, or else
by its first lines in `*cline*' (nil) or in `*cline-diff*' (t).  The
link in `*cline*' shows it again."
  :type 'boolean)

(defcustom cline-display-session t
  "When non-nil, `cline-task' and `cline-plan' display `*cline*'."
  :type 'boolean)

(defcustom cline-mode-line t
  "When non-nil, `cline-start' turns on `cline-mode-line-mode'."
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
  "Eglot's capabilities plus experimental.cline (approvals, diffs,
questions, and diagnostics where Flymake's reports can be followed)."
  (let ((caps (copy-sequence (cl-call-next-method))))
    ;; window/showDocument: an MCP server's sign-in page, opened with
    ;; `browse-url' (Eglot 1.9 has no handler of its own).
    (plist-put caps :window
               (plist-put (copy-sequence (plist-get caps :window)) :showDocument (list :support t)))
    (plist-put caps :experimental
               (list :cline (list :approvals t :diffs t :questions t
                                  :diagnostics (if (cline--diagnostics-available-p) t :json-false))))))


;;; The editor's diagnostics for the daemon (cline/diagnostics)

(defconst cline--max-diagnostics 200
  "The most diagnostics one cline/diagnostics report carries.")

(defun cline--diagnostics-available-p ()
  "Non-nil when Flymake's reports can be followed (Emacs 28 and 30 alike)."
  (and (require 'flymake nil t) (fboundp 'flymake--handle-report)))

(defun cline--flymake-severity (type)
  "LSP's severity (1 error, 2 warning, 3 information) of Flymake's TYPE."
  (let ((sev (if (fboundp 'flymake--severity)
                 (flymake--severity type)
               (warning-numeric-level :warning))))
    (cond ((>= sev (warning-numeric-level :error)) 1)
          ((>= sev (warning-numeric-level :warning)) 2)
          (t 3))))

(defun cline--lsp-position (pos)
  "POS as an LSP position: 0-based line and column."
  (save-excursion
    (goto-char pos)
    (list :line (1- (line-number-at-pos pos t)) :character (- pos (line-beginning-position)))))

(defun cline--cline-buffer-p ()
  "Non-nil when the current buffer is mirrored by a cline-ls server."
  (and (bound-and-true-p eglot--managed-mode)
       (cl-typep (eglot-current-server) 'cline-eglot-server)))

(defun cline--send-diagnostics ()
  "Send the current buffer's Flymake diagnostics, every backend's, to its
cline-ls server, with the version Eglot's didChange carries."
  (when (cline--cline-buffer-p)
    (let ((server (eglot-current-server))
          (diags nil) (n 0))
      (save-restriction
        (widen)
        (dolist (d (flymake-diagnostics (point-min) (point-max)))
          (when (< n cline--max-diagnostics)
            (setq n (1+ n))
            (let ((backend (flymake-diagnostic-backend d)))
              (push (list :range (list :start (cline--lsp-position (flymake-diagnostic-beg d))
                                       :end (cline--lsp-position (flymake-diagnostic-end d)))
                          :severity (cline--flymake-severity (flymake-diagnostic-type d))
                          :source (if (symbolp backend) (symbol-name backend) "flymake")
                          :message (substring-no-properties (or (flymake-diagnostic-text d) "")))
                    diags)))))
      (let ((id (eglot--VersionedTextDocumentIdentifier)))
        (jsonrpc-notify server :cline/diagnostics
                        (list :uri (plist-get id :uri) :version (plist-get id :version)
                              :diagnostics (vconcat (nreverse diags))))))))

(defvar-local cline--diagnostics-timer nil
  "The pending send of the buffer's diagnostics, if any.")

(defun cline--after-flymake-report (&rest _)
  "Send the buffer's diagnostics once a Flymake backend has reported.
Flymake has no hook for a finished report in Emacs 28 or 30, so this
follows `flymake--handle-report', which every backend's report goes
through, in the buffer it reports on.  The send waits for the backends
that report at once in the same check: before they have, the buffer
still holds their diagnostics of the text before the change."
  (when (and (cline--cline-buffer-p) (not cline--diagnostics-timer))
    (let ((buf (current-buffer)))
      (setq cline--diagnostics-timer
            (run-at-time 0 nil (lambda ()
                                 (when (buffer-live-p buf)
                                   (with-current-buffer buf
                                     (setq cline--diagnostics-timer nil)
                                     (ignore-errors (cline--send-diagnostics))))))))))

(when (cline--diagnostics-available-p)
  (advice-add 'flymake--handle-report :after #'cline--after-flymake-report))

(defun cline--send-all-diagnostics (server)
  "Send the diagnostics of every buffer SERVER mirrors: the baseline an
edit's are compared with, once when a session starts."
  (when (cline--diagnostics-available-p)
    (dolist (buf (buffer-list))
      (with-current-buffer buf
        (when (and (cline--cline-buffer-p) (eq (eglot-current-server) server))
          (ignore-errors (cline--send-diagnostics)))))))

(defvar cline--model)

(defun cline--settings (server)
  "The value of `cline-initialization-options' for SERVER.
The model chosen with `cline-set-model' replaces the provider's."
  (let ((opts (if (functionp cline-initialization-options)
                  (funcall cline-initialization-options server)
                cline-initialization-options)))
    (if (not cline--model)
        opts
      (let ((opts (copy-sequence opts)))
        (plist-put opts :provider
                   (plist-put (copy-sequence (plist-get opts :provider)) :model cline--model))))))

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

(defun cline--note-restart (server)
  "Say, when SERVER replaces a cline-ls that stopped, that its session can go on."
  (when (and (cl-typep server 'cline-eglot-server) cline--session
             (cline--session-usage cline--session)
             (not (cline--live-session-p cline--session)))
    (cline--log-meta (format "[cline-ls stopped; the next prompt offers to resume session %s (or C-c C-r)]"
                             (cline--session-id cline--session)))))

(add-hook 'eglot-connect-hook #'cline--note-restart t)

(cl-defmethod eglot-handle-request
  ((server cline-eglot-server) (_method (eql 'workspace/applyEdit)) &rest params)
  "Apply the agent's edit without a second confirmation.
The user approved it already through `cline/approvalRequest' (or the
daemon's rules allowed it).  The change is reported at once rather
than after Eglot's idle delay, since the daemon waits for it.  The
text of each buffer before it is kept for `cline-review-edit'."
  (cline--remember-before (plist-get params :edit))
  (with-suppressed-warnings ((obsolete eglot-confirm-server-initiated-edits))
    (let ((eglot-confirm-server-initiated-edits nil)
          (eglot-confirm-server-edits nil))
      (prog1 (cl-call-next-method)
        (cline--flush-changes server)))))

(defvar cline--before (make-hash-table :test #'equal)
  "Map from a file name to its buffer's text before the agent's last edit.")

(defun cline--edit-uris (edit)
  "The document URIs the WorkspaceEdit EDIT changes."
  (append (mapcar (lambda (dc) (plist-get (plist-get dc :textDocument) :uri))
                  (append (plist-get edit :documentChanges) nil))
          (cl-loop for (k _v) on (plist-get edit :changes) by #'cddr
                   collect (substring (symbol-name k) 1))))

(defun cline--remember-before (edit)
  "Keep the text of the buffers EDIT is about to change, in `cline--before'."
  (dolist (uri (cline--edit-uris edit))
    (let ((file (and (stringp uri) (expand-file-name (cline--path uri)))))
      (when-let ((b (and file (find-buffer-visiting file))))
        (puthash file (with-current-buffer b
                        (save-restriction (widen) (buffer-substring-no-properties
                                                   (point-min) (point-max))))
                 cline--before)))))

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
  (when cline-mode-line (cline-mode-line-mode 1))
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
       (cline--send-all-diagnostics server)
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
     ((and (not new) s (not (cline--live-session-p s)) (cline--session-id s)
           ;; A session the model never answered has nothing to resume.
           (cline--session-usage s)
           (y-or-n-p (format "cline-ls stopped since session %s began; resume it (else a new session)? "
                             (cline--session-id s))))
      ;; The daemon was killed or crashed: the session's history is on
      ;; disk, and the new daemon takes it up.
      (cline--load-session server (cline--session-id s)
                           (lambda (s2)
                             (if (or (null mode) (equal (cline--session-mode s2) mode))
                                 (funcall then s2)
                               (cline--request-mode s2 mode (lambda () (funcall then s2)))))))
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
                 (cline--status-changed)
                 (when then (funcall then)))
   :error-fn (lambda (err) (cline--log-error "session/set_mode" err))
   :timeout 30))

(defun cline--prompt (s text &optional blocks)
  "Send TEXT to session S, followed by the content BLOCKS (mentions).
The answer streams into `*cline*'.  The request returns when the turn
ends, so it is asynchronous and has no time limit."
  (when (cline--session-read-only s)
    (user-error "This is a read-only copy of session %s, open in another cline-ls: C-c C-n starts a new session, M-x cline-fork goes on in a copy"
                (cline--session-read-only s)))
  (setf (cline--session-busy s) t
        (cline--session-waiting s) t)
  (when-let ((u (cline--session-usage s)))
    ;; The turn's totals start again with its first reply.
    (setf (cline--session-usage s) (plist-put (copy-sequence u) :turn nil)))
  (cline--log-user text)
  (dolist (b blocks)
    (cline--log-meta (format "  @ %s" (cline--block-label b))))
  (cline--status-changed)
  (jsonrpc-async-request
   (cline--session-server s) :session/prompt
   (list :sessionId (cline--session-id s)
         :prompt (vconcat (list (list :type "text" :text text)) blocks))
   :success-fn (lambda (res)
                 (setf (cline--session-busy s) nil
                       (cline--session-waiting s) nil)
                 (cline--log-stop (plist-get res :stopReason))
                 (cline--status-changed))
   :error-fn (lambda (err)
               (setf (cline--session-busy s) nil
                     (cline--session-waiting s) nil)
               (cline--log-error "session/prompt" err)
               (cline--status-changed))
   :timeout nil))

(defun cline--start-turn (mode text new &optional blocks)
  "Run TEXT with the content BLOCKS as a turn in MODE; NEW opens a new session.
MODE nil keeps the session's mode."
  (when (and (not new) (cline--live-session-p cline--session)
             (cline--session-busy cline--session))
    (user-error "A cline turn is running: wait for it or cancel it (C-c C-k)"))
  (when (string-empty-p (string-trim text))
    (user-error "Nothing to send"))
  (when cline-display-session
    (cline--display-chat))
  (let ((fresh (or new (not (cline--live-session-p cline--session)))))
    (cline--with-session (or mode
                             (and fresh (or (and cline--session (cline--session-mode cline--session))
                                            "act")))
                         new (lambda (s) (cline--prompt s text blocks)))))

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
  "Display the `*cline*' chat and go to its prompt area.
It gets a window of its own: the current one keeps its buffer."
  (interactive)
  (select-window (cline--display-chat))
  (goto-char (point-max)))

(defun cline--display-chat ()
  "Display `*cline*' in a window of its own and return that window.
The selected window keeps its buffer: a wide frame is split side by
side, a narrow one (a terminal) top and bottom."
  (or (get-buffer-window (cline--log-buffer))
      (display-buffer (cline--log-buffer)
                      '((display-buffer-reuse-window display-buffer-pop-up-window
                                                     display-buffer-in-direction)
                        (direction . below)
                        (inhibit-same-window . t)))))

;;;###autoload
(defun cline-new-session (&optional mode)
  "Open a new session (in MODE, else the current session's mode).
The chat's next prompt goes to it."
  (interactive)
  (let ((mode (or mode (and cline--session (cline--session-mode cline--session)) "act")))
    (cline--new-session (cline--server t) mode
                        (lambda (s) (message "cline: new session %s" (cline--session-id s))))))

(defvar cline-command-map
  (let ((map (make-sparse-keymap)))
    (define-key map "t" #'cline-task)
    (define-key map "p" #'cline-plan)
    (define-key map "m" #'cline-set-mode)
    (define-key map "M" #'cline-set-model)
    (define-key map "c" #'cline-cancel)
    (define-key map "s" #'cline-start)
    (define-key map "b" #'cline-show)
    (define-key map "n" #'cline-new-session)
    (define-key map "r" #'cline-resume)
    (define-key map "f" #'cline-fork)
    (define-key map "u" #'cline-undo-turn)
    (define-key map "l" #'cline-checkpoints)
    (define-key map "@" #'cline-mention-file)
    (define-key map "." #'cline-mention-region)
    (define-key map "a" #'cline-approve)
    (define-key map "e" #'cline-review-last-edit)
    map)
  "Keymap of the cline commands, to bind to a prefix key.")
(fset 'cline-command-map cline-command-map)


;;; Status: the mode line and the chat's header line

(defun cline--tokens (n)
  "N tokens, short: 950, 1.2k, 35k."
  (let ((n (or n 0)))
    (cond ((>= n 10000) (format "%dk" (round n 1000)))
          ((>= n 1000) (format "%.1fk" (/ n 1000.0)))
          (t (format "%d" n)))))

(defun cline--usage-sum (totals)
  "Input plus output tokens of the usage TOTALS plist."
  (+ (or (plist-get totals :inputTokens) 0) (or (plist-get totals :outputTokens) 0)))

(defun cline--cost (totals)
  "\" $0.0123\" for the cost of TOTALS, or \"\" when unpriced."
  (let ((c (plist-get totals :costUsd)))
    (if (numberp c) (format " $%.4f" c) "")))

(defun cline--approval-waiting-p ()
  "Non-nil when an approval waits in `*cline-approval*'."
  (let ((b (get-buffer "*cline-approval*")))
    (and b (buffer-local-value 'cline--approval-req b) t)))

(defun cline--state (s)
  "What session S is doing, in a word or two."
  (cond ((not (cline--session-busy s)) "idle")
        ((cline--approval-waiting-p) "approval needed")
        ((cline--session-waiting s) "waiting for the model")
        (t "working")))

(defun cline-status-string (&optional long)
  "The state of the current cline session, for a mode line.
Its mode, what it is doing and the tokens of the turn and of the
session (with the cost when the model's price is known); with LONG
also the context window's use.  \"\" with no session."
  (let ((s cline--session))
    (if (not s)
        (if long "no session: write below and C-c C-c, or M-x cline-task" "")
      (let* ((u (cline--session-usage s))
             (turn (plist-get u :turn))
             (sess (plist-get u :session))
             (ctx (plist-get u :context)))
        (if (not long)
            (format "Cline[%s %s%s]" (or (cline--session-mode s) "?") (cline--state s)
                    (if u (format " %s/%s tok" (cline--tokens (cline--usage-sum turn))
                                  (cline--tokens (cline--usage-sum sess)))
                      ""))
          (concat (format "%s · %s" (or (cline--session-mode s) "?") (cline--state s))
                  (if u
                      (concat (format " · turn %s tok%s" (cline--tokens (cline--usage-sum turn))
                                      (cline--cost turn))
                              (format " · session %s tok%s" (cline--tokens (cline--usage-sum sess))
                                      (cline--cost sess))
                              (let ((used (plist-get ctx :used)) (size (plist-get ctx :size)))
                                (if (and (numberp used) (numberp size) (> size 0))
                                    (format " · context %s/%s (%d%%)" (cline--tokens used)
                                            (cline--tokens size) (round (* 100.0 used) size))
                                  "")))
                    "")))))))

(defvar cline--mode-line-entry '(:eval (let ((s (cline-status-string)))
                                         (if (string-empty-p s) "" (concat " " s))))
  "The mode line construct of `cline-mode-line-mode'.")
(put 'cline--mode-line-entry 'risky-local-variable t)

;;;###autoload
(define-minor-mode cline-mode-line-mode
  "Show the cline session's state in every mode line.
Its mode, whether it waits for the model or an approval, and the
tokens of the turn and the session (`cline-status-string')."
  :global t
  (setq global-mode-string (delete 'cline--mode-line-entry (or global-mode-string '(""))))
  (when cline-mode-line-mode
    (setq global-mode-string (append global-mode-string '(cline--mode-line-entry))))
  (force-mode-line-update t))

(defun cline--status-changed ()
  "Redisplay the mode lines and the chat's header line."
  (force-mode-line-update t))


;;; Text from the daemon, shown visibly

(defconst cline--hidden-chars
  (concat "\x00-\x08\x0b-\x1f\x7f\u0080-\u009f"
          "\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b\u200e\u200f"
          "\u2028-\u202e\u2060-\u206f\u3164\ufeff\uffa0\ufff0-\ufffb"
          "\U000e0000-\U000e0fff"
          (string #x3fff80) "-" (string #x3fffff))
  "What a terminal would act on, or Emacs draw misleadingly: C0 controls
but line breaks and tabs, DEL, C1 (\\u009b is an 8-bit CSI), bidi
overrides and isolates (bidi reordering is on in every buffer),
zero-width and other invisible characters, raw bytes.")

(defconst cline--hidden-re (concat "[" cline--hidden-chars "]")
  "A character `cline--visible' escapes in text.")

(defconst cline--hidden-exact-re
  (concat "[" cline--hidden-chars "\t\n\u00ad\u034f\u200c\u200d\ufe00-\ufe0f\U000e0100-\U000e01ef]")
  "A character `cline--visible' escapes in a one-line field: also line
breaks, tabs, joiners and variation selectors.")

(defun cline--visible (text &optional exact)
  "TEXT from the daemon with what would not show plainly escaped.
A model's reply, a file's text or name, a command and its output all
reach the user through this one rule: an escape sequence, a carriage
return, a bidi override or a zero-width character is written as
\\x1b, \\r, \\u202e, so the user sees that something was there.
With EXACT (a command to approve, a title, a file name) line breaks,
tabs and joiners are escaped too.  The result holds no `%' directive
of its own: it is text, never a format string."
  (let ((case-fold-search nil)
        (text (if (stringp text) text (format "%s" (or text "")))))
    (if (not (string-match-p (if exact cline--hidden-exact-re cline--hidden-re) text))
        text
      (replace-regexp-in-string
       (if exact cline--hidden-exact-re cline--hidden-re)
       (lambda (m)
         (let ((c (aref m 0)))
           (cond ((= c ?\r) "\\r")
                 ((= c ?\n) "\\n")
                 ((= c ?\t) "\\t")
                 ((< c #x80) (format "\\x%02x" c))
                 ((>= c #x3fff80) (format "\\x%02x" (- c #x3fff00)))
                 ((<= c #xffff) (format "\\u%04x" c))
                 (t (format "\\U%08x" c)))))
       text t t))))

;;; The *cline* buffer: the chat

(defvar-local cline--last-block nil
  "Kind of the last thing written to `*cline*', to know where text joins.")

(defvar-local cline--tool-lines nil
  "Map from \"SESSION/TOOLCALL\" to the markers of that call's line.")

(defvar-local cline--out nil
  "Marker at the end of the transcript in `*cline*', where output goes.")

(defvar-local cline--input nil
  "Marker at the start of the prompt area of `*cline*'.")

(defvar-local cline--mentions nil
  "Alist from a mention in the prompt area (\"file#L3-5\") to its content block.")

(defvar cline-session-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "C-c C-c") #'cline-send)
    (define-key map (kbd "C-c C-k") #'cline-cancel)
    (define-key map (kbd "C-c @") #'cline-mention-file)
    (define-key map (kbd "C-c C-f") #'cline-mention-file)
    (define-key map (kbd "C-c C-o") #'cline-set-mode)
    (define-key map (kbd "C-c M-o") #'cline-set-model)
    (define-key map (kbd "C-c C-n") #'cline-new-session)
    (define-key map (kbd "C-c C-r") #'cline-resume)
    (define-key map (kbd "C-c M-f") #'cline-fork)
    (define-key map (kbd "C-c C-u") #'cline-undo-turn)
    (define-key map (kbd "C-c C-l") #'cline-checkpoints)
    (define-key map (kbd "C-c C-a") #'cline-approve)
    (define-key map (kbd "C-c C-e") #'cline-review-last-edit)
    (define-key map (kbd "C-c C-p") #'cline-previous-prompt)
    (define-key map "?" #'cline-help-or-insert)
    map)
  "Keys of `*cline*'.")

(define-derived-mode cline-session-mode nil "Cline"
  "The `*cline*' chat: the session streams above, you write below.

The prompt area is the end of the buffer, under the line that lists
its keys; it takes several lines (RET is a newline).  Send it with
\\[cline-send]: a follow-up in the current session (the first prompt
opens one, in act mode).  In it, @FILE (a path relative to the
project) sends that file's text with the prompt, as your buffer holds
it; \\[cline-mention-file] inserts one, and \\[cline-mention-region]
in a file buffer inserts its region as @FILE#L3-5 (sent as it was
selected).

The transcript above is read-only: your prompts, the agent's text as
it arrives, tool calls with their status, links to the diffs of
applied edits (RET or a click shows one), the plan, mode changes and
how each turn ended.  The header line shows the mode, what the
session is doing (\"waiting for the model\" while it thinks), the
tokens of the turn and of the session, their cost and the context
window's use; `cline-mode-line-mode' shows the same in every mode line.

Approvals appear in `*cline-approval*' in another window and never
take the keyboard: \\[cline-approve] goes there, then a/A/r/R/q.
\\[cline-review-last-edit] reviews the last edit hunk by hunk in Ediff
\(the \"review\" button after an edit's link does it for that edit),
to take back the hunks you do not want.

? outside the prompt area shows this help.

\\{cline-session-mode-map}"
  (setq-local cline--tool-lines (make-hash-table :test #'equal))
  (setq-local truncate-lines nil)
  (setq-local word-wrap t)
  (setq header-line-format '(:eval (concat " " (cline-status-string t))))
  (let ((inhibit-read-only t))
    (erase-buffer)
    (insert (propertize (substitute-command-keys
                         (concat "\n── \\[cline-send] send · \\[cline-mention-file] @file"
                                 " · \\[cline-cancel] cancel · \\[cline-undo-turn] undo · ? keys ──\n"))
                        'face 'cline-meta-face 'read-only t 'rear-nonsticky t
                        'front-sticky t 'cline-separator t))
    (setq cline--out (copy-marker (point-min) t)
          cline--input (point-marker))))

(defun cline-help-or-insert ()
  "Insert ? in the prompt area; elsewhere show the chat's help."
  (interactive)
  (if (and cline--input (>= (point) cline--input))
      (call-interactively #'self-insert-command)
    (describe-mode)))

(defun cline--log-buffer ()
  "The `*cline*' buffer."
  (or (get-buffer "*cline*")
      (with-current-buffer (get-buffer-create "*cline*")
        (cline-session-mode)
        (current-buffer))))

(defmacro cline--appending (&rest body)
  "Run BODY at the end of the transcript of `*cline*', above the prompt area.
What BODY inserts becomes read-only."
  (declare (indent 0) (debug t))
  `(with-current-buffer (cline--log-buffer)
     (let ((inhibit-read-only t)
           (beg (marker-position cline--out)))
       (save-excursion
         (goto-char cline--out)
         ,@body)
       (when (< beg cline--out)
         (add-text-properties beg cline--out '(read-only t front-sticky t)))
       ;; A window whose cursor is in the prompt area follows the output.
       (dolist (w (get-buffer-window-list (current-buffer) nil t))
         (when (>= (window-point w) cline--input)
           (with-selected-window w (ignore-errors (recenter -1))))))))

(defun cline--input-text ()
  "The text of the prompt area of `*cline*'."
  (with-current-buffer (cline--log-buffer)
    (buffer-substring-no-properties cline--input (point-max))))

(defun cline--file-resource (name)
  "The content block of the file NAME (relative to `default-directory'), or nil.
Its text is the buffer's when the file is visited, unsaved changes
included."
  (let ((file (expand-file-name name)))
    (when (file-regular-p file)
      (let ((text (if-let ((b (find-buffer-visiting file)))
                      (with-current-buffer b
                        (save-restriction (widen) (buffer-substring-no-properties
                                                   (point-min) (point-max))))
                    (with-temp-buffer (insert-file-contents file) (buffer-string)))))
        (list :type "resource"
              :resource (list :uri (cline--uri file) :text text :mimeType "text/plain"))))))

(defun cline--uri (file)
  "The file URI of FILE."
  (concat "file://" (url-hexify-string (expand-file-name file) url-path-allowed-chars)))

(defun cline--block-label (block)
  "A short name of the content BLOCK, for the transcript."
  (let ((uri (plist-get (plist-get block :resource) :uri)))
    (if uri (cline--display-path nil (cline--path uri)) (or (plist-get block :type) "?"))))

(defun cline--mention-blocks (text)
  "The content blocks of the @mentions in TEXT, each once, in order.
A mention made by `cline-mention-region' sends the text selected then;
@FILE the file's text now."
  (let ((start 0) seen blocks)
    (while (string-match "@\\([^ \t\n]+\\)" text start)
      (setq start (match-end 0))
      (let ((tok (match-string 1 text)))
        (unless (member tok seen)
          (push tok seen)
          (when-let ((b (or (cdr (assoc tok cline--mentions))
                            (cline--file-resource tok)
                            (cline--file-resource
                             (replace-regexp-in-string "[.,;:!?)]+\\'" "" tok)))))
            (push b blocks)))))
    (nreverse blocks)))

(defun cline-send ()
  "Send the prompt area of `*cline*' to the current session.
The first prompt opens a session, in act mode; @mentions go with it
as the files' (or the selections') text."
  (interactive)
  (with-current-buffer (cline--log-buffer)
    (let* ((text (string-trim (cline--input-text)))
           (blocks (cline--mention-blocks text)))
      (when (string-empty-p text)
        (user-error "Nothing to send: write your prompt at the end of *cline*"))
      (cline--start-turn nil text nil blocks)
      (with-current-buffer (cline--log-buffer)
        (let ((inhibit-read-only t))
          (delete-region cline--input (point-max)))
        (setq cline--mentions nil)))))

(defun cline-previous-prompt ()
  "Put the last prompt sent back in the prompt area, to edit and resend."
  (interactive)
  (with-current-buffer (cline--log-buffer)
    (let ((pos (save-excursion
                 (goto-char cline--out)
                 (text-property-search-backward 'cline-prompt nil nil t))))
      (unless pos (user-error "No prompt sent yet"))
      (let ((inhibit-read-only t))
        (delete-region cline--input (point-max))
        (goto-char (point-max))
        (insert (get-text-property (prop-match-beginning pos) 'cline-prompt))))))

(defun cline--chat-insert-mention (token block)
  "Add @TOKEN to the prompt area of `*cline*', sending BLOCK with the prompt."
  (let ((buf (cline--log-buffer)))
    (with-current-buffer buf
      (when block (push (cons token block) cline--mentions))
      (save-excursion
        (goto-char (point-max))
        (unless (or (= (point) cline--input) (memq (char-before) '(?\s ?\n)))
          (insert " "))
        (insert "@" token " ")))
    (let ((w (cline--display-chat)))
      (when (window-live-p w)
        (set-window-point w (with-current-buffer buf (point-max)))))))

(defun cline--chat-directory ()
  "The folder mentions are relative to: the project's."
  (with-current-buffer (cline--log-buffer) default-directory))

;;;###autoload
(defun cline-mention-file (file)
  "Mention FILE in the chat's prompt area: its text goes with the prompt.
Interactively, the file is read, defaulting to the current buffer's."
  (interactive
   (list (read-file-name "Mention file: " (cline--chat-directory) nil t
                         (and buffer-file-name (file-relative-name buffer-file-name
                                                                   (cline--chat-directory))))))
  (cline--chat-insert-mention
   (file-relative-name (expand-file-name file) (cline--chat-directory)) nil))

;;;###autoload
(defun cline-mention-region (beg end)
  "Mention the lines BEG to END of this file in the chat's prompt area.
They are sent, as selected now, with the next prompt."
  (interactive
   (if (use-region-p) (list (region-beginning) (region-end))
     (user-error "Select the text to mention first")))
  (unless buffer-file-name (user-error "This buffer visits no file"))
  (let* ((l1 (line-number-at-pos beg))
         (l2 (line-number-at-pos (if (and (> end beg)
                                          (save-excursion (goto-char end) (bolp)))
                                     (1- end) end)))
         (lines (if (= l1 l2) (format "L%d" l1) (format "L%d-%d" l1 l2)))
         (token (concat (file-relative-name buffer-file-name (cline--chat-directory)) "#" lines))
         (text (buffer-substring-no-properties beg end)))
    (deactivate-mark)
    (cline--chat-insert-mention
     token (list :type "resource"
                 :resource (list :uri (concat (cline--uri buffer-file-name) "#" lines)
                                 :text text :mimeType "text/plain")))))


;;; Resuming, undoing, models

(defun cline--ago (stamp)
  "The RFC 3339 time STAMP as a time relative to now (\"5 min ago\").
A stamp that does not parse is shown as it is."
  (let ((time (ignore-errors (parse-iso8601-time-string stamp))))
    (if (not time)
        (or stamp "")
      (let ((s (max 0 (floor (float-time (time-subtract nil time))))))
        (cond ((< s 60) "just now")
              ((< s 3600) (format "%d min ago" (/ s 60)))
              ((< s 86400) (format "%d h ago" (/ s 3600)))
              ((< s (* 14 86400)) (format "%d d ago" (/ s 86400)))
              (t (format-time-string "%Y-%m-%d" time)))))))

(defun cline--session-label (x)
  "The completion candidate of the session/list entry X: its title (the
prompt that opened it, as typed), when it last changed, and its id."
  (format "%s  (%s)%s  [%s]"
          (string-trim (cline--visible (replace-regexp-in-string "\n" " " (or (plist-get x :title) "")) t))
          (cline--ago (plist-get x :updatedAt))
          (let ((pid (plist-get x :heldBy)))
            (if (and pid (not (eq pid :null)) (not (equal pid 0)))
                (format "  open in another cline-ls (pid %s)" pid)
              ""))
          (plist-get x :sessionId)))

;;;###autoload
(defun cline-resume (&optional session-id)
  "Resume an earlier session of this project (SESSION-ID, else chosen).
Its history is shown again in `*cline*' and the chat's prompts go to it."
  (interactive)
  (let* ((server (cline--server t))
         (root (cline--root server))
         (id (or session-id
                 (let* ((res (jsonrpc-request server :session/list (list :cwd root) :timeout 30))
                        (cands (mapcar (lambda (x) (cons (cline--session-label x)
                                                         (plist-get x :sessionId)))
                                       (append (plist-get res :sessions) nil))))
                   (unless cands (user-error "No earlier cline session in %s" root))
                   (cdr (assoc (completing-read "Resume cline session: " cands nil t) cands))))))
    (when (and (cline--live-session-p cline--session) (cline--session-busy cline--session))
      (user-error "A cline turn is running: wait for it or cancel it"))
    (cline--load-session server id)))

(defun cline--held-by (err)
  "The pid of the daemon that holds a session, from the error ERR of
opening it (-32002 with data {heldBy}), or nil."
  (let ((data (and (listp err) (plist-get err :data))))
    (and (equal (plist-get err :code) -32002) (listp data)
         (numberp (plist-get data :heldBy)) (plist-get data :heldBy))))

(defun cline--load-session (server id &optional then read-only note)
  "Open session ID of SERVER, show its history in `*cline*' and make it current.
THEN is called with it once loaded.  READ-ONLY, the id of a session
another daemon holds, marks this one as its read-only copy; NOTE is
written once the history is shown.  A session
another daemon holds is not opened: the user is told, and offered a
fork (a copy that goes on here) or a read-only view."
  (let ((s (cline--session-make :server server :id id :read-only read-only)))
    (setq cline--session s)
    ;; The transcript shows this session from its start, as the daemon replays it.
    (with-current-buffer (cline--log-buffer)
      (let ((inhibit-read-only t))
        (delete-region (point-min) cline--out))
      (clrhash cline--tool-lines)
      (setq cline--last-block nil))
    (cline--log-meta (format "[resuming session %s]" id))
    (when cline-display-session (cline--display-chat))
    (jsonrpc-async-request
     server :session/load (list :sessionId id :cwd (cline--root server) :mcpServers [])
     :success-fn (lambda (res)
                   (let ((modes (plist-get res :modes)))
                     (setf (cline--session-mode s) (plist-get modes :currentModeId)
                           (cline--session-modes s)
                           (mapcar (lambda (m) (plist-get m :id))
                                   (plist-get modes :availableModes))))
                   (when note (cline--log-meta note))
                   (cline--log-meta (format "[session %s resumed, mode %s%s]"
                                            id (cline--session-mode s)
                                            (if read-only (format "; a read-only copy of %s" read-only) "")))
                   (cline--status-changed)
                   (when then (funcall then s)))
     :error-fn (lambda (err)
                 (let ((pid (cline--held-by err)))
                   (if (not pid)
                       (cline--log-error "session/load" err)
                     (when (eq cline--session s) (setq cline--session nil))
                     (cline--log-meta (format "[session %s is open in another cline-ls (pid %s)]" id pid))
                     (run-at-time 0 nil #'cline--offer-fork server id pid then))))
     :timeout 60)))

(defun cline--offer-fork (server id pid &optional then)
  "Session ID is open in the cline-ls of PID: offer SERVER's fork of it or
a read-only view, then call THEN with the session opened."
  (let* ((fork "Fork it: go on here in a copy")
         (view "View it read-only")
         (leave "Leave it")
         (choice (condition-case nil
                     (completing-read
                      (format "Session %s is open in another cline-ls (pid %s), which alone writes it: " id pid)
                      (list fork view leave) nil t)
                   (quit leave))))
    (cond
     ((member choice (list fork view))
      (let ((res (jsonrpc-request server :cline/forkSession (list :sessionId id :atTurn 0) :timeout 30)))
        (cline--load-session server (plist-get res :sessionId) then
                             (and (equal choice view) id)
                             (format "[session %s is open in another cline-ls (pid %s); this is a copy of it, %s]"
                                     id pid (plist-get res :sessionId)))))
     (t (message "cline: session %s left to the cline-ls of pid %s" id pid)))))

;;;###autoload
(defun cline-fork (&optional turn)
  "Fork the current session up to its TURN and resume the fork.
Without TURN the fork holds the whole session; with a numeric prefix
argument, TURN is that number.  The daemon makes
the fork even when another editor holds the session open; the session
itself stays as it was."
  (interactive "P")
  (let* ((s (cline--current-session))
         (res (jsonrpc-request (cline--session-server s) :cline/forkSession
                               (list :sessionId (cline--session-id s)
                                     :atTurn (if turn (prefix-numeric-value turn) 0))
                               :timeout 30)))
    (cline-resume (plist-get res :sessionId))))

(defun cline--current-session ()
  "The current session, or an error saying there is none."
  (unless (cline--live-session-p cline--session)
    (user-error "No cline session"))
  cline--session)

(defun cline--checkpoint-list (s)
  "The checkpoints of session S, oldest first."
  (append (plist-get (jsonrpc-request (cline--session-server s) :cline/checkpoints
                                      (list :sessionId (cline--session-id s)) :timeout 30)
                     :checkpoints)
          nil))

(defun cline--checkpoint-name (cp)
  "How the checkpoint CP is named to the user: its title, or its time."
  (let ((title (plist-get cp :title)))
    (cline--visible (format "%S" (if (and title (not (string-empty-p title))) title
                                   (cline--ago (or (plist-get cp :time) "?"))))
                    t)))

(defun cline--restore (s cp scope)
  "Restore session S to checkpoint CP: SCOPE is files, conversation or both."
  (when (cline--session-busy s)
    (user-error "A cline turn is running: cancel it first"))
  (jsonrpc-async-request
   (cline--session-server s) :cline/restore
   (list :sessionId (cline--session-id s) :checkpointId (plist-get cp :checkpointId)
         :scope scope)
   :success-fn
   (lambda (res)
     (let ((restored (append (plist-get res :restored) nil))
           (conflicts (append (plist-get res :conflicts) nil)))
       (cline--log-meta
        (format "[restored to the checkpoint of %s (%s)%s%s]" (cline--checkpoint-name cp) scope
                (if restored
                    (concat ": " (mapconcat (lambda (p) (cline--display-path nil p)) restored ", "))
                  "")
                (if conflicts
                    (concat "; kept, changed since: "
                            (mapconcat (lambda (c) (format "%s (%s)"
                                                           (cline--display-path nil (plist-get c :path))
                                                           (plist-get c :reason)))
                                       conflicts ", "))
                  "")))
       (message "cline: restored to the checkpoint of %s" (cline--checkpoint-name cp))))
   :error-fn (lambda (err) (cline--log-error "cline/restore" err))
   :timeout 120))

;;;###autoload
(defun cline-undo-turn ()
  "Undo the last turn that changed files: its edits and its conversation.
The files go back to the checkpoint taken before the turn's first
change (a file you changed since is kept and named), and the turn
leaves the history the model sees."
  (interactive)
  (let* ((s (cline--current-session))
         (cps (cline--checkpoint-list s)))
    (unless cps (user-error "No turn of this session changed files yet"))
    (let* ((turn (apply #'max (mapcar (lambda (c) (plist-get c :turn)) cps)))
           (cp (cl-find turn cps :key (lambda (c) (plist-get c :turn)))))
      (when (y-or-n-p (format "Undo the last turn (%s, %s)? " (cline--checkpoint-name cp)
                              (mapconcat (lambda (p) (cline--display-path nil p))
                                         (plist-get cp :files) ", ")))
        (cline--restore s cp "both")))))

(defvar-local cline--checkpoints-session nil
  "The session `*cline-checkpoints*' lists.")

(defvar cline-checkpoints-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "RET") #'cline-checkpoint-preview)
    (define-key map "v" #'cline-checkpoint-preview)
    (define-key map "f" #'cline-checkpoint-restore-files)
    (define-key map "c" #'cline-checkpoint-restore-conversation)
    (define-key map "b" #'cline-checkpoint-restore-both)
    (define-key map "g" #'cline-checkpoints)
    (define-key map "?" #'describe-mode)
    map)
  "Keys of `*cline-checkpoints*'.")

(define-derived-mode cline-checkpoints-mode special-mode "Cline-Checkpoints"
  "The checkpoints of a cline session, oldest first.
On a line: \\[cline-checkpoint-preview] shows what restoring it would
change, \\[cline-checkpoint-restore-files] restores the files,
\\[cline-checkpoint-restore-conversation] the conversation,
\\[cline-checkpoint-restore-both] both.

\\{cline-checkpoints-mode-map}")

;;;###autoload
(defun cline-checkpoints ()
  "List the current session's checkpoints, to preview and restore them."
  (interactive)
  (let* ((s (cline--current-session))
         (cps (cline--checkpoint-list s)))
    (with-current-buffer (get-buffer-create "*cline-checkpoints*")
      (let ((inhibit-read-only t))
        (cline-checkpoints-mode)
        (setq cline--checkpoints-session s)
        (erase-buffer)
        (insert (substitute-command-keys
                 "Checkpoints (\\[cline-checkpoint-preview] preview, \\[cline-checkpoint-restore-files] restore files, \\[cline-checkpoint-restore-conversation] conversation, \\[cline-checkpoint-restore-both] both, ? help)\n"))
        (if (null cps) (insert "  (none yet: a checkpoint is taken before a turn's first change)\n"))
        (dolist (cp cps)
          (insert (propertize (format "  %s  (%s)  %s\n"
                                      (cline--visible (or (plist-get cp :title) "") t)
                                      (cline--ago (plist-get cp :time))
                                      (cline--visible (mapconcat (lambda (p) (cline--display-path nil p))
                                                                 (plist-get cp :files) " ")
                                                      t))
                              'cline-checkpoint cp)))
        (goto-char (point-min))
        (forward-line 1))
      (pop-to-buffer (current-buffer)))))

(defun cline--checkpoint-at-point ()
  "The checkpoint of the line at point."
  (or (get-text-property (line-beginning-position) 'cline-checkpoint)
      (user-error "No checkpoint on this line")))

(defun cline-checkpoint-preview ()
  "Show what restoring the checkpoint at point would change."
  (interactive)
  (let* ((cp (cline--checkpoint-at-point))
         (s cline--checkpoints-session)
         (res (jsonrpc-request (cline--session-server s) :cline/checkpointDiff
                               (list :sessionId (cline--session-id s)
                                     :checkpointId (plist-get cp :checkpointId))
                               :timeout 60))
         (files (append (plist-get res :files) nil)))
    (cline--display-aside
     (cline--fill-diff-buffer
      "*cline-checkpoint-diff*"
      (format "cline-ls: restoring the checkpoint of %s would change %d file%s"
              (cline--checkpoint-name cp) (length files) (if (= (length files) 1) "" "s"))
      (mapconcat (lambda (f) (format "%s (%s)\n%s" (cline--display-path nil (plist-get f :path))
                                     (plist-get f :status) (or (plist-get f :diff) "")))
                 files "\n")))))

(defun cline-checkpoint-restore-files ()
  "Restore the files of the checkpoint at point."
  (interactive)
  (cline--restore cline--checkpoints-session (cline--checkpoint-at-point) "files"))

(defun cline-checkpoint-restore-conversation ()
  "Rewind the conversation to the checkpoint at point; the files stay."
  (interactive)
  (cline--restore cline--checkpoints-session (cline--checkpoint-at-point) "conversation"))

(defun cline-checkpoint-restore-both ()
  "Restore the files and the conversation of the checkpoint at point."
  (interactive)
  (cline--restore cline--checkpoints-session (cline--checkpoint-at-point) "both"))

(defvar cline--model nil
  "The model chosen with `cline-set-model', sent over the settings' own.")

(defcustom cline-models nil
  "Models `cline-set-model' offers, e.g. (\"claude-sonnet-4-5\" \"gpt-5\")."
  :type '(repeat string))

;;;###autoload
(defun cline-set-model (model)
  "Use MODEL of the configured provider from now on.
The daemon applies it to every open session from its next request, the
current one included, and to the sessions opened later."
  (interactive (list (completing-read "Cline model: " cline-models)))
  (setq cline--model (unless (string-empty-p model) model))
  (dolist (server (cline--all-servers))
    (jsonrpc-notify server :workspace/didChangeConfiguration
                    (list :settings (or (cline--settings server)
                                        (list :provider (list :model model))))))
  (message "%s" (format "cline: %s from the next turn of this session on" model)))

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
    (let ((text (cline--visible text)))
      (insert (if face (propertize text 'face face) text) "\n"))
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
  "Write the user's prompt TEXT (\[cline-previous-prompt] takes it back)."
  (cline--appending
    (cline--block 'user)
    (insert (propertize (concat "> " text) 'face 'cline-user-face 'cline-prompt text) "\n")
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
  (message "cline: %s failed: %s" what (cline--visible (cline--error-text err))))

(defun cline--log-chunk (kind text)
  "Append the streamed TEXT to a block of KIND (agent or thought)."
  (cline--appending
    (cline--block kind)
    (let ((text (cline--visible text)))
      (insert (if (eq kind 'thought) (propertize text 'face 'cline-thought-face) text)))))

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
    (insert (propertize (cline--visible text t) 'face face))
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
        (insert (propertize (cline--visible title t) 'face 'cline-tool-face))
        (let ((te (point)))
          (insert (if (and kind (not (equal kind "other"))) (format " (%s)" (cline--visible kind t)) "") " [")
          (let ((sb (point)))
            (insert (propertize (cline--visible status t) 'face (cline--status-face status)))
            (let ((se (point)))
              (insert "]\n")
              (puthash (cline--tool-key sid id)
                       (list (copy-marker tb) (copy-marker te)
                             (copy-marker sb) (copy-marker se))
                       cline--tool-lines)))))
      (setq cline--last-block 'tool))))

(defun cline--content-text (content &optional skip)
  "The text of tool call CONTENT items, but for the texts in the list SKIP."
  (mapconcat #'identity
             (cl-remove-if (lambda (text) (member text skip))
                           (mapcar (lambda (item)
                                     (let ((inner (plist-get item :content)))
                                       (or (and (listp inner) (plist-get inner :text)) "")))
                                   content))
             "\n"))

(defvar-local cline--tool-notes nil
  "Hash from a tool call's key to the notes its card showed already.")

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
    (let* ((key (cline--tool-key sid id))
           (notes (with-current-buffer buf
                    (or cline--tool-notes
                        (setq cline--tool-notes (make-hash-table :test #'equal)))))
           (noted (gethash key notes)))
      ;; Content with no status is a note for the card (what the user's
      ;; hooks did to the call): shown at once, even for a call whose
      ;; result is not shown, and not again with the result.
      (when (and (null status) (plist-get u :content))
        (let ((text (string-trim (cline--content-text (plist-get u :content) noted))))
          (puthash key (append noted (mapcar (lambda (item) (plist-get (plist-get item :content) :text))
                                             (plist-get u :content)))
                   notes)
          (unless (string-empty-p text)
            (cline--log-line 'tool-output
                             (mapconcat (lambda (l) (concat "      " l)) (split-string text "\n") "\n")
                             'cline-tool-face))))
      (when (equal status "failed")
        (let ((text (string-trim (cline--content-text (plist-get u :content) noted))))
          (unless (string-empty-p text)
            (let ((lines (split-string text "\n")))
              (cline--log-line 'tool-output
                               (mapconcat (lambda (l) (concat "      " l))
                                          (seq-take lines 8) "\n")
                               'cline-failed-face))))))))

(defun cline--log-plan (entries)
  "Write the plan ENTRIES."
  (cline--appending
    (cline--block 'plan)
    (insert (propertize "Plan:" 'face 'bold) "\n")
    (mapc (lambda (e)
            (insert (format "  [%s] %s\n"
                            (pcase (plist-get e :status)
                              ("completed" "x") ("in_progress" "~") (_ " "))
                            (cline--visible (plist-get e :content) t))))
          entries)
    (setq cline--last-block 'plan)))

(defun cline--on-update (_server sid u)
  "Handle the session/update U of session SID from SERVER."
  (let ((kind (plist-get u :sessionUpdate))
        (s (and cline--session (equal (cline--session-id cline--session) sid)
                cline--session)))
    (when (and s (member kind '("agent_message_chunk" "agent_thought_chunk" "tool_call" "plan")))
      (setf (cline--session-waiting s) nil))
    (pcase kind
      ("agent_message_chunk"
       (cline--log-chunk 'agent (or (plist-get (plist-get u :content) :text) "")))
      ("agent_thought_chunk"
       (cline--log-chunk 'thought (or (plist-get (plist-get u :content) :text) "")))
      ("user_message_chunk"
       ;; A loaded session's history.
       (cline--log-user (or (plist-get (plist-get u :content) :text) "")))
      ("tool_call" (cline--log-tool-call sid u))
      ("tool_call_update"
       (cline--log-tool-update sid u)
       ;; A finished call's result goes back to the model: wait for it.
       (when (and s (cline--session-busy s)
                  (member (plist-get u :status) '("completed" "failed")))
         (setf (cline--session-waiting s) t)))
      ("plan" (cline--log-plan (plist-get u :entries)))
      ("current_mode_update"
       (let ((mode (plist-get u :currentModeId)))
         (when s (setf (cline--session-mode s) mode))
         (cline--log-meta (format "[mode: %s]" mode))))
      ("usage_update" (when s (setf (cline--session-usage s) u)))
      ("compaction"
       ;; The older turns were replaced to fit the context window; the
       ;; session file keeps them.
       (let ((file (plist-get u :historyFile)))
         (cline--log-meta (format "[context compacted: about %s -> %s tokens%s]"
                                  (plist-get u :before) (plist-get u :after)
                                  (if (and (stringp file) (not (string-empty-p file)))
                                      (concat "; the replaced turns stay in " file)
                                    "")))))
      (_ nil))
    (cline--status-changed)))

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

(defun cline--unfenced (text)
  "TEXT without the lines of Markdown fences (\"```diff\", \"```\") around
its diffs: no line of a diff is one."
  (and text (replace-regexp-in-string "^```[[:alnum:]-]*\n?" "" text)))

(defun cline--fill-diff-buffer (name header text)
  "Fill buffer NAME with HEADER and the diff TEXT, and return it."
  (setq text (cline--unfenced text))
  (with-current-buffer (get-buffer-create name)
    (let ((inhibit-read-only t))
      (erase-buffer)
      (if (cline--unified-p text) (diff-mode) (cline-diff-mode))
      (insert (cline--visible header) "\n")
      (insert (cline--visible (or text "")))
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

(defun cline--display-aside (buf)
  "Display BUF in a window of its own, split off the frame's largest window.
The selected window and the user's other windows keep their buffers
\(a window is split even in a small terminal); quitting BUF's window
deletes it and gives its lines back."
  (display-buffer buf `((display-buffer-reuse-window display-buffer-in-direction
                                                     display-buffer-pop-up-window)
                        (inhibit-same-window . t)
                        (direction . below)
                        (window . ,(get-largest-window nil t))
                        (window-height . cline--fit-window))))

(defun cline--fit-window (window)
  "Make WINDOW as tall as its text, up to half its frame."
  (fit-window-to-buffer window (/ (frame-height (window-frame window)) 2)))

(defun cline--display-approval (buf)
  "Display the approval BUF along the bottom of the frame, as tall as its
text, so that the whole diff shows beside the windows the user has.
When it would not fit so (a small terminal), it takes the place of the
chat's window, or of the largest other one when the chat is selected,
until it is answered: never the selected window, where keys typed would
answer it.  A diff taller than that scrolls (SPC, DEL in its window)."
  (let* ((chat (let ((w (get-buffer-window "*cline*")))
                 (if (and w (not (eq w (selected-window)))) w
                   (get-largest-window nil nil t))))
         (needed (1+ (with-current-buffer buf (count-lines (point-min) (point-max)))))
         (others (length (window-list nil 'no-minibuf))))
    (if (or (get-buffer-window buf) (<= needed (cline--room (selected-frame) others))
            (not chat) (eq chat (selected-window)))
        ;; It fits, or there is only the selected window to give.
        (display-buffer buf `((display-buffer-reuse-window display-buffer-at-bottom)
                              (inhibit-same-window . t)
                              (window-height . cline--fit-approval)))
      (let ((w (window--display-buffer buf chat 'reuse)))
        (when (window-live-p w)
          (fit-window-to-buffer w (cline--room (selected-frame) (1- others))))
        w))))

(defun cline--room (frame others)
  "The lines a window of FRAME may take, leaving OTHERS windows their
`window-min-height' (4 at least) each."
  (- (window-total-height (frame-root-window frame))
     (* others (max window-min-height 4))))

(defun cline--fit-approval (window)
  "Make the approval's WINDOW as tall as its text, up to what leaves each
other window of its frame its least height, or a third of the frame
when that is less."
  (let ((frame (window-frame window)))
    (fit-window-to-buffer window (max (cline--room frame (1- (length (window-list frame 'no-minibuf))))
                                      (/ (frame-height frame) 3)))))

(defun cline--show-diff (path added removed diff)
  "Show DIFF of PATH (ADDED and REMOVED lines) in `*cline-diff*'."
  (cline--display-aside
   (cline--fill-diff-buffer
    "*cline-diff*"
    (format "cline-ls: edited %s (+%s -%s)" path added removed)
    diff)))

(defvar cline--last-edit nil
  "(FILE . TEXT-BEFORE) of the agent's last edit of an open buffer.")

(defun cline-review-edit (file before)
  "Review the agent's edit of FILE hunk by hunk in Ediff.
BEFORE is the buffer's text before the edit, shown read-only as A;
B is your buffer, with the edit.  In the Ediff control window, n and
p go from hunk to hunk, a on one takes it back (copies A's text into
your buffer), q ends the review; what you keep stays unsaved."
  (let ((b (or (find-buffer-visiting file)
               (user-error "%s is no longer open" (abbreviate-file-name file))))
        (a (get-buffer-create (format "*cline before %s*" (file-name-nondirectory file)))))
    (with-current-buffer a
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert before))
      (set-buffer-modified-p nil)
      (setq buffer-read-only t))
    (cline--ediff a b (lambda () (kill-buffer a)))))

(defun cline--ediff (a b done)
  "Compare the buffers A and B in Ediff; when it is quit, call DONE.
The windows are then as they were before, and DONE runs after Ediff
has cleaned up, so no buffer of the comparison is left on screen."
  (let ((config (current-window-configuration)))
    (ediff-buffers a b
                   (list (lambda ()
                           (add-hook 'ediff-quit-hook
                                     (lambda ()
                                       (run-at-time 0 nil
                                                    (lambda ()
                                                      (set-window-configuration config)
                                                      (funcall done))))
                                     nil t))))))

(defun cline-review-last-edit ()
  "Review the agent's last edit of an open buffer hunk by hunk.
See `cline-review-edit'."
  (interactive)
  (unless cline--last-edit (user-error "The agent has edited no open buffer yet"))
  (cline-review-edit (car cline--last-edit) (cdr cline--last-edit)))

(defvar cline--previewed (make-hash-table :test #'equal)
  "Tool calls whose diff an approval showed: \"SESSION/TOOLCALL\" to t.")

(defun cline--diff-lines (diff)
  "The changed lines of the compact DIFF, without its title and fence."
  (cl-remove-if (lambda (l) (or (string-prefix-p "```" l) (string-prefix-p "Edited " l)))
                (split-string (string-trim-right diff) "\n")))

(defconst cline--inline-diff-lines 12
  "Lines of an edit's diff written into `*cline*'; the link shows it all.")

(defun cline--display-path (server file)
  "FILE relative to SERVER's project root (else the chat's folder) when inside it."
  (let ((root (file-name-as-directory (if server (cline--root server) (cline--chat-directory)))))
    (if (and file (string-prefix-p root (expand-file-name file)))
        (file-relative-name file root)
      (abbreviate-file-name (or file "?")))))

(cl-defmethod eglot-handle-notification
  ((server cline-eglot-server) (_method (eql 'cline/diff))
   &key sessionId toolCallId uri diff added removed &allow-other-keys)
  "Note an edit the agent applied in `*cline*', its diff shown once.
An edit whose approval showed the diff gets a link to it; any other
gets its first lines written under the link."
  (let* ((path (cline--display-path server (cline--path uri)))
         (key (cline--tool-key (or sessionId "") (or toolCallId "")))
         (previewed (gethash key cline--previewed)))
    (remhash key cline--previewed)
    (when (and cline-display-diffs (not previewed))
      (cline--show-diff path added removed diff))
    (cline--appending
      (cline--block 'diff)
      (insert "  ")
      (insert-text-button (format "diff %s +%s -%s" (cline--visible path t) added removed)
                          'action (lambda (_) (cline--show-diff path added removed diff))
                          'follow-link t
                          'help-echo "Show this diff")
      (when-let ((file (expand-file-name (cline--path uri)))
                 (before (gethash file cline--before)))
        (setq cline--last-edit (cons file before))
        (insert "  ")
        (insert-text-button "review"
                            'action (lambda (_) (cline-review-edit file before))
                            'follow-link t
                            'help-echo "Take back hunks of this edit in Ediff"))
      (insert "\n")
      (unless (or previewed cline-display-diffs (null diff))
        (let ((lines (cline--diff-lines diff)))
          (dolist (l (seq-take lines cline--inline-diff-lines))
            (insert (propertize (concat "    " (cline--visible l t) "\n") 'face
                                (cond ((string-prefix-p "+" l) 'diff-added)
                                      ((string-prefix-p "-" l) 'diff-removed)
                                      (t 'cline-meta-face)))))
          (when (> (length lines) cline--inline-diff-lines)
            (insert (propertize (format "    … %d more lines: RET on the link\n"
                                        (- (length lines) cline--inline-diff-lines))
                                'face 'cline-meta-face)))))
      (setq cline--last-block 'diff))))


;;; Approvals

(cl-defmethod eglot-handle-notification
  ((server cline-eglot-server) (_method (eql 'cline/approvalRequest))
   &rest params)
  "Queue an approval request; it is asked from a timer, outside the process filter."
  (let* ((call (plist-get params :toolCall))
         (title (plist-get call :title)))
    (when (plist-get params :diff)
      (puthash (cline--tool-key (plist-get params :sessionId) (plist-get call :toolCallId))
               t cline--previewed))
    (cline--log-line 'approval (format "  ? approval needed: %s" (cline--visible title t)) 'cline-pending-face))
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
         ;; The command is shown exactly, each line escaped, with a
         ;; note when it held what would not have shown.
         (lines (and command (split-string command "\n")))
         (shown (mapcar (lambda (l) (cline--visible l t)) lines))
         (header (concat (format "cline-ls asks to run: %s" (cline--visible (plist-get call :title) t))
                         (mapconcat (lambda (l) (concat "\n$ " l)) shown "")
                         (if (equal shown lines) ""
                           "\n(the command holds characters that do not show; they are written above as \\x.., \\u.., \\t)"))))
    (cline--fill-diff-buffer
     "*cline-approval*" header
     (or (and diff (cline--approval-diff diff))
         (and (not command)
              (let ((raw (plist-get call :rawInput)))
                (and raw (json-encode raw))))))))

(defun cline--approval-diff (diff)
  "DIFF as an approval shows it: a diff of one file loses its ---/+++
lines, which the title says already, so that more of it fits."
  (let ((diff (cline--unfenced diff)))
    (if (and (string-match "\\`--- [^\n]*\n\\+\\+\\+ [^\n]*\n" diff)
             (not (string-match-p "^--- .*\n\\+\\+\\+ " (substring diff (match-end 0)))))
        (substring diff (match-end 0))
      diff)))

(defvar cline-approval-keys-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map "a" #'cline-approval-allow)
    (define-key map "A" #'cline-approval-allow-always)
    (define-key map "r" #'cline-approval-reject)
    (define-key map "R" #'cline-approval-reject-with-feedback)
    (define-key map "q" #'cline-approval-later)
    (define-key map "h" #'cline-approval-pick-hunks)
    (define-key map "?" #'describe-mode)
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
        (insert "\n[a] allow  [A] always  [r] reject  [R] reject, say why"
                (if (plist-get req :diff) "  [h] hunks" "")
                "  [q] later  [?] help")
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
    (cline--display-approval buf)
    (cline--status-changed)
    (message "cline: approval needed: %s (M-x cline-approve, then a/A/r/R)"
             (cline--visible (or (plist-get (plist-get req :toolCall) :title) "a tool") t))))

(defun cline-approve ()
  "Select the window of the waiting approval, to answer it with its keys."
  (interactive)
  (let ((buf (get-buffer "*cline-approval*")))
    (unless (and buf (buffer-local-value 'cline--approval-req buf))
      (user-error "No cline approval is waiting"))
    (pop-to-buffer buf '((display-buffer-reuse-window display-buffer-pop-up-window)))))

(defun cline--approval-key (kind &optional feedback-p given)
  "Answer the approval of the current buffer with an option of KIND.
With FEEDBACK-P, ask for feedback for the agent first; GIVEN is
feedback to send without asking."
  (let ((req cline--approval-req))
    (unless req (user-error "This approval was answered already"))
    (let* ((options (append (plist-get req :options) nil))
           ;; Else the other option of the same answer: r declines a
           ;; folder's trust question, which offers only "Don't trust"
           ;; and "Trust"; never a remembered allow for a, though.
           (other (cdr (assoc kind '(("allow_always" . "allow_once") ("reject_once" . "reject_always")
                                     ("reject_always" . "reject_once")))))
           (opt (or (cl-find kind options :key (lambda (o) (plist-get o :kind)) :test #'equal)
                    (and other (cl-find other options :key (lambda (o) (plist-get o :kind)) :test #'equal))
                    (list :optionId kind :name kind :kind kind)))
           (feedback (or given
                         (and feedback-p
                              (let ((fb (string-trim (read-string "Feedback for the agent (RET for none): "))))
                                (unless (string-empty-p fb) fb))))))
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

(defun cline--parse-unified (diff)
  "The hunks of DIFF, a unified diff of one file, or nil when it is not.
Each hunk is (OLD . LINES): OLD its first old line, LINES its lines as
\" context\", \"-old\" and \"+new\", read by the counts of its header (an
old line may itself start with \"--\")."
  (let ((lines (split-string diff "\n")) (files 0) hunks)
    (catch 'bad
      (while lines
        (let ((l (pop lines)))
          (cond
           ((string-prefix-p "--- " l) (setq files (1+ files)))
           ((string-match "\\`@@ -\\([0-9]+\\)\\(?:,\\([0-9]+\\)\\)? \\+[0-9]+\\(?:,\\([0-9]+\\)\\)? @@" l)
            (let ((old (string-to-number (match-string 1 l)))
                  (oc (if (match-string 2 l) (string-to-number (match-string 2 l)) 1))
                  (nc (if (match-string 3 l) (string-to-number (match-string 3 l)) 1))
                  body)
              (while (or (> oc 0) (> nc 0))
                (let ((x (or (pop lines) (throw 'bad nil))))
                  (pcase (and (> (length x) 0) (aref x 0))
                    (?\\ nil)           ; "\ No newline at end of file"
                    (?+ (setq nc (1- nc)) (push x body))
                    (?- (setq oc (1- oc)) (push x body))
                    (_ (setq oc (1- oc) nc (1- nc))
                       (push (concat " " (if (> (length x) 0) (substring x 1) "")) body)))))
              (push (cons old (nreverse body)) hunks))))))
      (and (= files 1) hunks (nreverse hunks)))))

(defun cline--apply-hunks (text hunks)
  "TEXT with HUNKS (`cline--parse-unified') applied, or nil when TEXT
no longer holds the lines they change."
  (let ((old (vconcat (split-string text "\n"))) (pos 1) out)
    (catch 'stale
      (dolist (h hunks)
        (while (< pos (max (car h) 1))
          (push (aref old (1- pos)) out)
          (setq pos (1+ pos)))
        (dolist (l (cdr h))
          (let ((s (substring l 1)))
            (if (eq (aref l 0) ?+)
                (push s out)
              (unless (and (<= pos (length old)) (equal (aref old (1- pos)) s))
                (throw 'stale nil))
              (when (eq (aref l 0) ?\s) (push s out))
              (setq pos (1+ pos))))))
      (while (<= pos (length old))
        (push (aref old (1- pos)) out)
        (setq pos (1+ pos)))
      (mapconcat #'identity (nreverse out) "\n"))))

(defun cline--buffer-text (buf)
  "The whole text of BUF."
  (with-current-buffer buf (save-restriction (widen) (buffer-substring-no-properties (point-min) (point-max)))))

(defun cline--set-buffer-text (buf text)
  "Make BUF's text TEXT, changing only what differs."
  (with-temp-buffer
    (insert text)
    (let ((src (current-buffer)))
      (with-current-buffer buf
        (save-restriction (widen) (replace-buffer-contents src))))))

(defun cline--partial-feedback (path before now)
  "What the agent is told when the user took some hunks of its edit of
PATH by hand: the change from BEFORE to NOW, the file's text."
  (require 'diff)
  (let ((a (generate-new-buffer " *cline before*"))
        (b (generate-new-buffer " *cline now*")))
    (unwind-protect
        (progn
          (with-current-buffer a (insert before))
          (with-current-buffer b (insert now))
          (let ((out (with-current-buffer (diff-no-select a b "-u" t (generate-new-buffer " *cline diff*"))
                       (prog1 (buffer-string) (kill-buffer)))))
            (concat "The user applied part of this edit by hand, hunk by hunk; " path
                    " now holds exactly these changes from before your edit (do not apply"
                    " them again; the rest was not wanted):\n--- a/" path "\n+++ b/" path "\n"
                    (let ((start (string-match "^@@" out))
                          (end (string-match "\n+Diff finished" out)))
                      (string-trim-right (if start (substring out start end) out)))
                    "\n")))
      (kill-buffer a)
      (kill-buffer b))))

(defun cline-approval-pick-hunks ()
  "Choose which hunks of the edit shown to take, in Ediff, before it applies.
A is the proposal (read-only), B your buffer as it is: in the Ediff
control window, n and p go from hunk to hunk, a takes A's hunk into
your buffer, q ends.  Taking every hunk allows the edit; taking none
rejects it; taking some keeps them in your buffer (unsaved) and rejects
the edit, telling the agent exactly what the file now holds."
  (interactive)
  (let* ((req (or cline--approval-req (user-error "This approval was answered already")))
         (diff (plist-get req :diff))
         (hunks (and diff (cline--parse-unified (cline--unfenced diff))))
         (loc (car (append (plist-get (plist-get req :toolCall) :locations) nil)))
         (file (plist-get loc :path)))
    (unless hunks
      (user-error "This edit is not one file's change: answer it whole"))
    (unless (and (stringp file) (file-regular-p file))
      (user-error "This edit makes a new file: answer it whole"))
    (let* ((buf (find-file-noselect file))
           (before (cline--buffer-text buf))
           (proposed (or (cline--apply-hunks before hunks)
                         (user-error "%s changed since the edit was proposed: answer it whole"
                                     (file-name-nondirectory file))))
           (path (cline--display-path nil file))
           (a (get-buffer-create (format "*cline proposal %s*" (file-name-nondirectory file)))))
      (with-current-buffer a
        (let ((inhibit-read-only t))
          (erase-buffer)
          (insert proposed))
        (set-buffer-modified-p nil)
        (setq buffer-read-only t))
      (cline--ediff a buf (lambda ()
                            (kill-buffer a)
                            (cline--hunks-chosen req path buf before proposed))))))

(defun cline--hunks-chosen (req path buf before proposed)
  "Answer REQ from what the user took of its edit of PATH into BUF,
whose text was BEFORE and would be PROPOSED with every hunk."
  (let ((now (cline--buffer-text buf))
        (abuf (get-buffer "*cline-approval*")))
    (when (plist-get req :server)
      ;; The daemon sees the hunks taken before the answer, not after
      ;; Eglot's idle delay.
      (cline--flush-changes (plist-get req :server)))
    (if (not (and abuf (eq (buffer-local-value 'cline--approval-req abuf) req)))
        (message "cline: the approval was answered meanwhile; %s stays as you left it" path)
      (with-current-buffer abuf
        (cond
         ((equal now proposed)
          ;; Every hunk: the daemon applies its edit to the text it was
          ;; made for, as for a plain allow.
          (cline--set-buffer-text buf before)
          (cline--flush-changes (plist-get req :server))
          (cline--approval-key "allow_once"))
         ((equal now before) (cline--approval-key "reject_once"))
         (t (cline--approval-key "reject_once" nil (cline--partial-feedback path before now))))))))

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
  (cline--status-changed)
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
     (let ((kind (if (y-or-n-p (format "cline: allow %s? " (cline--visible title t)))
                     "allow_once" "reject_once")))
       (or (cl-find kind options :key (lambda (o) (plist-get o :kind)) :test #'equal)
           (list :optionId kind :name kind :kind kind))))
    (_
     (let* ((names (mapcar (lambda (o) (cline--visible (plist-get o :name) t)) options))
            ;; No default: RET typed ahead must not allow.
            (choice (completing-read (format "cline: %s: " (cline--visible title t)) names nil t)))
       (cl-find choice options :key (lambda (o) (cline--visible (plist-get o :name) t)) :test #'equal)))))

(defun cline--ask-approval (req)
  "Ask the user about approval request REQ and send the answer."
  (let* ((call (plist-get req :toolCall))
         (title (or (plist-get call :title) "a tool"))
         (options (append (plist-get req :options) nil))
         (buf (cline--approval-buffer req))
         (win (cline--display-aside buf))
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
  ((_server cline-eglot-server) (_method (eql 'window/showDocument))
   &key uri external takeFocus &allow-other-keys)
  "Show the document at URI: in the browser when EXTERNAL (an MCP
server's sign-in page, through `browse-url'), else in a buffer, selected
when TAKEFOCUS.  An address that cannot be opened is shown in a message,
to open by hand."
  (if (eq external t)
      (condition-case err
          (progn (browse-url uri) (list :success t))
        (error
         (message "cline: open this address in your browser: %s (%s)" uri (error-message-string err))
         (list :success :json-false)))
    (let* ((path (url-unhex-string (string-remove-prefix "file://" uri)))
           (buf (and (file-readable-p path) (find-file-noselect path))))
      (cond ((not buf) (list :success :json-false))
            ((eq takeFocus t) (pop-to-buffer buf) (list :success t))
            (t (display-buffer buf) (list :success t))))))

(cl-defmethod eglot-handle-request
  ((_server cline-eglot-server) (_method (eql 'cline/askQuestion))
   &key question options &allow-other-keys)
  "Ask the agent's QUESTION, offering OPTIONS; a quit answers null."
  (cline--log-line 'question (format "  ? %s" question) 'cline-pending-face)
  ;; The choices are shown visibly; the answer is the option as sent.
  (let* ((choices (mapcar (lambda (o) (cons (cline--visible o t) o)) (append options nil)))
         (prompt (format "cline asks: %s " (cline--visible question)))
         (answer (condition-case nil
                     (if choices
                         (let ((picked (completing-read prompt (mapcar #'car choices))))
                           (or (cdr (assoc picked choices)) picked))
                       (read-string prompt))
                   (quit nil))))
    (when (and answer (string-empty-p answer)) (setq answer nil))
    (cline--log-line 'question (format "    -> %s" (or answer "(no answer)"))
                     'cline-meta-face)
    (list :answer answer)))

(provide 'cline)
;;; cline.el ends here
