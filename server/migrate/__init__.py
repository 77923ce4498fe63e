"""``nki-studio migrate``'s rewrite: legacy ``neuronxcc.nki`` (and NKI 0.5/0.6) source to NKI 0.7 source.

Source to source only: each module rewrites one family of constructs into text edits (formatting and comments
outside an edited node stay as written) or lists what it cannot rewrite with the manual recipe. The proof that
the rewrite changed nothing (both versions simulated on the same inputs) is the service's
(``service.migration``): it runs user code.
"""
