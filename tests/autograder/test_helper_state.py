"""autograder.helper_state: state kept in a helper that forward or backward calls (a mutable
default, a functools cache, a variable it closes over, a helper's helper) is rule 4's state
outside ctx, named by the helper; a pure helper, or one with an immutable default, is fine."""

import re

import pytest
import torch

from autograder import outside_ctx
from autograder.errors import GradingError
from autograder.outside_ctx import check_no_state_outside_ctx


def _scaled(helpers: str, forward: str = "", backward: str = "2.5") -> type:
    """A Function ``Scaled`` (scale * x) in a module of its own whose forward runs ``forward``
    and whose backward multiplies by ``backward``, beside ``helpers``."""
    namespace = {"torch": torch, "__name__": "learner"}
    exec("import functools\n" + helpers + "\nclass Scaled(torch.autograd.Function):\n"
         "    @staticmethod\n    def forward(ctx, x, scale):\n"
         f"        {forward or 'pass'}\n        return scale * x\n"
         "    @staticmethod\n    def backward(ctx, g):\n"
         f"        return g * {backward}, None\n", namespace)
    return namespace["Scaled"]


def _values() -> dict:
    return {"x": torch.ones(3, dtype=torch.float64), "scale": 2.5}


_ONES_DEFAULT = '''
def prod_ones(shape, dtype, _cache={}):
    if (shape, dtype) not in _cache:
        _cache[(shape, dtype)] = torch.ones(shape, dtype=dtype)
    return _cache[(shape, dtype)]
'''
_LRU = '''
@functools.lru_cache(maxsize=None)
def cached_ones(shape, dtype):
    return torch.ones(shape, dtype=dtype)
'''
_CACHE = _LRU.replace("lru_cache(maxsize=None)", "cache")
_COUNTER = '''
def count_call(counter={"n": 0}):
    counter["n"] += 1
    return counter["n"]
'''
_CLOSURE_COUNTER = '''
def _make():
    calls = 0
    def tick():
        nonlocal calls
        calls += 1
        return calls
    return tick
tick = _make()
'''
_CLOSURE_CACHE = '''
def _make():
    kept = {}
    def ones(shape, dtype):
        return kept.setdefault((shape, dtype), torch.ones(shape, dtype=dtype))
    return ones
ones = _make()
'''
_DECORATED = '''
def counted(f):
    calls = [0]
    @functools.wraps(f)
    def inner(*args):
        calls[0] += 1
        return f(*args)
    return inner

@counted
def scaled_by(t):
    return t * 2.5
'''
_INNER = _ONES_DEFAULT + '''
def padded(t):
    return torch.cat([prod_ones(tuple(t.shape[:-1]) + (1,), t.dtype), t], -1)
'''


@pytest.mark.parametrize("helpers, backward, said, mistake", [
    (_ONES_DEFAULT, "prod_ones(tuple(g.shape), g.dtype) * 2.5",
     "prod_ones (called by Scaled.backward) keeps state in its default argument _cache",
     "state-in-default-argument"),
    (_LRU, "cached_ones(tuple(g.shape), g.dtype) * 2.5",
     "cached_ones (called by Scaled.backward) keeps a cache outside ctx: its functools cache's "
     "entries went from 0 to 1", "state-outside-ctx"),
    (_CACHE, "cached_ones(tuple(g.shape), g.dtype) * 2.5",
     "cached_ones (called by Scaled.backward) keeps a cache outside ctx", "state-outside-ctx"),
    (_CLOSURE_CACHE, "ones(tuple(g.shape), g.dtype) * 2.5",
     "ones (called by Scaled.backward) keeps state in a variable it closes over, kept",
     "state-outside-ctx"),
    (_INNER, "padded(g)[..., 1:] * 2.5",
     "prod_ones (called by padded, called by Scaled.backward) keeps state in its default "
     "argument _cache", "state-in-default-argument"),
], ids=["default", "lru_cache", "cache", "closure", "helper-of-a-helper"])
def test_a_cache_kept_in_a_helper_is_named_by_the_helper(helpers, backward, said, mistake):
    with pytest.raises(GradingError, match=f"^{re.escape(said)}") as error:
        check_no_state_outside_ctx(_scaled(helpers, backward=backward), "Scaled", _values())
    assert error.value.mistake == f"Scaled/{mistake}"
    assert "(Function contract, rule 4" in str(error.value)


@pytest.mark.parametrize("helpers, forward, said", [
    (_COUNTER, "ctx.call = count_call()",
     "count_call (called by Scaled.forward) keeps state in its default argument counter"),
    (_CLOSURE_COUNTER, "ctx.call = tick()",
     "tick (called by Scaled.forward) keeps state in a variable it closes over, calls "
     "(went from 0 to 1"),
    (_DECORATED, "ctx.call = 1",
     "scaled_by (called by Scaled.backward) keeps state in a variable it closes over, calls"),
], ids=["default", "nonlocal", "decorator"])
def test_a_call_counter_kept_in_a_helper_is_named(helpers, forward, said):
    """Rule 4's "not even a call counter", kept where the Function's own code shows nothing,
    in a helper's default, a variable it rebinds, or the learner's own decorator around it."""
    answer = _scaled(helpers, forward=forward, backward="scaled_by(g)" if "scaled_by" in
                     helpers else "2.5")
    with pytest.raises(GradingError, match=f"^{re.escape(said)}"):
        check_no_state_outside_ctx(answer, "Scaled", _values())


@pytest.mark.parametrize("helpers, backward", [
    ("def twice(t, factor=2.0, dims=(0,)):\n    return t * factor\n", "twice(g) * 1.25"),
    ("def scaled(t, *, by=2.5):\n    return t * by\n", "scaled(g)"),
    ("def reads(t, table=[2.5]):\n    return t * table[0]\n", "reads(g)"),  # read, never written
    ("@functools.lru_cache(maxsize=0)\ndef nocache(n):\n    return 2.5\n", "nocache(3)"),
    ("def _make():\n    factor = 2.5\n    def by(t):\n        return t * factor\n    return by\n"
     "by = _make()\n", "by(g)"),
], ids=["immutable-defaults", "keyword-default", "read-only-default", "maxsize-0", "closure"])
def test_a_helper_that_keeps_nothing_is_fine(helpers, backward):
    check_no_state_outside_ctx(_scaled(helpers, backward=backward), "Scaled", _values())


def test_a_helper_of_another_module_is_not_followed():
    """Only the answer's own helpers are its state: a function another module defines (torch's,
    the grader's, a library's) keeps what it keeps for every caller."""
    elsewhere = {"torch": torch, "__name__": "library"}
    exec(_ONES_DEFAULT, elsewhere)
    answer = _scaled("", backward="prod_ones(tuple(g.shape), g.dtype) * 2.5")
    answer.backward.__globals__["prod_ones"] = elsewhere["prod_ones"]
    check_no_state_outside_ctx(answer, "Scaled", _values())


def test_a_rerun_in_the_same_kernel_sees_the_cache_fill_again():
    """A second battery starts from an empty functools cache and a default put back as the first
    found it, so it gets the first one's verdict, not a cache already full."""
    for helpers, backward in [(_LRU, "cached_ones(tuple(g.shape), g.dtype) * 2.5"),
                              (_ONES_DEFAULT, "prod_ones(tuple(g.shape), g.dtype) * 2.5")]:
        answer = _scaled(helpers, backward=backward)
        for _ in range(2):
            with pytest.raises(GradingError, match="over the calls grading made"):
                with outside_ctx.state_watched(answer, "Scaled"):
                    x = torch.ones(3, dtype=torch.float64, requires_grad=True)
                    answer.apply(x, 2.5).sum().backward()
