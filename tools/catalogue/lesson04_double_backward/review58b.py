"""Lesson 04, review 58b: sigmoid(beta x) memoised in a global dict keyed by x.data_ptr(), shape,
dtype and beta, refreshed whenever grad mode is on (so every create_graph backward and the
first call of a fresh process are right): named where it lives, by the state-outside-ctx probe
that now runs right after the call probes, not by the wrong gradient a later check (a
non-contiguous grad_output, whose x reuses a cached address) gets from it. The reviewer's
unusual answers (torch.autograd.grad inside backward, x.detach() saved in CubeOnce) are already
catalogued in swish.py and cube_once.py."""

from .. import Mistake, edit
from .swish import READ, RETURN, _swish

SWISH = _swish(READ + RETURN)

MISTAKES = [
    Mistake("SwishFunction", "sigmoid memoised in a global keyed by x.data_ptr() and beta",
            "SwishFunction.backward kept state outside ctx: _cache in a module global",
            "_cache = {}\n" + edit(
                SWISH, ("        s = torch.sigmoid(beta * x)\n",
                        "        key = (x.data_ptr(), x.shape, x.dtype, float(beta))\n"
                        "        if key not in _cache or torch.is_grad_enabled():\n"
                        "            _cache[key] = torch.sigmoid(beta * x)\n"
                        "        s = _cache[key]\n"))),
]
