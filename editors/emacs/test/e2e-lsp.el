;;; e2e-lsp.el --- The lsp flow of e2e.el: gopls's answers as the agent's tools  -*- lexical-binding: t; -*-

;; Loaded by e2e.el for CLINE_TEST_FLOW=lsp, in a terminal Emacs, with
;; gopls on PATH.  A small Go module is opened the way a user opens it:
;; `eglot-ensure' in go-mode's hook starts gopls, then `cline-start' in
;; hello.txt.  The model calls find_references and rename_symbol; the
;; references are gopls's (of the unsaved text too) and the approved
;; rename lands in the buffers, not on disk.

;;; Code:

(require 'cl-lib)
(require 'subr-x)

(declare-function e2e-check "e2e")
(declare-function e2e-check-equal "e2e")
(declare-function e2e-check-contains "e2e")
(declare-function e2e-wait-idle "e2e")
(declare-function e2e-open "e2e")
(declare-function e2e-start-plugin "e2e")
(declare-function e2e-turns-ended "e2e")
(declare-function e2e-approve "e2e")
(declare-function e2e-check-session-log "e2e")
(declare-function cline-task "cline")
(declare-function cline-lsp-request "cline-lsp")
(declare-function cline-lsp-capability "cline-lsp")
(declare-function cline-lsp--missing "cline-lsp")
(declare-function cline-lsp--connected "cline-lsp")
(defvar cline-lsp--declared)
(defvar e2e-workspace)
(defvar e2e-script)
(defvar cline-lsp--mirror)

;; Emacs 28 has no Go mode and Emacs 30's go-ts-mode needs a grammar: a
;; user installs the go-mode package.  This stands for it; Eglot's
;; `eglot-server-programs' maps go-mode to gopls.
(unless (fboundp 'go-mode)
  (define-derived-mode go-mode prog-mode "Go"
    "Stands for the go-mode package in the lsp flow."))
(add-to-list 'auto-mode-alist '("\\.go\\'" . go-mode))

(defconst e2e-lsp-files
  '(("go.mod" . "module example.com/e2e\n\ngo 1.22\n")
    ("main.go" . "package main\n\nfunc greet() string { return \"hi\" }\n\nfunc main() { _ = greet() }\n")
    ("other.go" . "package main\n\nfunc twice() string { return greet() + greet() }\n")
    ("third.go" . "package main\n\nfunc third() string { return twice() }\n")
    ("evil.go" . "// -*- eval: (setq e2e-lsp-pwned t) -*-\npackage main\n\nfunc evil() {}\n"))
  "The Go module of the flow: file name and text.")

(defun e2e-lsp-file (name)
  "NAME in the workspace."
  (expand-file-name name e2e-workspace))

(defun e2e-lsp-disk (name)
  "The text of NAME on disk."
  (with-temp-buffer
    (insert-file-contents (e2e-lsp-file name))
    (buffer-string)))

(defun e2e-lsp-error (fn)
  "The message of the error FN signals, or nil when it signals none."
  (condition-case err
      (progn (funcall fn) nil)
    (jsonrpc-error (or (alist-get 'jsonrpc-error-message (cdr err)) (format "%S" err)))
    (error (error-message-string err))))

(defun e2e-lsp-refs (server uri line character)
  "Ask through cline-lsp.el, as cline-ls does, the references at URI LINE CHARACTER."
  (cline-lsp-request server "textDocument/references"
                     (list :textDocument (list :uri uri)
                           :position (list :line line :character character)
                           :context (list :includeDeclaration t))))

(defun e2e-lsp-check-refusals (server)
  "Each shape of a bad request gets an error naming what is wrong."
  (let ((main (eglot--path-to-uri (e2e-lsp-file "main.go"))))
    (e2e-check-contains "a method other than the four is refused"
                        (e2e-lsp-error (lambda () (cline-lsp-request server "workspace/executeCommand"
                                                                     (list :command "x"))))
                        "is not one of")
    (e2e-check-contains "a URI that is not file: is refused"
                        (e2e-lsp-error (lambda () (e2e-lsp-refs server "untitled:Untitled-1" 0 0)))
                        "must be a file: URI")
    (e2e-check-contains "params without a textDocument are refused"
                        (e2e-lsp-error (lambda () (cline-lsp-request server "textDocument/documentSymbol" nil)))
                        "must be a file: URI")
    (e2e-check-contains "a file outside the project is refused"
                        (e2e-lsp-error (lambda () (e2e-lsp-refs server "file:///etc/hostname" 0 0)))
                        "outside the project")
    (make-symbolic-link "/etc/hostname" (e2e-lsp-file "link.go") t)
    (e2e-check-contains "a link out of the project is refused"
                        (e2e-lsp-error (lambda () (e2e-lsp-refs server (eglot--path-to-uri (e2e-lsp-file "link.go")) 0 0)))
                        "outside the project")
    (delete-file (e2e-lsp-file "link.go"))
    (e2e-check-contains "a file no language server manages is refused"
                        (e2e-lsp-error (lambda () (e2e-lsp-refs server (eglot--path-to-uri (e2e-lsp-file "hello.txt")) 0 0)))
                        "No language server in Emacs manages hello.txt")
    (e2e-check-contains "a missing file is refused"
                        (e2e-lsp-error (lambda () (e2e-lsp-refs server (eglot--path-to-uri (e2e-lsp-file "gone.go")) 0 0)))
                        "gone.go does not exist")
    (e2e-check "references come from gopls, past the buffers' own file"
               (cl-some (lambda (loc) (string-suffix-p "/other.go" (plist-get loc :uri)))
                        (e2e-lsp-refs server main 2 6)))
    (let ((defs (cline-lsp-request server "textDocument/definition"
                                   (list :textDocument (list :uri (eglot--path-to-uri (e2e-lsp-file "other.go")))
                                         :position (list :line 2 :character 30)))))
      (e2e-check "a definition comes from gopls"
                 (cl-some (lambda (loc) (and (string-suffix-p "/main.go" (plist-get loc :uri))
                                             (equal (plist-get (plist-get (plist-get loc :range) :start) :line) 2)))
                          (if (vectorp defs) (append defs nil) (list defs)))
                 (format "%S" defs)))
    (e2e-check-contains "gopls's own error is the request's error, with its message"
                        (e2e-lsp-error (lambda () (cline-lsp-request server "textDocument/rename"
                                                                     (list :textDocument (list :uri main)
                                                                           :position (list :line 0 :character 0)
                                                                           :newName "x"))))
                        "textDocument/rename: ")
    (let ((syms (cline-lsp-request server "textDocument/documentSymbol"
                                   (list :textDocument (list :uri (eglot--path-to-uri (e2e-lsp-file "third.go")))))))
      (e2e-check "a file no buffer visits is asked about through its server"
                 (cl-some (lambda (s) (equal (plist-get s :name) "third")) syms)
                 (format "%S" syms))
      (e2e-check "and is let go again" (not (find-buffer-visiting (e2e-lsp-file "third.go")))))
    ;; A file of the workspace may ask for code to run when visited: one
    ;; visited for a request runs none and asks nothing.
    (let ((syms (cline-lsp-request server "textDocument/documentSymbol"
                                   (list :textDocument (list :uri (eglot--path-to-uri (e2e-lsp-file "evil.go")))))))
      (e2e-check "a file visited for a request gets its symbols"
                 (cl-some (lambda (s) (equal (plist-get s :name) "evil")) syms) (format "%S" syms))
      (e2e-check "and its file-local eval is not run" (not (boundp 'e2e-lsp-pwned))))))

(defun e2e-flow-lsp ()
  "find_references and rename_symbol answered by gopls through Eglot."
  ;; gopls holds a changed file's diagnostics for a second
  ;; (diagnosticsDelay) and Flymake starts its check half a second after
  ;; the change: on a loaded machine that is past the default 2 s wait.
  (setq e2e-script nil
        e2e-settings (plist-put (copy-sequence e2e-settings) :diagnostics (list :settleMs 15000)))
  (dolist (f e2e-lsp-files)
    (with-temp-file (e2e-lsp-file (car f)) (insert (cdr f))))
  (add-hook 'go-mode-hook #'eglot-ensure)
  (let* ((main (find-file-noselect (e2e-lsp-file "main.go")))
         (hello (e2e-open))
         other server before)
    (e2e-check "Emacs runs its command loop (not batch)" (not noninteractive))
    (switch-to-buffer main)
    (delete-other-windows)
    ;; `eglot-ensure' connects after the user's next command; a file
    ;; visited once gopls runs is managed at once.
    (execute-kbd-macro (kbd "C-f"))
    (e2e-wait-idle "gopls to manage main.go"
                   (lambda () (with-current-buffer main (bound-and-true-p eglot--managed-mode)))
                   60)
    (setq other (find-file-noselect (e2e-lsp-file "other.go")))
    (e2e-wait-idle "gopls to manage the Go buffers"
                   (lambda () (cl-every (lambda (b) (with-current-buffer b
                                                      (and (bound-and-true-p eglot--managed-mode)
                                                           (eglot-current-server))))
                                        (list main other)))
                   60)
    (e2e-check-contains "gopls manages main.go"
                        (format "%S" (with-current-buffer main (eglot--server-info (eglot-current-server))))
                        "gopls")
    ;; The user's unsaved typing: the agent and gopls see it, the disk not.
    ;; Emacs is never idle long enough for Eglot to send it on its own: a
    ;; request must send it first, whichever buffer it is about.
    (setq eglot-send-changes-idle-time 600)
    ;; Shown, as a buffer one types in is: Flymake checks only buffers in
    ;; a window, and the breaking edit's error must come from its check.
    (switch-to-buffer other)
    (with-current-buffer other
      (goto-char (point-max))
      (insert "\nfunc thrice() string { return greet() + twice() }\n"))
    (setq server (e2e-start-plugin hello))
    (e2e-wait-idle "the Go buffers to be shared with cline-ls"
                   (lambda () (cl-every (lambda (b) (eq (buffer-local-value 'cline-lsp--mirror b) server))
                                        (list main other)))
                   60)
    (e2e-check-equal "cline-ls was told what gopls answers"
                     (cline-lsp-capability server) ["references" "definition" "rename" "documentSymbols"])
    (e2e-lsp-check-refusals server)
    (let ((gopls (with-current-buffer main (eglot-current-server))))
      (e2e-check-equal "gopls started before cline-ls: nothing is missing" (cline-lsp--missing gopls) nil)
      ;; As if cline-ls had connected first, with nothing to declare.
      (puthash server nil cline-lsp--declared)
      (cline-lsp--connected gopls)
      (e2e-check-contains "a language server connecting after cline-ls says how to offer its methods"
                          (e2e-buffer-text "*Messages*")
                          "answers references, definition, rename, documentSymbols; the agent gets them when cline-ls reconnects")
      (puthash server (append (cline-lsp-capability server) nil) cline-lsp--declared))
    (setq before (e2e-turns-ended))
    (with-current-buffer hello (cline-task "Rename greet to salute"))
    (e2e-approve "a")
    (e2e-wait-idle "the rename to be answered" (lambda () (string-search "Breaking it." (or (e2e-buffer-text "*cline*") ""))) 90)
    ;; An edit of a shared buffer comes back with gopls's new error,
    ;; which Flymake shows: the transcript expects it in the tool result.
    (e2e-approve "a")
    (e2e-wait-idle "the turn to end" (lambda () (> (e2e-turns-ended) before)) 90)
    (e2e-check-session-log "Looking." "Renaming." "Breaking it." "Done." "[turn ended: end_turn]")
    (with-current-buffer main
      (e2e-check-equal "main.go's buffer holds the rename"
                       (buffer-string)
                       "package main\n\nfunc salute() string { return \"hi\" }\n\nfunc main() { _ = salute() }\n"))
    (with-current-buffer other
      (e2e-check-equal "other.go's buffer holds the rename, the user's typing and the breaking edit"
                       (buffer-string)
                       "package main\n\nfunc twice() string { return salute() + salute() }\n\nfunc thrice() string { return salute(1) + twice() }\n")
      (e2e-check "other.go is unsaved" (buffer-modified-p)))
    (e2e-check-equal "main.go on disk is untouched" (e2e-lsp-disk "main.go") (cdr (assoc "main.go" e2e-lsp-files)))
    (e2e-check-equal "other.go on disk is untouched" (e2e-lsp-disk "other.go") (cdr (assoc "other.go" e2e-lsp-files)))
    (e2e-shutdown server)))

(provide 'e2e-lsp)
;;; e2e-lsp.el ends here
