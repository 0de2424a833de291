"""Reading YAML files: the safe loader, a duplicate key refused, every problem one line
naming the file."""

from __future__ import annotations

from pathlib import Path

import yaml

from autocomp.core.errors import AutocompError


class _StrictLoader(yaml.SafeLoader):
    """yaml's safe loader that refuses a key given twice in one mapping (the second would
    silently win)."""


class _KeyError(yaml.constructor.ConstructorError):
    """A key autocomp refuses (given twice, or not a plain value)."""


def _mapping(loader, node, deep=False):
    seen = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        mark = key_node.start_mark
        if isinstance(key, (list, dict, set)):
            raise _KeyError(None, None, f"a mapping key must be a plain value, got a "
                            f"{type(key).__name__} at line {mark.line + 1}", mark)
        if key in seen:
            raise _KeyError(None, None, f"duplicate key {key!r} at line {mark.line + 1}", mark)
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def read_yaml(path: Path):
    """A YAML file through the safe loader; every problem (unreadable, not UTF-8, not
    YAML, an unsafe tag, a duplicate key) is one line naming the file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise AutocompError(f"cannot read file ({exc.strerror})", file=path) from None
    except UnicodeDecodeError as exc:
        raise AutocompError(f"not UTF-8 text (byte {exc.start})", file=path) from None
    try:
        return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 (a SafeLoader subclass)
    except _KeyError as exc:
        raise AutocompError(f"{exc.problem}", file=path) from None
    except yaml.constructor.ConstructorError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" at line {where.line + 1}" if where else ""
        raise AutocompError(f"unsafe or unknown YAML tag{line} ({exc.problem}); only plain "
                            "YAML is read", file=path) from None
    except yaml.YAMLError as exc:
        raise AutocompError(f"not valid YAML{_where(exc, text)}", file=path) from None


def _where(exc, text: str) -> str:
    """Where a YAML error is, in the file's own lines: a problem found at the end of the
    stream (an unclosed bracket or quote) is "at the end of the file", with the line the
    unclosed part opened on; the parser's own words in brackets."""
    mark, opened = getattr(exc, "problem_mark", None), getattr(exc, "context_mark", None)
    if mark is None:
        return ""
    at_end = mark.index >= len(text.rstrip())
    where = " at the end of the file" if at_end else f" at line {mark.line + 1}"
    said = [getattr(exc, "context", None), getattr(exc, "problem", None)]
    if opened is not None and said[0]:
        said[0] += f" from line {opened.line + 1}"
    said = [s for s in said if s]
    return where + (f" ({': '.join(said)})" if said else "")


def checked_mapping(data, path, allowed, what: str) -> dict:
    """`data` if it is a mapping with only `allowed` keys; else one line naming the file
    (`what`: how the file should look, "a task file must be a mapping with ...")."""
    if not isinstance(data, dict):
        raise AutocompError(what, file=path)
    unknown = sorted(set(data) - set(allowed))
    if unknown:
        raise AutocompError(f"unknown field '{unknown[0]}' (allowed: {sorted(allowed)})",
                            file=path)
    return data
