"""Meta rules whose findings the engine produces itself: syntax error, unused suppression, bad config,
internal error."""

from __future__ import annotations

from nki_studio.core.findings import Severity
from nki_studio.nkilint.rule import Basis, Example, define_rule

define_rule(
    code="NKI000",
    name="syntax-error",
    severity=Severity.ERROR,
    basis=Basis.STATED,
    summary="The file does not parse as Python, so nothing else can be checked.",
    bad="import nki\n\n@nki.jit\ndef kernel(x):\n    return x +\n",
    good="import nki\n\n@nki.jit\ndef kernel(x):\n    return x\n",
    sources="Python grammar",
)
define_rule(
    code="NKI001",
    name="unused-noqa",
    severity=Severity.WARNING,
    basis=Basis.STATED,
    fixable=True,
    summary="A `# noqa: NKI###` comment names a code that reported nothing on its line.",
    bad="x = 1  # noqa: NKI118\n",
    good="x = 1\n",
    sources="nkilint suppression design (like ruff RUF100)",
    scope_note="Only NKI codes of enabled rules are checked; bare `# noqa` and other tools' codes are left alone.",
)
define_rule(
    code="NKI002",
    name="invalid-config",
    severity=Severity.ERROR,
    basis=Basis.STATED,
    summary="The `[tool.nki-studio]` table of the nearest pyproject.toml is invalid; defaults are used.",
    bad=Example('# pyproject.toml: [tool.nki-studio] target = "trn9"\n', checked=False),
    good=Example('# pyproject.toml: [tool.nki-studio] target = "trn2"\n', checked=False),
    sources="nkilint configuration",
)
define_rule(
    code="NKI999",
    name="internal-error",
    severity=Severity.ERROR,
    basis=Basis.STATED,
    summary="A rule (or kernel discovery) raised an exception; it is reported once on line 1 naming the rule.",
    bad=Example("# any file on which a rule crashes\n", checked=False),
    good=Example("# the same file once the rule is fixed\n", checked=False),
    sources="nkilint engine",
)
