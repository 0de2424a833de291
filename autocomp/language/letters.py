"""Names that are not what they look like: look-alike letters of other alphabets,
invisible characters, compatibility forms (a vocabulary typed with them matches no
caption or detector prompt typed with ordinary letters)."""

from __future__ import annotations

import unicodedata

LOOK_ALIKE_SCRIPTS = {"LATIN", "CYRILLIC", "GREEK", "ARMENIAN", "CHEROKEE"}


def look_alike(text: str) -> str | None:
    """Why `text` may not be what it looks like (a Cyrillic 'а' in 'аpple', a zero-width
    space, a full-width letter), or None."""
    for ch in text:
        if unicodedata.category(ch) in ("Cf", "Cc", "Co", "Cn"):
            return f"contains the invisible character U+{ord(ch):04X}"
    if unicodedata.normalize("NFKC", text) != text:
        return (f"is written with compatibility characters (plain form "
                f"'{unicodedata.normalize('NFKC', text)}')")
    scripts: dict[str, str] = {}
    for ch in text:
        script = unicodedata.name(ch, "").split(" ")[0]
        if ch.isalpha() and script in LOOK_ALIKE_SCRIPTS:
            scripts.setdefault(script, ch)
    if len(scripts) > 1:
        mixed = ", ".join(f"{s.lower()} '{c}' (U+{ord(c):04X})" for s, c in sorted(
            scripts.items()))
        return f"mixes letters of several alphabets that look alike: {mixed}"
    return None
