;;; driver.el --- drives eglot headless for tests/editors: open, wait for NKI201, quick fix, hover  -*- lexical-binding: t; -*-
;; Usage: emacs -Q --batch -l editors/emacs/nki-studio.el -l tests/editors/driver.el FILE MODE OUT
;; Writes a JSON object to OUT: {"diagnostic": bool, "fixed": bool, "hover": text, "error": text}.
(require 'json)
(require 'python)
(let* ((args command-line-args-left)
       (file (nth 0 args)) (mode (intern (nth 1 args))) (out (nth 2 args))
       (result (list (cons 'diagnostic :json-false) (cons 'fixed :json-false) (cons 'hover "") (cons 'error ""))))
  (setq command-line-args-left nil)
  (cl-flet ((wait-for (pred seconds)
              (let ((deadline (+ (float-time) seconds)) found)
                (while (and (not (setq found (funcall pred))) (< (float-time) deadline))
                  (accept-process-output nil 0.1))
                found))
            (save ()
              (with-temp-file out (insert (json-encode result)))))
    (condition-case err
        (with-current-buffer (find-file-noselect file)
          (funcall mode)
          (apply #'eglot--connect (eglot--guess-contact))
          ;; A batch Emacs shows no window, and flymake defers its first check until the buffer is shown.
          (let ((diag (wait-for (lambda ()
                                  (flymake-start)
                                  (accept-process-output nil 0.4)
                                  (cl-find-if (lambda (d) (string-match-p "NKI201\\|deprecated" (flymake-diagnostic-text d)))
                                              (flymake-diagnostics)))
                                60)))
            (when diag
              (setf (alist-get 'diagnostic result) t)
              (let* ((beg (flymake-diagnostic-beg diag)) (end (flymake-diagnostic-end diag))
                     (actions (eglot-code-actions beg end "quickfix"))
                     (fix (cl-find-if (lambda (a) (string-match-p "NKI201" (plist-get a :title))) actions)))
                (when fix
                  (eglot--apply-workspace-edit (plist-get fix :edit))
                  (setf (alist-get 'fixed result)
                        (if (and (not (string-match-p "nl\\.affine_range(" (buffer-string)))
                                 (string-match-p "in range(" (buffer-string)))
                            t :json-false))))))
          (goto-char (point-min))
          (search-forward "nisa.dma_copy")
          (backward-char 2)
          (let ((hover (jsonrpc-request (eglot--current-server-or-lose) :textDocument/hover
                                        (eglot--TextDocumentPositionParams))))
            (setf (alist-get 'hover result) (or (plist-get (plist-get hover :contents) :value) "")))
          (eglot-shutdown (eglot--current-server-or-lose)))
      (error (setf (alist-get 'error result) (error-message-string err))))
    (save)))
;;; driver.el ends here
