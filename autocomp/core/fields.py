"""Field checks for the YAML files autocomp reads (run configs): a wrong value is one line
naming the file, the field and the value; and the declarations (`integer`, `number`,
`choice`) a config section or a check's options are written with, each option once."""

from __future__ import annotations

import re
from dataclasses import field, fields

from autocomp.core.errors import AutocompError, ConfigError

SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,99}")
PLAIN_NAME = ("1-100 letters, digits, '.', '_', '+' or '-', starting with a letter or digit: "
              "no '/', '..', spaces or control characters")


def check_name(value, what: str, *, file=None, field: str = "name") -> str:
    """A name that becomes part of file names (a task's benchmark folders, a run's folder):
    plain, or one line naming the file and field."""
    if not isinstance(value, str) or not SAFE_NAME.fullmatch(value):
        raise AutocompError(f"{what} name {str(value)[:120]!r} is not a plain name "
                            f"({PLAIN_NAME})", file=file, field=field)
    return value


def check_text(value, what: str, *, file=None, field: str = "name", **where) -> str:
    """A name shown in captions and cards but never a path (a vocabulary, a value): at most
    100 characters, no path separator, no control character, not '.' or '..'."""
    bad = (not isinstance(value, str) or not value.strip() or len(value) > 100
           or any(c in value for c in "/\\") or value.strip() in (".", "..")
           or any(ord(c) < 32 or ord(c) == 127 for c in value))
    if bad:
        raise AutocompError(f"{what} name {str(value)[:120]!r} must be 1-100 characters with "
                            "no '/', '\\' or control characters", file=file, field=field,
                            **where)
    return value


class FieldReader:
    """Checks of one file's fields: each failure is one line naming the file, the field and
    the value."""

    def __init__(self, path):
        self.path = path

    def error(self, fld: str, problem: str, value=None) -> AutocompError:
        got = "" if value is None else f", got {value!r}"
        return ConfigError(f"{problem}{got}", file=self.path, field=fld or None)

    def mapping(self, data, fld: str, allowed: set[str]) -> dict:
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise self.error(fld or "(top level)", "expected a mapping", data)
        for key in data:
            if key not in allowed:
                where = f"{fld}.{key}" if fld else str(key)
                raise self.error(where, f"unknown field (known: {', '.join(sorted(allowed))})")
        return data

    def string(self, value, fld: str) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.error(fld, "expected a non-empty string", value)
        return value

    def file_name(self, value, fld: str) -> str:
        """One safe file name, never a path (a run's name is its folder under runs/)."""
        value = self.string(value, fld)
        if not SAFE_NAME.fullmatch(value):
            raise self.error(fld, "expected a plain file name (1-100 letters, digits, '.', "
                                  "'_', '+' or '-', starting with a letter or digit)", value)
        return value

    def integer(self, value, fld: str, minimum: int | None = None,
                maximum: int | None = None) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(fld, "expected an integer", value)
        if minimum is not None and value < minimum:
            raise self.error(fld, f"expected an integer >= {minimum}", value)
        if maximum is not None and value > maximum:
            raise self.error(fld, f"expected an integer <= {maximum}", value)
        return value

    def one_of(self, value, fld: str, choices: tuple[str, ...]) -> str:
        if value not in choices:
            raise self.error(fld, f"expected one of {', '.join(choices)}", value)
        return value

    def boolean(self, value, fld: str) -> bool:
        if not isinstance(value, bool):
            raise self.error(fld, "expected true or false", value)
        return value

    def number(self, value, fld: str, low: float, high: float) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float) or not (
                low <= value <= high):
            raise self.error(fld, f"expected a number in [{low}, {high}]", value)
        return float(value)


# ---- options declared once -----------------------------------------------------------------
# A config section (or a check's options) is a frozen dataclass whose fields are declared
# with one of the helpers below: the default, the check of a YAML value and a line of help
# sit in the declaration, and `read_section` / `dump_section` derive reading (with the
# one-line errors above) and writing from it. A field declared without them (a plain
# dataclass field) is not read from YAML by the generic reader.

def integer(default: int, minimum: int | None = None, maximum: int | None = None,
            doc: str = ""):
    return field(default=default, metadata={"doc": doc, "read": lambda r, v, f: r.integer(
        v, f, minimum, maximum)})


def number(default: float, low: float, high: float, doc: str = ""):
    return field(default=default, metadata={"doc": doc, "read": lambda r, v, f: r.number(
        v, f, low, high)})


def choice(default: str, choices: tuple[str, ...], doc: str = ""):
    return field(default=default, metadata={"doc": doc, "read": lambda r, v, f: r.one_of(
        v, f, choices)})


def flag(default: bool, doc: str = ""):
    return field(default=default, metadata={"doc": doc, "read": lambda r, v, f: r.boolean(
        v, f)})


def text(default: str, doc: str = ""):
    return field(default=default, metadata={"doc": doc, "read": lambda r, v, f: r.string(
        v, f)})


HELPERS = "integer, number, choice, flag or text"  # what a declared field is made with


def undeclared(cls) -> list[str]:
    """The fields of the options dataclass `cls` not declared with a helper (a plain
    dataclass field is never read from a config file: its value would silently stay the
    default)."""
    import dataclasses

    if not dataclasses.is_dataclass(cls):
        return []
    return [f.name for f in fields(cls) if "read" not in f.metadata]


def declared(cls) -> list:
    """The fields of `cls` a YAML section holds, in their declared order."""
    return [f for f in fields(cls) if "read" in f.metadata]


def read_section(reader: FieldReader, cls, data, fld: str, also=(), given=None):
    """An instance of the section `cls` from the YAML mapping `data` at field `fld`: every
    declared field checked by its declaration, absent ones at their declared default.
    `also`: the section's other keys, which `given(mapping)` reads into the remaining
    fields (a backend and its options, say)."""
    data = reader.mapping(data, fld, {f.name for f in declared(cls)} | set(also))
    values = {f.name: f.metadata["read"](reader, data[f.name], f"{fld}.{f.name}" if fld
                                         else f.name)
              for f in declared(cls) if f.name in data}
    return cls(**values, **(given(data) if given else {}))

def dump_section(obj) -> dict:
    """The declared fields of a section instance, as its YAML mapping."""
    return {f.name: getattr(obj, f.name) for f in declared(type(obj))}
