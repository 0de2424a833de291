"""The one entry where a plugin's entry is held to its family (core/families.py) when it is
used: every call site goes through these, so "held to its contract when first used" means
the same thing everywhere.

  first_use(family, name, contract)  the family's behaviour contract, the first time a
                                     plugin's entry is used in this process (expensive
                                     checks: drawing, encoding twice); a pass is kept in
                                     the family's cache, which unregister() clears
  every_batch(family, name, problems)
                                     cheap checks (lengths, finiteness, ranges) on what
                                     an entry gave, built-ins included, every time
  made(family, name, obj)            what a factory or opener returned is of the kind
                                     its family makes (a Scorer, a Suite)
  plugin_code(family, name)          a plugin's own bug (TypeError, NotImplementedError,
                                     ...) raised while it runs, as one line naming it
  recorded()                         the plugins registered, as provenance records them

Each failure is a PluginError: one line naming the family, the entry and its
module:attribute, with exit status 1 (the same command fails alike until the plugin is
fixed: a job script does not requeue it). Built-in entries are held to the same
contracts by the suite, on every registered name.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from contextlib import contextmanager

from autocomp.core.errors import AutocompError
from autocomp.core.families import FAMILY

# what a plugin's own bug raises; OSError, MemoryError and the like say nothing about the
# plugin and keep their own statuses
BUGS = (AttributeError, TypeError, NotImplementedError, LookupError, ZeroDivisionError,
        AssertionError, ValueError, ArithmeticError)


class PluginError(AutocompError):
    """A plugin broke its family's contract: fix the plugin; re-running will not help."""


def target(family: str, name: str) -> str:
    return FAMILY[family].entries.get(name, "?")


def broken(family: str, name: str, problems: list[str], file=None,
           about: str = "") -> PluginError:
    more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
    on = f" on {about}" if about else ""
    return PluginError(f"{family} '{name}' ({target(family, name)}){on} breaks the {family} "
                       f"contract (autocomp/contracts.py): {'; '.join(problems[:3])}{more}",
                       file=file)


def first_use(family: str, name: str, contract: Callable[[], list[str]], file=None,
              key: str = "", about: str = "") -> None:
    """Run `contract` (-> its problems) on a plugin's entry the first time it is used in
    this process (`key`: what else makes a use new, e.g. a scorer's model, named in the
    message as `about`); a built-in entry, or one that passed, is not checked again."""
    from autocomp.core import registry

    fam = FAMILY[family]
    if (name, key) in fam.passed or not registry.plugged(family, name):
        return
    try:
        problems = contract()
    except AutocompError:
        raise
    except Exception as exc:  # noqa: BLE001 (the plugin's own bug: whatever it raises)
        problems = [f"it raised {type(exc).__name__} ({' '.join(str(exc).split())[:200]})"]
    if problems:
        raise broken(family, name, problems, file, about)
    fam.passed.add((name, key))


def every_batch(family: str, name: str, problems: list[str], file=None) -> None:
    """Refuse what one batch gave when the cheap checks found problems (any entry)."""
    if problems:
        raise broken(family, name, problems, file)


def made(family: str, name: str, obj, file=None):
    """`obj` when it is what the family's factories make (its form's `makes`), else a
    PluginError saying what came back."""
    makes = FAMILY[family].form.makes
    if makes is not None:
        module, attr = makes.split(":")
        cls = getattr(importlib.import_module(module), attr)
        if not isinstance(obj, cls):
            raise broken(family, name, [f"it returned {type(obj).__name__}, not a "
                                        f"{cls.__name__}"], file)
    return obj


@contextmanager
def plugin_code(family: str, name: str, doing: str):
    """While a plugin's entry runs: its own bug becomes one line naming it (a built-in's
    keeps its traceback: that is autocomp's bug)."""
    from autocomp.core import registry

    try:
        yield
    except AutocompError:
        raise
    except BUGS as exc:
        if not registry.plugged(family, name):
            raise
        raise PluginError(f"{family} '{name}' ({target(family, name)}) raised "
                          f"{type(exc).__name__} while {doing} "
                          f"({' '.join(str(exc).split())[:200]}): fix the plugin; running "
                          "the same command again fails alike") from None


def recorded() -> list[dict]:
    """Every plugin entry registered in this process, as a run's config and every result
    record it: family, name, target, the module's distribution and version (None when it
    is not installed as one) and the sha256 of the module's source file (None when it has
    none), sorted."""
    from autocomp.core import registry

    registry.load_plugins()
    return [_record(family, name) for family, name in sorted(registry.PLUGGED)]


def _record(family: str, name: str) -> dict:
    import hashlib
    import importlib.util
    from importlib import metadata

    module = target(family, name).split(":")[0]
    digest = distribution = version = None
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.origin and spec.has_location:
        try:
            with open(spec.origin, "rb") as fh:
                digest = hashlib.sha256(fh.read()).hexdigest()
        except OSError:
            pass
    top = module.split(".")[0]
    for dist in _distributions().get(top, [])[:1]:
        distribution, version = dist, metadata.version(dist)
    return {"family": family, "name": name, "target": target(family, name),
            "distribution": distribution, "version": version, "source_sha256": digest}


@functools.cache
def _distributions() -> dict:
    """Top-level module -> the installed distributions providing it (a scan of every
    installed package: once per process, not once per result)."""
    from importlib import metadata

    return metadata.packages_distributions()
