"""The one registry: for every plugin family, a lazy table name -> "module:attribute"; the
module is imported only when the name is chosen. CLI choices and help lists come from it.

The built-in tables and what each family's entries must be are in core/families.py.
Families: stage (ordered: the pipeline runs them in this order), generator, writer,
detector, answerer, check (ordered: the validation cascade), scorer, format, kind (how a
vocabulary's values are drawn and read back: autocomp/kinds/), metric (ordered: what
`autocomp t2i` scores images with, t2i/metrics.py), adapter (the harness files of an
export: publish/adapters/). Each family says what an entry must be (`FAMILY_FORMS`: a
subclass of its base class with its methods and its own of each `required` one, an
Options dataclass whose every field is declared, or a callable whose signature accepts
the family's arguments); an entry that is not is refused when resolved, naming the entry.
An entry a plugin registered (`plugged`) is also held to its family's behaviour contract
(autocomp/contracts.py) where its output enters results, through core/plugins.py.
`unregister` forgets every cache that holds an entry.

A plugin outside the package registers itself with `register(family, name, "mod:Class")`
(an ordered family also takes `before=` or `after=` a registered name) in a module that
is either
  - named in $AUTOCOMP_PLUGINS (comma-separated module names), or
  - the value of an entry point of group `autocomp.plugins` in an installed distribution
    (`[project.entry-points."autocomp.plugins"] mine = "my_pkg.plugins"`; a value
    "module:function" names a function called with no arguments that registers).
Both are loaded the first time the registry is read (docs/extending.md has worked
examples). A name registered twice is refused; an unknown name suggests the nearest.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import os
import re

from autocomp.core.errors import AutocompError
from autocomp.core.families import FAMILIES, FAMILY, FAMILY_FORMS, ORDERED, Form

__all__ = ["FAMILIES", "FAMILY", "FAMILY_FORMS", "ORDERED", "Form", "instantiate",
           "load_plugins",
           "make_stage", "names", "plugged", "register", "resolve", "form_problem",
           "stage_names", "unregister"]

PLUGINS_ENV = "AUTOCOMP_PLUGINS"
ENTRY_POINTS = "autocomp.plugins"
_plugins_loaded = False

PLUGGED: set[tuple[str, str]] = set()  # (family, name) added by register()
NAME = re.compile(r"[A-Za-z0-9][\w.+-]*\Z")


def load_plugins() -> None:
    """Import the plugin modules ($AUTOCOMP_PLUGINS, then entry points of group
    autocomp.plugins) once; each registers its plugins."""
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    for module in filter(None, (m.strip() for m in os.environ.get(PLUGINS_ENV, "").split(","))):
        _plugin(f"${PLUGINS_ENV} module '{module}'", lambda m=module: importlib.import_module(m))
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINTS):
        _plugin(f"entry point '{ep.name} = {ep.value}' (group {ENTRY_POINTS})",
                lambda ep=ep: _call(ep.load()))


BROKEN: dict[str, str] = {}  # plugin source -> why it did not load (named by lookups)


def _call(loaded) -> None:
    if callable(loaded) and not inspect.ismodule(loaded):
        loaded()


def _plugin(source: str, load) -> None:
    """Load one plugin source; one that fails (whatever it raises) is one warning line and
    is remembered: the commands that do not need its plugins still run."""
    import warnings

    try:
        load()
    except Exception as exc:  # noqa: BLE001 (a plugin's own bug: any exception)
        why = f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
        BROKEN[source] = why
        warnings.warn(f"plugin {source} failed to load ({why}); its plugins are not "
                      "registered", stacklevel=2)


def names(family: str) -> tuple[str, ...]:
    """The registered names of `family`, in registration order."""
    load_plugins()
    return tuple(_table(family))


def _table(family: str) -> dict[str, str]:
    if family not in FAMILIES:
        raise AutocompError(f"unknown plugin family '{family}'{_nearest(family, FAMILIES)} "
                            f"(known: {', '.join(FAMILIES)})")
    return FAMILIES[family]


def _nearest(name: str, known) -> str:
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def register(family: str, name: str, target: str, *, before: str | None = None,
             after: str | None = None) -> None:
    """Add `name` to `family`; target is "module:attribute", imported when the name is
    first chosen. A name already registered is refused; in an ordered family (stage,
    check) `before` or `after` places the entry (else it goes last)."""
    table = _table(family)
    if not isinstance(name, str) or not NAME.match(name):
        raise AutocompError(f"a {family} name is letters, digits and . _ + - (starting with "
                            f"a letter or digit), got {name!r}")
    if name in table:
        raise AutocompError(f"{family} '{name}' is registered already (as {table[name]}); "
                            "give yours another name")
    if not isinstance(target, str) or not re.fullmatch(r"[\w.]+:[\w.]+", target):
        raise AutocompError(f"{family} '{name}': a plugin target is 'module:attribute', "
                            f"got {target!r}")
    if before is not None and after is not None:
        raise AutocompError(f"{family} '{name}': give before= or after=, not both")
    place = before if before is not None else after
    if place is None:
        table[name] = target
        PLUGGED.add((family, name))
        return
    if family not in ORDERED:
        raise AutocompError(f"{family} '{name}': only ordered families "
                            f"({', '.join(ORDERED)}) take before= or after=")
    if place not in table:
        raise AutocompError(f"{family} '{name}': no {family} '{place}' to place it "
                            f"{'before' if before is not None else 'after'}"
                            f"{_nearest(place, table)} (known: {', '.join(table)})")
    entries = list(table.items())
    at = [n for n, _ in entries].index(place) + (after is not None)
    entries.insert(at, (name, target))
    table.clear()
    table.update(entries)
    PLUGGED.add((family, name))


def unregister(family: str, name: str) -> None:
    """Take `name` out of `family` (a plugin's tests undo their registration), with every
    cache that holds it: its form and contract checks and the family's own (`forget`)."""
    _table(family).pop(name, None)
    PLUGGED.discard((family, name))
    fam = FAMILY[family]
    fam.checked.discard(name)
    fam.passed.difference_update({k for k in fam.passed if k[0] == name})
    for target in fam.forget:
        module, attr = target.split(":")
        getattr(importlib.import_module(module), attr)(name)


def plugged(family: str, name: str) -> bool:
    """Whether `name` was registered by a plugin (register()), not built in: its family's
    behaviour contract runs when it is first used (autocomp/contracts.py)."""
    return (family, name) in PLUGGED


def resolve(family: str, name: str, *, file=None, field: str | None = None):
    """What is registered as `name` in `family`, checked to be of the family's form; an
    unknown name gets the nearest known one and the list of all."""
    load_plugins()
    table = _table(family)
    if name not in table:
        broken = "".join(f"; plugin {k} failed to load ({v})" for k, v in BROKEN.items())
        raise AutocompError(f"unknown {family} '{name}'{_nearest(name, table)} (known: "
                            f"{', '.join(sorted(table))}){broken}", file=file, field=field)
    module, attr = table[name].split(":")
    try:
        obj = importlib.import_module(module)
    except ImportError as exc:
        if exc.name and module.startswith(exc.name):  # the plugin's own module is missing
            raise AutocompError(f"{family} '{name}': cannot import {module} ({exc})",
                                file=file, field=field) from None
        raise
    except Exception as exc:  # noqa: BLE001 (the plugin module raised while importing)
        raise AutocompError(f"{family} '{name}': importing {module} failed ("
                            f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]})",
                            file=file, field=field) from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise AutocompError(f"{family} '{name}': {module} has no '{attr}'", file=file,
                                field=field)
        obj = getattr(obj, part)
    if name not in FAMILY[family].checked:
        problem = form_problem(family, obj)
        if problem:
            raise AutocompError(f"{family} '{name}' ({table[name]}) {problem}", file=file,
                                field=field)
        FAMILY[family].checked.add(name)
    return obj


def form_problem(family: str, obj) -> str | None:
    """Why `obj` cannot be an entry of `family`, or None."""
    form = FAMILY_FORMS[family]
    base = None
    if form.base:
        module, attr = form.base.split(":")
        base = getattr(importlib.import_module(module), attr)
    if inspect.isclass(obj):
        if base is not None and not issubclass(obj, base):
            return f"is not a subclass of {base.__name__}"
        missing = [m for m in form.methods if not callable(getattr(obj, m, None))]
        missing += sorted(m for m in dir(obj) if getattr(getattr(obj, m, None),
                                                         "__required__", False))
        if missing:
            return f"has no method {missing[0]}() of its own"
        from autocomp.core.fields import HELPERS, undeclared

        plain = undeclared(getattr(obj, "Options", None))
        if plain:
            return (f"declares its option '{plain[0]}' as a plain dataclass field, which no "
                    f"config can set: declare it with {HELPERS} (core/fields.py)")
        if form.factory or not form.arguments:
            return None
    elif base is not None and not form.factory:
        return f"is not a class (a subclass of {base.__name__} is expected)"
    if not callable(obj):
        return "is not callable"
    try:
        inspect.signature(obj).bind(*form.arguments)
    except TypeError:
        return f"cannot be called with ({', '.join(form.arguments)})"
    except ValueError:  # no signature to read (a builtin): let the call say
        return None
    return None


def stage_names() -> tuple[str, ...]:
    return names("stage")


def make_stage(name: str, run, device: str = "cpu", **options):
    """The stage `name` of `run`, built by its registered class."""
    return resolve("stage", name)(run, device, **options)


def instantiate(family: str, backend, device: str = "auto"):
    """A backend of the run config (name + options), bound to this rank's device."""
    obj = resolve(family, backend.name)(**backend.options)
    if hasattr(obj, "bind_device"):
        obj.bind_device(device)
    return obj
