"""A rerun in the same kernel starts from what the first run found: a place (a module global, an
attribute of the answer's class) that one battery changed, a cache it filled or a global it
bound, would otherwise meet the next battery already changed, and the state check would see
nothing change (``outside_ctx.state_watched`` uses it)."""

from collections import deque
from contextlib import contextmanager

IPYTHON_NAMES = frozenset({"In", "Out", "_ih", "_oh", "_dh"})  # the notebook's own history

# Places an earlier battery in this process saw change (a cache it filled, a global it bound):
# (id of the module globals or class, name) -> (what the place held after that battery,
# "contents" or "binding", a copy of the container's entries or the object bound before).
# A rerun would otherwise start from the filled cache and see nothing change; it starts from
# what the earlier battery started from instead, and what the place holds is put back after.
_CHANGED: dict = {}
_CONTAINERS = (dict, list, set, deque, bytearray)
_ABSENT = object()
_REMEMBERED = 256


def _copied(value, depth: int = 0):
    """A container's entries, copied two levels deep (a dict of dicts filled per shape); any
    other value itself."""
    if depth > 1 or type(value) not in _CONTAINERS:
        return value
    if isinstance(value, dict):
        return {key: _copied(item, depth + 1) for key, item in value.items()}
    return type(value)(_copied(item, depth + 1) for item in value)


def _refill(container, entries) -> None:
    """``container`` made to hold ``entries`` (pairs for a dict), in place."""
    container.clear()
    if isinstance(container, (dict, set)):
        container.update(entries)
    else:
        container.extend(entries)


def _places(submission, namespaces) -> dict:
    """(namespace, key) -> its owner, for the places whose binding can be undone: the answer's
    module globals and the attributes of its own classes; and, by the container's own id, the
    containers its methods hold as a default argument or close over, whose contents can."""
    places = {}
    for where, names in namespaces:
        if where == "a module global":
            for key in list(names):
                if not (key.startswith("__") and key.endswith("__")) and key not in IPYTHON_NAMES:
                    places[(id(names), key)] = names
        elif where.startswith(("a mutable default argument", "a variable the method closes")):
            for key, value in names.items():
                if type(value) in _CONTAINERS:
                    places[(id(value), key)] = names
    classes = [cls for cls in (submission.__mro__ if isinstance(submission, type) else ())
               if cls is not object and not cls.__module__.startswith("torch")]
    for cls in classes:
        for key in list(vars(cls)):
            places[(id(cls), key)] = cls
    return places


def _get(owner, key):
    return (owner.get(key, _ABSENT) if isinstance(owner, dict)
            else vars(owner).get(key, _ABSENT))


def _bind(owner, key, value) -> None:
    if isinstance(owner, dict):
        owner.pop(key, None) if value is _ABSENT else owner.__setitem__(key, value)
    elif value is _ABSENT:
        if key in vars(owner):
            delattr(owner, key)
    else:
        setattr(owner, key, value)


@contextmanager
def as_first_found(submission, namespaces):
    """While the block runs, each place an earlier battery changed, if it still holds what that
    battery left there, holds what it held before that battery (a cache its entries then, a
    global unbound again); what it holds now is put back after. Yields ``remember(keys)``,
    which notes the places of those names that the block changed."""
    owners = _places(submission, namespaces)
    put_back = []
    for place, owner in owners.items():
        left, kind, before = _CHANGED.get(place, (_ABSENT, None, None))
        now = _get(owner, place[1])
        if left is _ABSENT or now is not left:
            continue
        if kind == "contents":
            kept = _copied(now, 1)
            _refill(now, _entries_of(_copied(before)))
            put_back.append(lambda now=now, kept=kept: _refill(now, _entries_of(kept)))
        else:
            _bind(owner, place[1], before)
            put_back.append(lambda owner=owner, key=place[1], now=now: _bind(owner, key, now))
    start = {place: (value, _copied(value)) for place, owner in owners.items()
             for value in [_get(owner, place[1])]}
    found = []

    def remember(keys) -> None:
        for place, owner in _places(submission, namespaces).items():
            if place[1] not in keys:
                continue
            value, copy = start.get(place, (_ABSENT, _ABSENT))
            now = _get(owner, place[1])
            if now is value and type(now) in _CONTAINERS:
                found.append((place, owner, "contents", copy))
            elif now is not value:
                found.append((place, owner, "binding", value))

    try:
        yield remember
    finally:
        for undo in reversed(put_back):
            undo()
        for place, owner, kind, before in found:  # what the place holds once put back
            _CHANGED.pop(place, None)
            _CHANGED[place] = (_get(owner, place[1]), kind, before)
        while len(_CHANGED) > _REMEMBERED:  # the oldest first: a long session's stale answers
            del _CHANGED[next(iter(_CHANGED))]


def _entries_of(container):
    return list(container.items()) if isinstance(container, dict) else list(container)


@contextmanager
def put_back(submission, namespaces):
    """What the block changes in the answer's places (a global bound or rebound, a list or a
    dict it fills, a class attribute) undone after it: a probe's calls leave the battery after
    it the state it would have found (a stack a forward pushes onto, popped by a backward the
    probe never runs)."""
    owners = _places(submission, namespaces)
    start = {place: (value, _shallow(value), _copied(value)) for place, owner in owners.items()
             for value in [_get(owner, place[1])]}
    try:
        yield
    finally:
        for place, owner in _places(submission, namespaces).items():
            value, entries, copy = start.get(place, (_ABSENT, None, None))
            if _get(owner, place[1]) is not value:
                _bind(owner, place[1], value)
            if entries is not None and not _same(_shallow(value), entries):
                _refill(value, _entries_of(copy))


def _shallow(value) -> list | None:
    """A container's entries as the objects themselves (pairs for a dict); None for another
    value."""
    if type(value) not in _CONTAINERS:
        return None
    return [item for entry in _entries_of(value) for item in (
        entry if isinstance(value, dict) else (entry,))]


def _same(now: list, then: list) -> bool:
    return len(now) == len(then) and all(a is b for a, b in zip(now, then))
