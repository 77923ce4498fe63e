"""Every rule's documented bad example triggers it, its good example does not, and its fix (if any) yields
code that parses and no longer triggers. Rules limited to NKI <= 0.6 must stay silent on 0.7."""

from __future__ import annotations

import pytest
from nki_studio.model.targets import NEWEST_VERSION
from nki_studio.nkilint.rule import Example, Rule, all_rules
from nkilint_testutil import apply_fix, codes, lint, parses

RULES = list(all_rules().values())


def _checked(examples: tuple[Example, ...]) -> list[Example]:
    return [e for e in examples if e.checked]


def _version(rule: Rule, example: Example) -> str:
    if example.nki_version:
        return example.nki_version
    if rule.max_version is not None and rule.max_version < NEWEST_VERSION:
        return str(rule.max_version)
    return str(NEWEST_VERSION)


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_bad_example_triggers(rule: Rule) -> None:
    examples = _checked(rule.bad)
    if not examples:
        pytest.skip(f"{rule.code} has prose examples only; tested in its own module")
    for ex in examples:
        found = lint(ex.code, _version(rule, ex))
        assert rule.code in codes(found), (rule.code, ex.code, found)


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_good_example_is_clean(rule: Rule) -> None:
    for ex in _checked(rule.good):
        found = lint(ex.code, _version(rule, ex))
        assert rule.code not in codes(found), (rule.code, found)
        assert not [f for f in found if f.severity.value == "error"], found


@pytest.mark.parametrize("rule", [r for r in RULES if r.fixable], ids=lambda r: r.code)
def test_fix_applies(rule: Rule) -> None:
    for ex in _checked(rule.bad):
        version = _version(rule, ex)
        fixes = [f.fix for f in lint(ex.code, version) if f.code == rule.code and f.fix is not None]
        assert fixes, f"{rule.code} is marked fixable but its bad example has no fix"
        fixed = apply_fix(ex.code, fixes[0])
        assert parses(fixed), fixed
        remaining = [f for f in lint(fixed, version) if f.code == rule.code]
        assert len(remaining) < len(fixes), (fixed, remaining)


@pytest.mark.parametrize(
    "rule",
    [r for r in RULES if r.max_version is not None and r.max_version < NEWEST_VERSION],
    ids=lambda r: r.code,
)
def test_rule_is_off_after_its_last_version(rule: Rule) -> None:
    for ex in _checked(rule.bad):
        assert rule.code not in codes(lint(ex.code, str(NEWEST_VERSION)))


@pytest.mark.parametrize("rule", [r for r in RULES if r.min_version is not None], ids=lambda r: r.code)
def test_rule_is_off_before_its_first_version(rule: Rule) -> None:
    assert rule.min_version is not None
    before = f"{rule.min_version.major}.{rule.min_version.minor - 1}"
    for ex in _checked(rule.bad):
        assert rule.code not in codes(lint(ex.code, before))
