"""State kept in a helper the answer's Function calls (Function contract, rule 4): a helper's
mutable default (``def ones(shape, _cache={})``), a ``functools.lru_cache``/``functools.cache``
wrapper, a call counter in a helper's default, a variable a helper closes over. The state watch
(``autograder.outside_ctx``) looks at the Function's class, its module globals and its methods'
own defaults; here it follows the functions those methods name, recursively a few levels, as
long as they are the answer's own (defined in its module: not torch's, not the grader's), and
watches what each keeps from one call to the next. A helper with an immutable default, or one
that keeps nothing, is fine."""

import functools
import types
from collections import deque
from collections.abc import Mapping

from .dependencies import names_used

_DEPTH = 4  # calls followed from a method: a helper, a helper's helper, ...
DEFAULT = "a mutable default argument"
CLOSURE = "a variable the method closes over"  # the prefix rerun_state restores contents by
CACHE = "the cache"


class HelperPlace(str):
    """A place in a helper, as the state watch names places (a string: rerun_state reads its
    prefix), with the helper's name and the chain of calls that reaches it."""

    helper: str
    caller: str
    kind: str
    source: int  # the id of the function or cache wrapper that keeps it

    def __new__(cls, kind: str, helper: str, caller: str, source):
        place = super().__new__(cls, f"{kind} of {helper} (called by {caller})")
        place.kind, place.helper, place.caller, place.source = kind, helper, caller, id(source)
        return place


class _Cells(dict):
    """A helper's closure cells by name, read when looked at (a counter rebound with
    ``nonlocal`` shows as a new value), written through (rerun_state puts a cell back); a dict,
    as the other places are, holding nothing of its own."""

    def __init__(self, function):
        super().__init__()
        self._cells = dict(zip(function.__code__.co_freevars, function.__closure__ or ()))

    def __getitem__(self, key):
        try:
            return self._cells[key].cell_contents
        except ValueError:  # an empty cell
            raise KeyError(key) from None

    def get(self, key, default=None):
        return self[key] if key in self else default

    def __contains__(self, key):
        try:
            self[key]
        except KeyError:
            return False
        return True

    def keys(self):
        return [key for key in self._cells if key in self]

    def __iter__(self):
        return iter(self.keys())

    def __len__(self):
        return len(self.keys())

    def items(self):
        return [(key, self[key]) for key in self.keys()]

    def values(self):
        return [self[key] for key in self.keys()]

    def __setitem__(self, key, value):
        self._cells[key].cell_contents = value

    def pop(self, key, default=None):  # a cell is never unbound
        return self.get(key, default)


class _CacheSize(Mapping):
    """A functools cache wrapper's entries and misses, read when looked at: a call that adds
    an entry (or replaces one in a full bounded cache) shows as a number that changed."""

    def __init__(self, wrapper):
        self._wrapper = wrapper

    def __getitem__(self, key):
        info = self._wrapper.cache_info()
        return {"entries": info.currsize, "misses": info.misses}[key]

    def __iter__(self):
        return iter(("entries", "misses"))

    def __len__(self):
        return 2


def mutable_defaults(raw) -> dict:
    """A function's defaults that are containers (def forward(ctx, x, _cache={})), by parameter
    name: made once, when the def runs, and shared by every call, as a global is."""
    code = raw.__code__
    positional = code.co_varnames[:code.co_argcount]
    found = dict(zip(positional[len(positional) - len(raw.__defaults__ or ()):],
                     raw.__defaults__ or ()))
    found.update(raw.__kwdefaults__ or {})
    return {name: value for name, value in found.items()
            if isinstance(value, (list, dict, set, bytearray, deque))}


def _is_cache(value) -> bool:
    """A functools.lru_cache or functools.cache wrapper that keeps entries."""
    return (isinstance(value, functools._lru_cache_wrapper)
            and value.cache_parameters().get("maxsize") != 0)  # maxsize=0 keeps nothing


def _layers(value, module: dict) -> list:
    """``value`` and what it wraps (``__wrapped__``: a functools cache wrapper, a decorator
    made with functools.wraps), where the innermost is a function the answer's module defines
    (not torch's, not the grader's); [] otherwise."""
    layers = []
    while value is not None and len(layers) < 8:
        layers.append(value)
        try:
            value = getattr(value, "__wrapped__", None)
        except Exception:  # noqa: BLE001 - an object whose attributes raise is not followed
            return []
    raw = layers[-1] if layers else None
    if not isinstance(raw, types.FunctionType) or raw.__globals__ is not module:
        return []
    return [layer for layer in layers if _is_cache(layer) or (
        isinstance(layer, types.FunctionType) and layer.__globals__ is module)]


def helper_namespaces(raw, owner: str) -> list[tuple[str, Mapping]]:
    """(where, namespace) for the state of every helper ``raw`` (a Function's method, named
    ``owner``) reaches through its module's globals: each one's mutable defaults, the variables
    it closes over and, for a functools cache wrapper, its size."""
    module = raw.__globals__
    found, seen = [], {id(raw)}
    calls = [(raw, owner, 0)]
    while calls:
        code_of, caller, depth = calls.pop(0)
        if depth >= _DEPTH:
            continue
        for name in sorted(names_used(code_of.__code__)):
            value = module.get(name)
            for layer in _layers(value, module) if callable(value) else ():
                if id(layer) in seen:
                    continue
                seen.add(id(layer))
                if _is_cache(layer):
                    found.append((HelperPlace(CACHE, name, caller, layer), _CacheSize(layer)))
                    continue
                defaults = mutable_defaults(layer)
                if defaults:
                    found.append((HelperPlace(DEFAULT, name, caller, layer), defaults))
                if layer.__closure__:
                    found.append((HelperPlace(CLOSURE, name, caller, layer), _Cells(layer)))
                calls.append((layer, f"{name}, called by {caller}", depth + 1))
    return found


def clear_caches(namespaces) -> None:
    """Empty every helper cache wrapper in ``namespaces``: a battery starts from an empty
    cache, so a rerun in the same kernel sees it fill as the first run did."""
    for where, names in namespaces:
        if isinstance(where, HelperPlace) and where.kind == CACHE:
            names._wrapper.cache_clear()


def helper_hint(where: HelperPlace, key: str, what: str, when: str) -> tuple[str, str]:
    """(first line, mistake suffix) for state a helper keeps: ``what`` changed ``when``."""
    who = f"{where.helper} (called by {where.caller})"
    if where.kind == CACHE:
        return (f"{who} keeps a cache outside ctx: its functools cache's {key} {what} {when}; "
                "a cache is made once and every call shares it, as a global: make what backward "
                "needs in the call that needs it, or keep it on that call's ctx",
                "state-outside-ctx")
    if where.kind == DEFAULT:
        return (f"{who} keeps state in its default argument {key} ({what} {when}): a default "
                "such as {} or [] is made once, when the def runs, and every call shares it, as "
                "a global, even a call counter or a cache: keep what backward needs on ctx "
                "(ctx.save_for_backward for tensors), one per call", "state-in-default-argument")
    return (f"{who} keeps state in a variable it closes over, {key} ({what} {when}): a closure "
            "is made once and every call shares it, as a global: keep what backward needs on "
            "ctx (ctx.save_for_backward for tensors), one per call", "state-outside-ctx")
