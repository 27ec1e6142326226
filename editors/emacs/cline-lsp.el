;;; cline-lsp.el --- The editor's language servers as cline-ls tools  -*- lexical-binding: t; -*-

;; This file is not part of GNU Emacs.

;;; Commentary:

;; cline-ls offers the model find_references, go_to_definition,
;; document_symbols and rename_symbol when the editor declares
;; `experimental.cline.lsp' and answers `cline/lspRequest' (PROTOCOL.md
;; §11).  In Emacs the answers come from the language servers Eglot
;; already runs for the project (gopls, pyright, ...): no second copy of
;; them is started for the agent.
;;
;; Eglot gives a buffer to one server only, so a Go buffer that gopls
;; manages is not cline-ls's.  For the agent to read those buffers'
;; unsaved text and for a rename to land in them, this file also shares
;; them with cline-ls: didOpen, didChange (the whole text, with the
;; version Eglot gives the buffer, so that cline-ls's versioned edits
;; match it) and didClose, sent to the project's cline-ls beside Eglot's
;; own traffic to their server.
;;
;; What is decided here:
;; - the capability lists what the project's other Eglot servers offer
;;   when cline-ls connects; a server started later is used for requests
;;   but its methods are offered from cline-ls's next connection on;
;; - a request about a file no buffer visits visits it, and lets it go
;;   again after the answer, only when a running Eglot server manages
;;   files of its mode in its project; no language server is started for
;;   the agent;
;; - positions are passed as they come: the request is refused when
;;   cline-ls and the language server count columns differently;
;; - lsp-mode is not supported.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'jsonrpc)
(require 'eglot)

(declare-function cline-eglot-server-p "cline")
(defvar cline-major-modes)

(defgroup cline-lsp nil
  "The editor's language servers as cline-ls tools."
  :group 'cline
  :prefix "cline-lsp-")

(defcustom cline-lsp-share-buffers t
  "When non-nil, buffers another Eglot server manages are shared with cline-ls.
The agent then reads their unsaved text and its edits, renames
included, land in them; when nil it sees those files on disk."
  :type 'boolean)

(defcustom cline-lsp-timeout 30
  "Seconds a request to the language server may take: the daemon waits 30."
  :type 'number)

(defconst cline-lsp--methods
  '(("references" "textDocument/references" :referencesProvider)
    ("definition" "textDocument/definition" :definitionProvider)
    ("rename" "textDocument/rename" :renameProvider)
    ("documentSymbols" "textDocument/documentSymbol" :documentSymbolProvider))
  "The capability's names, the LSP method each stands for and the
server capability that says a server answers it.")

(defun cline-lsp--cline-p (server)
  "Non-nil when SERVER is a cline-ls connection."
  (and server (fboundp 'cline-eglot-server-p) (cline-eglot-server-p server)))

(defun cline-lsp--other-servers (project)
  "PROJECT's live Eglot servers that are not cline-ls."
  (cl-remove-if (lambda (s) (or (cline-lsp--cline-p s) (not (jsonrpc-running-p s))))
                (gethash project eglot--servers-by-project)))

(defun cline-lsp--cline-server (project)
  "PROJECT's live cline-ls server, or nil."
  (cl-find-if (lambda (s) (and (cline-lsp--cline-p s) (jsonrpc-running-p s)))
              (gethash project eglot--servers-by-project)))

(defun cline-lsp--offers-p (server provider)
  "Non-nil when SERVER's capabilities hold PROVIDER, not false."
  (let ((v (plist-member (eglot--capabilities server) provider)))
    (and v (cadr v) (not (eq (cadr v) :json-false)))))

(defvar cline-lsp--declared (make-hash-table :test #'eq :weakness 'key)
  "Map from a cline-ls server to the names it was declared.")

(defun cline-lsp--names (servers)
  "The capability's names that one of SERVERS answers."
  (cl-loop for (name _method provider) in cline-lsp--methods
           when (cl-some (lambda (s) (cline-lsp--offers-p s provider)) servers)
           collect name))

(defun cline-lsp-capability (server)
  "The `experimental.cline.lsp' names cline-ls SERVER is to declare:
those the other Eglot servers of its project answer, or nil."
  (let ((names (cline-lsp--names (cline-lsp--other-servers (eglot--project server)))))
    (puthash server names cline-lsp--declared)
    (and names (vconcat names))))

(defun cline-lsp--missing (server)
  "What the language server SERVER answers that its project's cline-ls
was not declared, or nil (also when no cline-ls runs there)."
  (when-let ((cline (cline-lsp--cline-server (eglot--project server))))
    (let ((declared (gethash cline cline-lsp--declared)))
      (cl-remove-if (lambda (name) (member name declared)) (cline-lsp--names (list server))))))

(defun cline-lsp--encoding (server)
  "How SERVER counts columns: the encoding it chose, else UTF-16."
  (or (plist-get (eglot--capabilities server) :positionEncoding) "utf-16"))

(defun cline-lsp--fail (code fmt &rest args)
  "Answer the request with the JSON-RPC error CODE, its message FMT of ARGS."
  (jsonrpc-error :code code :message (apply #'format-message fmt args)))


;;; Sharing the other servers' buffers with cline-ls

(defvar-local cline-lsp--mirror nil
  "The cline-ls server this buffer is shared with, or nil.")

(defvar-local cline-lsp--mirror-timer nil
  "The pending didChange to `cline-lsp--mirror', if any.")

(defvar-local cline-lsp--mirror-sent nil
  "The buffer version last sent to `cline-lsp--mirror'.")

(defvar cline-lsp--transient nil
  "Non-nil while a file is visited for one request only: it is not shared.")

(defun cline-lsp--shareable-p ()
  "Non-nil when the current buffer is to be shared with its project's cline-ls."
  (and cline-lsp-share-buffers (not cline-lsp--transient)
       buffer-file-name (bound-and-true-p eglot--managed-mode)
       (let ((s (eglot-current-server)))
         (and s (not (cline-lsp--cline-p s))))
       (or (not (boundp 'cline-major-modes))
           (apply #'derived-mode-p cline-major-modes))))

(defun cline-lsp--share ()
  "Share the current buffer with its project's cline-ls, when there is one."
  (when-let ((cline (and (not cline-lsp--mirror) (cline-lsp--shareable-p)
                         (cline-lsp--cline-server (eglot--current-project)))))
    (setq cline-lsp--mirror cline
          cline-lsp--mirror-sent eglot--versioned-identifier)
    (add-hook 'after-change-functions #'cline-lsp--after-change t t)
    (add-hook 'after-revert-hook #'cline-lsp--after-change t t)
    (add-hook 'kill-buffer-hook #'cline-lsp--unshare nil t)
    (jsonrpc-notify cline :textDocument/didOpen
                    (list :textDocument (eglot--TextDocumentItem)))))

(defun cline-lsp--unshare ()
  "Stop sharing the current buffer with cline-ls."
  (when-let ((cline cline-lsp--mirror))
    (when cline-lsp--mirror-timer (cancel-timer cline-lsp--mirror-timer))
    (setq cline-lsp--mirror nil cline-lsp--mirror-timer nil)
    (remove-hook 'after-change-functions #'cline-lsp--after-change t)
    (remove-hook 'after-revert-hook #'cline-lsp--after-change t)
    (remove-hook 'kill-buffer-hook #'cline-lsp--unshare t)
    (when (jsonrpc-running-p cline)
      (jsonrpc-notify cline :textDocument/didClose
                      (list :textDocument (eglot--TextDocumentIdentifier))))))

(defun cline-lsp-shared-server ()
  "The live cline-ls server the current buffer is shared with, or nil."
  (and cline-lsp--mirror (jsonrpc-running-p cline-lsp--mirror) cline-lsp--mirror))

(defun cline-lsp--send-change ()
  "Send cline-ls the buffer's text, when it changed since the last send."
  (when-let ((cline cline-lsp--mirror))
    (when cline-lsp--mirror-timer (cancel-timer cline-lsp--mirror-timer))
    (setq cline-lsp--mirror-timer nil)
    (cond
     ((not (jsonrpc-running-p cline)) (cline-lsp--unshare))
     ((not (equal cline-lsp--mirror-sent eglot--versioned-identifier))
      (setq cline-lsp--mirror-sent eglot--versioned-identifier)
      (jsonrpc-notify cline :textDocument/didChange
                      (list :textDocument (eglot--VersionedTextDocumentIdentifier)
                            :contentChanges
                            (vector (list :text (save-restriction
                                                  (widen)
                                                  (buffer-substring-no-properties
                                                   (point-min) (point-max)))))))))))

(defun cline-lsp--after-change (&rest _)
  "Send the change once Emacs is idle, as Eglot sends its own.
The whole text goes: the two servers may count columns differently,
and a change is rarely sent twice the size of the file."
  (when (and cline-lsp--mirror (not cline-lsp--mirror-timer))
    (let ((buf (current-buffer)))
      (setq cline-lsp--mirror-timer
            (run-with-idle-timer (if (boundp 'eglot-send-changes-idle-time)
                                     eglot-send-changes-idle-time
                                   0.5)
                                 nil
                                 (lambda ()
                                   (when (buffer-live-p buf)
                                     (with-current-buffer buf
                                       (cline-lsp--send-change)))))))))

(defun cline-lsp--flush (&optional cline)
  "Send every shared buffer's pending change now (only CLINE's, if given)."
  (dolist (buf (buffer-list))
    (with-current-buffer buf
      (when (and cline-lsp--mirror (or (null cline) (eq cline cline-lsp--mirror)))
        (cline-lsp--send-change)))))

(defun cline-lsp--managed-mode-changed ()
  "Share a buffer Eglot now manages with another server, or stop sharing."
  (if (bound-and-true-p eglot--managed-mode)
      (cline-lsp--share)
    (cline-lsp--unshare)))

(defun cline-lsp--connected (server)
  "When cline-ls SERVER connects, share the buffers the project's other
servers manage.  When another server connects after cline-ls, say how
the agent gets what it answers: a capability is declared on connecting."
  (unless (cline-lsp--cline-p server)
    (when-let ((missing (cline-lsp--missing server)))
      (message "cline: %s answers %s; the agent gets them when cline-ls reconnects (M-x eglot-reconnect in *cline*'s project)"
               (eglot--project-nickname server) (string-join missing ", "))))
  (when (cline-lsp--cline-p server)
    (let ((project (eglot--project server)))
      (dolist (buf (buffer-list))
        (with-current-buffer buf
          (when (and (bound-and-true-p eglot--managed-mode)
                     (equal (eglot--current-project) project))
            (when (and cline-lsp--mirror (not (jsonrpc-running-p cline-lsp--mirror)))
              (cline-lsp--unshare))
            (cline-lsp--share)))))))

(add-hook 'eglot-managed-mode-hook #'cline-lsp--managed-mode-changed)
(add-hook 'eglot-connect-hook #'cline-lsp--connected t)

(cl-defmethod eglot-handle-request :after
  ((_server eglot-lsp-server) (_method (eql 'workspace/applyEdit)) &rest _)
  "Report the edited shared buffers before the edit is answered: to
cline-ls, which confirms an edit by the change it sees, and to their own
server, whose diagnostics of the edited text cline-ls waits for."
  (dolist (buf (buffer-list))
    (with-current-buffer buf
      (when cline-lsp--mirror
        (when (and (bound-and-true-p eglot--managed-mode)
                   (fboundp 'eglot--signal-textDocument/didChange))
          (eglot--signal-textDocument/didChange))
        (cline-lsp--send-change)))))


;;; cline/lspRequest

(defun cline-lsp--file (cline params)
  "The file PARAMS' textDocument names, checked to lie in CLINE's project."
  (let* ((uri (plist-get (plist-get params :textDocument) :uri))
         (root (file-name-as-directory
                (file-truename (project-root (eglot--project cline))))))
    (unless (and (stringp uri) (string-prefix-p "file://" uri))
      (cline-lsp--fail -32602 "cline/lspRequest: params.textDocument.uri must be a file: URI, got %S" uri))
    (let ((file (file-truename (eglot--uri-to-path uri))))
      (unless (string-prefix-p root file)
        (cline-lsp--fail -32602 "cline/lspRequest: %s is outside the project %s" file root))
      ;; A buffer may visit a file not saved yet.
      (unless (or (find-buffer-visiting file) (file-regular-p file))
        (cline-lsp--fail -32602 "cline/lspRequest: %s does not exist" file))
      file)))

(defun cline-lsp--buffer (file)
  "A buffer visiting FILE whose language server is not cline-ls, and
whether it was visited for this request only; nil when none manages it."
  (let ((buf (find-buffer-visiting file))
        (transient nil))
    (unless buf
      (when (file-regular-p file)
        ;; The daemon asked, not the user: the file's own local variables
        ;; that are not known safe are neither applied nor asked about.
        (let ((cline-lsp--transient t)
              (enable-local-variables :safe)
              (enable-local-eval nil))
          (setq buf (find-file-noselect file t)
                transient t))))
    (let ((server (and buf (with-current-buffer buf (eglot-current-server)))))
      (if (and server (not (cline-lsp--cline-p server)) (jsonrpc-running-p server))
          (cons buf transient)
        (when (and transient (buffer-live-p buf)) (kill-buffer buf))
        nil))))

(defun cline-lsp--flush-server (server)
  "Send SERVER the pending didChange of every buffer it manages, now."
  (when (fboundp 'eglot--signal-textDocument/didChange)
    (dolist (buf (buffer-list))
      (with-current-buffer buf
        (when (and (bound-and-true-p eglot--managed-mode)
                   (eq (eglot-current-server) server))
          (eglot--signal-textDocument/didChange))))))

(defun cline-lsp-request (cline method params)
  "Ask the language server Eglot runs for PARAMS' document the LSP METHOD.
CLINE is the cline-ls server asking.  Returns the server's result."
  (let* ((entry (cl-find method cline-lsp--methods :key #'cadr :test #'equal))
         (file (progn
                 (unless entry
                   (cline-lsp--fail -32601 "cline/lspRequest: %S is not one of %s" method
                                    (mapconcat #'cadr cline-lsp--methods ", ")))
                 (cline-lsp--file cline params)))
         (found (or (cline-lsp--buffer file)
                    (cline-lsp--fail -32603 "No language server in Emacs manages %s (start Eglot in one of its buffers)"
                                     (file-name-nondirectory file))))
         (buf (car found)))
    (unwind-protect
        (with-current-buffer buf
          (let ((server (eglot-current-server)))
            (unless (cline-lsp--offers-p server (nth 2 entry))
              (cline-lsp--fail -32601 "%s does not answer %s" (eglot--project-nickname server) method))
            (unless (equal (cline-lsp--encoding server) (cline-lsp--encoding cline))
              (cline-lsp--fail -32603 "%s counts columns in %s and cline-ls in %s: positions cannot be passed"
                               (eglot--project-nickname server) (cline-lsp--encoding server)
                               (cline-lsp--encoding cline)))
            ;; Both servers get the text the user sees before the question,
            ;; of every buffer: references and renames span files.
            (cline-lsp--flush-server server)
            (cline-lsp--flush cline)
            (condition-case err
                (jsonrpc-request server (intern (concat ":" method)) params
                                 :timeout cline-lsp-timeout)
              (jsonrpc-error
               (let ((data (cdr err)))
                 (cline-lsp--fail (or (alist-get 'jsonrpc-error-code data) -32603)
                                  "%s: %s" method
                                  (or (alist-get 'jsonrpc-error-message data) (car data))))))))
      (when (and (cdr found) (buffer-live-p buf))
        (kill-buffer buf)))))

(cl-defmethod eglot-handle-request
  ((server eglot-lsp-server) (_method (eql 'cline/lspRequest)) &key method params &allow-other-keys)
  "Answer cline-ls's question for the editor's language server."
  (unless (cline-lsp--cline-p server)
    (cline-lsp--fail -32601 "cline/lspRequest is cline-ls's request"))
  (list :result (cline-lsp-request server method params)))

(provide 'cline-lsp)
;;; cline-lsp.el ends here
