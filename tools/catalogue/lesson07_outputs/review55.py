"""Lesson 07: review 55's answers. SplitHalves saving x (to read its shape in backward) passed:
the grader exempted tensors sharing x's memory, and a later x.mul_(2) then broke backward; the
contract now says forward saves no tensor, x included. AbsInPlace's sign built from int16
intermediates passed (as large as a float16 x; forward memory was measured on float32 only):
forward memory is now measured on float64, float32, float16 and bfloat16 x. A write under
torch.enable_grad() was named by the copy autograd saved for it, not by the grad mode."""

from .. import Mistake, Unusual, edit
from .abs_in_place import COMPARISONS, abs_answer
from .relu_in_place import _RELU_FORWARD, _relu
from .split_halves import _SPLIT_BACKWARD, _SPLIT_FORWARD, _split

_SPLIT_SAVES_X = _split(edit(_SPLIT_FORWARD, ("        h = ", "        ctx.save_for_backward(x)\n"
                                                           "        h = ")), _SPLIT_BACKWARD)

UNUSUAL = [
    Unusual("SplitHalves", "the width kept on ctx as a Python int, the gradient built from it",
            _split(edit(_SPLIT_FORWARD, ("        h = x.shape[-1] // 2\n",
                                         "        h = x.shape[-1] // 2\n        ctx.h = h\n")),
                   edit(_SPLIT_BACKWARD, ("        h = known.shape[-1]\n",
                                          "        h = ctx.h\n")))),
]

MISTAKES = [
    Mistake("SplitHalves", "x saved to read its shape in backward", "forward saves x",
            edit(_SPLIT_SAVES_X, ("        h = known.shape[-1]\n",
                                  "        x, = ctx.saved_tensors\n"
                                  "        h = x.shape[-1] // 2\n"))),
    Mistake("SplitHalves", "the half width saved as a 0-d tensor", "forward saves a tensor",
            _split(edit(_SPLIT_FORWARD, ("        h = x.shape[-1] // 2\n",
                                         "        h = x.shape[-1] // 2\n"
                                         "        ctx.save_for_backward(torch.tensor(h))\n")),
                   _SPLIT_BACKWARD)),
    Mistake("AbsInPlace", "the sign built from int16 comparisons, then int8",
            "(float16, 128 bytes)", abs_answer(
                (COMPARISONS[0], "sign = ((x > 0).to(torch.int16) - (x < 0).to(torch.int16))"
                                 ".to(torch.int8)"))),
    Mistake("AbsInPlace", "the write made under torch.enable_grad()", "with autograd on",
            abs_answer(COMPARISONS, ("        x.abs_()\n",
                                     "        with torch.enable_grad():\n"
                                     "            x.abs_()\n"))),
    Mistake("ReLUInPlace", "the clamp made under torch.enable_grad()", "with autograd on",
            _relu(edit(_RELU_FORWARD, ("        x.clamp_(min=0)\n",
                                       "        with torch.enable_grad():\n"
                                       "            x.clamp_(min=0)\n")))),
    Mistake("ReLUInPlace", "the clamp as masked_fill_ by an int16 mask made bool", "(float16, 128 bytes)",
            _relu(edit(_RELU_FORWARD, ("x.clamp_(min=0)", "x.masked_fill_((x < 0).to(torch.int16).bool(), 0)")))),
]
