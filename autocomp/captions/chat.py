"""What every LLM caption writer shares: the chat messages and the cleaning of an answer."""

from __future__ import annotations

import re

_PREFIX = re.compile(r"^\s*(?:\*\*)?(?:caption|here is (?:the|a|your) caption)\s*:?\s*(?:\*\*)?"
                     r"\s*:?\s*", re.IGNORECASE)
_QUOTES = "\"'“”‘’`"


def messages(system: str, user: str) -> list[dict]:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def clean_caption(text: str | None) -> str:
    """The caption inside a model's answer: its first non-empty line, without a "Caption:"
    prefix, markdown emphasis or wrapping quotes, whitespace collapsed."""
    if not text:
        return ""
    line = next((ln for ln in str(text).splitlines() if ln.strip()), "")
    line = _PREFIX.sub("", line).strip()
    line = line.strip("*").strip()
    if len(line) >= 2 and line[0] in _QUOTES and line[-1] in _QUOTES:
        line = line[1:-1].strip()
    return " ".join(line.split())
