"""Profile a kernel on a remote Trn2 host over the system ``ssh``/``scp`` and bring the profile back (issue 7).

One module per job: ``config`` (settings and host parsing), ``commands`` (ssh/scp argument lists and quoted
remote command lines), ``harness`` (the script run on the host), ``process`` (run a local command with
timeout, cancel and output logging), ``errors`` (turn ssh/remote failures into messages a user can act on),
``cache`` (local profile cache), ``flow`` (the stages, upload → compile → capture → view → download → load).
"""
