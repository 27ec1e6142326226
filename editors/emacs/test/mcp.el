;;; mcp.el --- an MCP server behind OAuth through cline.el  -*- lexical-binding: t; -*-

;; A flow of e2e.el (loaded by it): mcp_test.go starts an MCP server
;; behind OAuth (internal/mcptest) at $MCPTEST_URL.  The sign-in page the
;; daemon asks Emacs to open goes to the user's browser through
;; `browse-url', here $BROWSER, a stand-in that follows the page as a
;; browser would; the server's questions (elicitation) are asked in
;; Emacs.

;;; Code:

(defun e2e-mcp-tools (server)
  "The names of the tools SERVER's daemon offers now."
  (let ((res (jsonrpc-request server :cline/tools (list :format "anthropic"))))
    (mapcar (lambda (tl) (plist-get tl :name)) (append (plist-get res :tools) nil))))

(defun e2e-flow-mcp ()
  "Sign in to the OAuth server in the browser, then a task that uses its
tools: whoami, and ask, whose questions are answered here."
  (setq e2e-script
        '((completing-read "Tell me about you\\." "Answer")
          (read-string "Your name" "Ada")
          (completing-read "colour" "red")))
  (setq browse-url-browser-function
        (lambda (url &rest _) (start-process "browser" nil (e2e-env "BROWSER") url)))
  (let* ((e2e-settings (append (list :approvals (list :edit "ask" :mcp "allow")
                                     :mcpServers (vector (list :type "http" :name "secure"
                                                               :url (e2e-env "MCPTEST_URL") :headers [])))
                               e2e-settings))
         (buf (e2e-open))
         (server (e2e-start-plugin buf)))
    (e2e-wait "the sign-in in the browser and the server's tools"
              (lambda () (member "secure__mcp__whoami" (e2e-mcp-tools server))) 60)
    (e2e-check-contains "the browser was shown the end of the sign-in"
                        (with-temp-buffer
                          (insert-file-contents (e2e-env "MCPTEST_BROWSER_LOG"))
                          (buffer-string))
                        "Signed in to secure")
    (e2e-run-task buf "who am I, and ask me")
    (e2e-check-session-log "Hello, Ada." "[turn ended: end_turn]")
    (e2e-check "the server's questions were asked in Emacs"
               (and (e2e-asked 'completing-read "Tell me about you\\.")
                    (e2e-asked 'read-string "Your name")
                    (e2e-asked 'completing-read "colour (default: blue)"))
               (format "%S" e2e-asked))
    (e2e-shutdown server)))

;;; mcp.el ends here
