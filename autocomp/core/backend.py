"""The Backend base class of the pipeline's model families (generators, writers,
detectors, answerers; scorers have their own base classes, eval/scorers/base.py).

A backend declares each option once, as a keyword of its `__init__` (name, type, default);
`check_options` reads them from the signature, so a config is checked before anything runs
and an unknown option or a wrong type is one line naming the file and field. A family that
needs packages declares its install extra once (`extra`), and `require` turns a missing
package into the one shared "pip install 'autocomp[X]'" message. Generators and detectors
answer `cannot_handle(task, options)` at config time.
"""

from __future__ import annotations

import importlib
import inspect
import types
import typing

from autocomp.core.errors import AutocompError

_NUMBER = (int, float)


def install_hint(extra: str) -> str:
    """How to install what an extra brings ("": the base install, which a broken
    environment lacks)."""
    return f"pip install 'autocomp[{extra}]'" if extra else "pip install -e . (autocomp's base)"


_MODULE = {"open_clip_torch": "open_clip", "protobuf": "google.protobuf",
           "pyyaml": "yaml", "pillow": "PIL"}


def missing_extra(extra: str) -> list[str]:
    """The packages of autocomp's `extra` that cannot be imported here (found without
    importing them; a module already imported counts as there)."""
    import re
    import sys
    from importlib import metadata, util

    try:
        wanted = metadata.requires("autocomp") or []
    except metadata.PackageNotFoundError:  # a source tree that was never installed
        return []
    out = []
    for line in wanted:
        if f'extra == "{extra}"' not in line.replace("'", '"'):
            continue
        name = re.match(r"[A-Za-z0-9_.-]+", line).group(0)
        plain = name.lower().replace("-", "_")
        module = _MODULE.get(plain, plain)
        try:  # a module imported (or a stand-in put there) counts; None there blocks it
            found = (sys.modules[module] is not None if module in sys.modules
                     else util.find_spec(module) is not None)
        except (ImportError, ValueError):  # a stand-in without a spec is there
            found = True
        if not found:
            out.append(name)
    return out


def require(module: str, extra: str, what: str = "this backend"):
    """`module`, imported; missing, one line saying which extra installs it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise AutocompError(f"{what} needs {module.split('.')[0]}: {install_hint(extra)}") \
            from None


def _types(hint) -> tuple[type, ...]:
    """The YAML value types an annotation admits (None is never an option value)."""
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        out: tuple[type, ...] = ()
        for arg in typing.get_args(hint):
            out += _types(arg)
        return out
    if hint is float:
        return _NUMBER  # an integer is a fine float
    origin = typing.get_origin(hint)
    if hint is type(None):
        return ()
    return (origin or hint,)


def _ok(value, allowed: tuple[type, ...]) -> bool:
    if isinstance(value, bool) and bool not in allowed:
        return False
    return isinstance(value, allowed)


class Backend:
    extra: str | None = None  # the install extra its packages come with
    # options that only decide how the backend runs, never what it writes: a run may be
    # resumed with other values (after an out-of-memory error, on other GPUs)
    run_options: tuple[str, ...] = ("device", "batch_size")
    forwards_options_to = None  # where **kwargs of __init__ go (their options count too)
    # what a unit of its work costs, as the dry-run plans it: "model" (a model on this
    # process's GPU: priced by autocomp/planning/costs.py from its model option, its memory
    # planned), "served" (a model in a server of its own: priced, no memory here), "none"
    # (no GPU time: the CPU or nothing heavy). None: undeclared (a plugin that does not say:
    # the plan says it is not priced rather than guess a model)
    gpu_cost: str | None = None

    @classmethod
    def option_types(cls) -> dict[str, tuple[type, ...]]:
        """Option name -> the types it admits, from the __init__ signature(s)."""
        out: dict[str, tuple[type, ...]] = {}
        for fn in (cls.forwards_options_to, cls.__init__):
            if fn is None or fn is object.__init__:
                continue
            hints = typing.get_type_hints(fn)
            for name, p in inspect.signature(fn).parameters.items():
                if name == "self" or p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
                    continue
                out[name] = _types(hints.get(name, object))
        return out

    @classmethod
    def defaults(cls) -> dict:
        """Option name -> its default."""
        out = {}
        for fn in (cls.forwards_options_to, cls.__init__):
            if fn is None or fn is object.__init__:
                continue
            for name, p in inspect.signature(fn).parameters.items():
                if name != "self" and p.default is not p.empty:
                    out[name] = p.default
        return out

    @classmethod
    def check_options(cls, options, *, file=None, field: str = "options") -> dict:
        """The options checked against the signature, then by `validate_options`."""
        if not isinstance(options, dict):
            raise AutocompError(f"expected a mapping, got {options!r}", file=file, field=field)
        allowed = cls.option_types()
        out = {}
        for key, value in options.items():
            if key not in allowed:
                known = ", ".join(sorted(allowed)) or "none"
                raise AutocompError(f"unknown option '{key}' (known: {known})", file=file,
                                    field=f"{field}.{key}")
            if not _ok(value, allowed[key]):
                names = "/".join(dict.fromkeys(t.__name__ for t in allowed[key]))
                raise AutocompError(f"expected {names}, got {value!r}", file=file,
                                    field=f"{field}.{key}")
            out[key] = value
        cls.validate_options(out, file=file, field=field)
        return out

    @classmethod
    def validate_options(cls, options: dict, *, file=None, field: str = "options") -> None:
        """Range checks beyond the types; raise AutocompError naming file and field."""

    @classmethod
    def cannot_handle(cls, task, options: dict | None = None) -> str | None:
        """Why this backend cannot work on the task's concepts, or None (config time)."""
        return None
