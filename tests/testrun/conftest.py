"""data/ holds a sample user project, run by the tests through `nki-studio test`, never collected here."""

collect_ignore = ["data"]
