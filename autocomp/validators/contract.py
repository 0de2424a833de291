"""The check contract (autocomp/contracts.py has every family's): what a validation check
returns, checked on samples. A check registered by a plugin is checked on the first
samples it is given (validate_images), before its verdicts are kept."""

from __future__ import annotations

import json


def check_problems(check, samples) -> list[str]:
    """The contract of a validation check on a few Samples (validators/checks.py)."""
    from autocomp.validators.base import CheckResult

    problems: list[str] = []
    one = [check.check(s) for s in samples]
    for result in one:
        if not isinstance(result, CheckResult):
            return [f"check() returned {type(result).__name__}, not a CheckResult"]
        if result.name != check.name:
            problems.append(f"a result is named {result.name!r}, the check {check.name!r}")
        if not isinstance(result.passed, bool) or not isinstance(result.reason, str):
            problems.append("a result's passed is not a bool or its reason not a string")
        try:
            json.dumps(result.evidence)
        except TypeError as exc:
            problems.append(f"a result's evidence cannot be written to a record ({exc})")
    if [r.to_dict() for r in one] != [check.check(s).to_dict() for s in samples]:
        problems.append("check() gives another result the second time")
    if [r.to_dict() for r in check.check_many(list(samples))] != [r.to_dict() for r in one]:
        problems.append("check_many() differs from check() one by one")
    if not check.label or not set(check.tracks) <= {"minimal", "contextual"}:
        problems.append("a check needs a label (its funnel column) and tracks among "
                        "minimal, contextual")
    return problems
