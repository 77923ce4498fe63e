;;; nki-studio.el --- nki-studio language server for Emacs eglot  -*- lexical-binding: t; -*-
;; Load it from your init file: (load "/path/to/nki-studio.el"). Covers `python-mode' and Emacs 29's
;; tree-sitter `python-ts-mode'. Tested in CI with Debian 12's Emacs 28 and its elpa-eglot (python-mode; Emacs 28
;; has no python-ts-mode). M-x eglot (or `eglot-ensure' in a hook) then starts `nki-studio serve'.
(require 'eglot)
(add-to-list 'eglot-server-programs
             '((python-mode python-ts-mode) . ("nki-studio" "serve"
                                              :initializationOptions
                                              (:nki-studio (:nkiVersion "0.7" :target "trn2")))))
(provide 'nki-studio)
;;; nki-studio.el ends here
