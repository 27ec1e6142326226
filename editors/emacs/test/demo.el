;;; demo.el --- A real cline.el session in a terminal, for the README's screenshots  -*- lexical-binding: t; -*-

;; Run by test/screenshot.sh as
;;
;;   emacs -nw -Q -l test/demo.el
;;
;; inside tmux, which types the user's keys.  The environment:
;;   CLINE_LS               the daemon binary
;;   CLINE_TEST_WORKSPACE   folder holding hello.txt
;;   CLINE_TEST_TRANSCRIPT  replay transcript
;;   CLINE_TEST_STATE       the daemon's stateDir
;;   CLINE_DEMO_SIGNAL      folder where the stages are signalled: the
;;                          files "ready" (the chat waits for a prompt),
;;                          "approval" (the approval is shown) and "done"
;;                          (the turn ended)

;;; Code:

(require 'cl-lib)
(unless (require 'eglot nil t)
  (require 'package)
  (setq package-user-dir (make-temp-file "cline-demo-elpa" t)
        package-directory-list '("/usr/share/emacs/site-lisp/elpa"))
  (package-initialize)
  (require 'eglot))

(load (expand-file-name "../cline.el" (file-name-directory load-file-name)) nil t)

(setq cline-program (list (getenv "CLINE_LS"))
      cline-initialization-options
      (list :provider (list :name "replay" :transcript (getenv "CLINE_TEST_TRANSCRIPT"))
            :stateDir (getenv "CLINE_TEST_STATE")
            :approvals (list :edit "ask"))
      eglot-sync-connect 10
      inhibit-startup-screen t)

(defun demo-signal (name)
  "Signal the stage NAME once the screen shows it."
  (redisplay t)
  (with-temp-file (expand-file-name name (getenv "CLINE_DEMO_SIGNAL"))))

(defun demo-watch (name pred then)
  "Signal NAME when PRED holds, then call THEN."
  (if (funcall pred)
      (progn (demo-signal name) (when then (funcall then)))
    (run-with-timer 0.1 nil #'demo-watch name pred then)))

(defun demo-start ()
  "Open hello.txt beside the chat and wait for the user."
  (let ((buf (find-file (expand-file-name "hello.txt" (getenv "CLINE_TEST_WORKSPACE")))))
    (cline-start)
    (demo-watch "ready" (lambda () (buffer-local-value 'eglot--managed-mode buf))
              (lambda ()
                (cline-show)
                (demo-signal "ready")
                (demo-watch "approval"
                            (lambda () (cline--approval-waiting-p))
                            (lambda ()
                              (demo-watch "done"
                                          (lambda ()
                                            (string-search "[turn ended"
                                                           (with-current-buffer "*cline*"
                                                             (buffer-string))))
                                          nil)))))))

(run-with-timer 0.2 nil #'demo-start)

;;; demo.el ends here
