"""Lesson 02: the answers of review 58. A weight.T cached in a module global and reused while
torch.equal says the weight is unchanged passed both checks: every probe's weight had values an
earlier call had cached (now the battery ends with one call on a seed and batch size no earlier
call used, and the cache made there shows in the global). A cache keyed by (data_ptr,
_version) was blamed on backward by gradcheck (now the weight-stepped check changes the weight
through weight.data, as gradcheck's perturbation does, and names the stale cache). grad_weight
as x.T @ grad_output raised torch's shape error for 1-D x (now the transpose, seen for 2-D x, is
named first). Unusual: the ReLU clamped in place with the mask read back from the output, and
einsum everywhere with weight.T's view saved as F.linear saves it. Review 70: a mask cached
under the inputs' data_ptr (an empty batch's is 0, and a freed tensor's address comes back) was
blamed on the empty batch, and a mask kept in such a global instead of saved was told it saved
nothing: where a check of values fails, the fresh call that shows a global's new entry now runs
first (an output cached so is named by the stale-cache check)."""

from .. import Mistake, Unusual, edit
from .answers import (FLAT, FUSED_FORWARD, FUSED_READ, FUSED_RETURN, GUARDED, _RETURN,
                      _fused, _linear)
from .bilinear import GW, GX1, GX2, _bilinear_with

_LINEAR = _linear(FLAT + GUARDED + "        grad_bias = g2.sum(0) if ctx.has_bias and "
                  "ctx.needs_input_grad[2] else None\n" + _RETURN)
_FUSED = _fused(FUSED_READ + FUSED_RETURN)
_STALE = "keeps state in a global: a stale cache"
_SAME = ("        if not (_CACHE and _CACHE[0].shape == weight.shape\n"
         "                and _CACHE[0].dtype == weight.dtype\n"
         "                and torch.equal(_CACHE[0], weight)):\n")
_EQUAL_CACHE = ("_CACHE = []\n", (
    "        y = x @ weight.T\n",
    _SAME + "            _CACHE[:] = [weight.detach().clone(), weight.detach().T.contiguous()]\n"
    "        y = x @ _CACHE[1]\n"))
_OUTSIDE = "forward kept state outside ctx: _CACHE in a module global"
# Bilinear's weight (out, n1, n2) flattened to (out, n1 * n2), cached while torch.equal holds
_EQUAL_FLAT = ("_CACHE = []\n", (
    "        y = torch.einsum('...i,oij,...j->...o', x1, weight, x2)\n",
    _SAME + "            _CACHE[:] = [weight.detach().clone(),\n"
    "                         weight.detach().reshape(weight.shape[0], -1)]\n"
    "        y = ((x1.unsqueeze(-1) * x2.unsqueeze(-2)).flatten(-2) @ _CACHE[1].T)\n"))

MISTAKES = [
    Mistake("MyLinearFunction", "weight.T cached in a global, reused while torch.equal holds",
            _OUTSIDE, _EQUAL_CACHE[0] + edit(_LINEAR, _EQUAL_CACHE[1])),
    Mistake("FusedLinearReLU", "weight.T cached in a global, reused while torch.equal holds",
            _OUTSIDE, _EQUAL_CACHE[0] + edit(_FUSED, ("        z = x @ weight.T\n",
                                                      _EQUAL_CACHE[1][1].replace("y = x @",
                                                                                 "z = x @")))),
    Mistake("Bilinear", "the flattened weight cached in a global, reused while torch.equal holds",
            _OUTSIDE, _EQUAL_FLAT[0] + edit(_bilinear_with(GX1, GX2, GW), _EQUAL_FLAT[1])),
    Mistake("MyLinearFunction", "weight.T cached in a global under (data_ptr, _version)", _STALE,
            "_WT = {}\n" + edit(_LINEAR, ("        y = x @ weight.T\n",
                                          "        key = (weight.data_ptr(), weight._version)\n"
                                          "        if key not in _WT:\n"
                                          "            _WT.clear()\n"
                                          "            _WT[key] = weight.T.contiguous()\n"
                                          "        y = x @ _WT[key]\n"))),
    Mistake("MyLinearFunction", "grad_weight as x.T @ grad_output",
            "grad_weight has shape (3, 4) but weight has shape (4, 3): a transpose",
            edit(_LINEAR, ("g2.T @ x2", "x.T @ grad_output"))),
    Mistake("MyLinearFunction", "grad_x written into grad_output's buffer where shapes match",
            "backward modified grad_output in place",
            edit(_LINEAR, ("        return grad_x, grad_weight, grad_bias",
                           "        if grad_x is not None and grad_x.shape == grad_output.shape:\n"
                           "            grad_x = grad_output.copy_(grad_x)\n"
                           "        return grad_x, grad_weight, grad_bias"))),
    Mistake("FusedLinearReLU", "the mask cached in a global under the inputs' data_ptr",
            "FusedLinearReLU.forward kept state outside ctx: _MASKS in a module global",
            "_MASKS = {}\n" + edit(_FUSED, ("mask = z > 0", "mask = _MASKS.setdefault("
                                             "(x.data_ptr(), weight.data_ptr()), z > 0)"))),
    Mistake("FusedLinearReLU", "the mask kept in a global under x's data_ptr, not saved",
            "FusedLinearReLU.forward kept state outside ctx: _MASKS in a module global",
            "_MASKS = {}\n" + _fused(
                FUSED_READ.replace("x, weight, mask = ctx.saved_tensors",
                                   "x, weight = ctx.saved_tensors\n"
                                   "        mask = _MASKS[ctx.key]") + FUSED_RETURN,
                FUSED_FORWARD.replace("ctx.save_for_backward(x, weight, mask)",
                                      "ctx.save_for_backward(x, weight)\n"
                                      "        ctx.key = x.data_ptr()\n"
                                      "        _MASKS[ctx.key] = mask"))),
    Mistake("MyLinearFunction", "x @ weight.T cached in a global under the inputs' data_ptr",
            "keeps state in a global",
            "_PRODUCTS = {}\n" + edit(_LINEAR, ("y = x @ weight.T", "y = _PRODUCTS.setdefault("
                                                 "(x.data_ptr(), weight.data_ptr()), "
                                                 "x @ weight.T)"))),
    Mistake("FusedLinearReLU", "grad_weight as x.T @ g",
            "grad_weight has shape (3, 4) but weight has shape (4, 3): a transpose",
            edit(_FUSED, ("g2.T @ x2", "x.T @ g"))),
]

UNUSUAL = [
    Unusual("FusedLinearReLU", "ReLU clamped in place, the mask read back from the output",
            edit(_FUSED, ("        mask = z > 0\n        ctx.save_for_backward(x, weight, mask)\n",
                          "        y = z.clamp_(min=0)\n"
                          "        ctx.save_for_backward(x, weight, (y > 0).reshape(-1))\n"),
                 ("return z.clamp(min=0)", "return y"),
                 ("x, weight, mask = ctx.saved_tensors",
                  "x, weight, flat = ctx.saved_tensors\n"
                  "        mask = flat.view(grad_output.shape)"))),
]
