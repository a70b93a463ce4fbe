"""Lesson 04, review 59 (fifth round): a SwishFunction that caches sigma(beta x) across calls in a
mutable default argument of backward (named as state kept in the default, not by the stale
gradient a second call gets); a CubeOnce whose backward narrows x to float32 in NumPy whatever
its dtype (named as the float32 step, not as a cube root of the output)."""

from .. import Mistake, edit
from .review56 import CUBE, SWISH

DEFAULT_CACHE = edit(
    SWISH, ("    def backward(ctx, grad_output):\n", "    def backward(ctx, grad_output, _cache={}):\n"),
    ("        s = torch.sigmoid(beta * x)\n",
     "        key = (tuple(x.shape), float(beta), x.dtype, torch.is_grad_enabled())\n"
     "        s = _cache.get(key)\n"
     "        if s is None or torch.is_grad_enabled():\n"
     "            s = _cache[key] = torch.sigmoid(beta * x)\n"))

MISTAKES = [
    Mistake("SwishFunction", "sigma(beta x) cached across calls in a mutable default argument",
            "kept a tensor in its mutable default argument", DEFAULT_CACHE, named=True),
    Mistake("CubeOnce", "3x^2 computed from x narrowed to float32 in NumPy (.astype)",
            "is 3x^2 rounded to float32",
            edit(CUBE, ("3 * x.detach().cpu().numpy() ** 2",
                        "3 * x.detach().cpu().numpy().astype(np.float32) ** 2")), named=True),
]

UNUSUAL = []
