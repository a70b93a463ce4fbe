"""Lesson 02: layouts the domain's checks missed, found by surviving mutants. They graded
strided inputs with a bias given, all inputs of one layout at once, so a forward whose bias=None
branch views x (x1, x2) passed (the setup_context FusedLinearReLU's no-bias x.reshape as
.view), and so did Bilinear's outer product a[:, :, None] * b[:, None, :] flattened with .view,
which has no flat view when x1 alone is transposed (four catalogued answers' reshape as view).
Each layout now runs with bias=None too, and on each input alone
(autograder/exercises/lesson02_linear/layouts.py), in all three exercises."""

from .. import Mistake, edit
from .bilinear import GW, GX1, GX2, _bilinear_with
from .domains import VIEW_OF_X
from .mask_arithmetic import UNUSUAL as _REVIEW55
from .whole_cells import UNUSUAL as _WHOLE

_SETUP_FUSED = next(answer.code for answer in _WHOLE
                    if answer.name == "setup_context form, a dead mask read off the output")
_PER_ROW = next(answer.code for answer in _REVIEW55 if answer.exercise == "Bilinear")
_VIEW = "view size is not compatible"

MISTAKES = [
    Mistake("FusedLinearReLU", "x flattened with .view on the bias=None path only",
            "FusedLinearReLU.forward raised RuntimeError with x of shape (2, 3, 4), weight of "
            f"shape (5, 4): {_VIEW}",
            edit(_SETUP_FUSED, ("if bias is not None else x.reshape(-1, x.shape[-1]) @ weight.T",
                                "if bias is not None else x.view(-1, x.shape[-1]) @ weight.T"))),
    Mistake("MyLinearFunction", "x flattened with .view on the bias=None path only",
            "MyLinearFunction.forward raised RuntimeError with x of shape (2, 3, 4), weight of "
            f"shape (5, 4): {_VIEW}",
            edit(VIEW_OF_X, ("        y = x.view(-1, x.shape[-1]) @ weight.T\n"
                             "        if bias is not None:\n            y = y + bias\n",
                             "        if bias is None:  # no bias to add: one flat product\n"
                             "            y = x.view(-1, x.shape[-1]) @ weight.T\n"
                             "        else:\n"
                             "            y = torch.addmm(bias, x.reshape(-1, x.shape[-1]), "
                             "weight.T)\n"))),
    Mistake("Bilinear", "x1 and x2 flattened with .view on the bias=None path only",
            f"Bilinear.forward raised RuntimeError with x1 of shape (2, 4, 3), x2 of shape "
            f"(2, 4, 2), weight of shape (5, 3, 2): {_VIEW}",
            edit(_bilinear_with(GX1, GX2, GW),
                 ("        y = torch.einsum('...i,oij,...j->...o', x1, weight, x2)\n"
                  "        return y + bias if bias is not None else y",
                  "        if bias is not None:\n"
                  "            return torch.einsum('...i,oij,...j->...o', x1, weight, x2) + bias\n"
                  "        a, b = x1.view(-1, x1.shape[-1]), x2.view(-1, x2.shape[-1])\n"
                  "        y = torch.einsum('mi,oij,mj->mo', a, weight, b)\n"
                  "        return y.reshape(*x1.shape[:-1], weight.shape[0])"))),
    Mistake("Bilinear", "outer product of x1 and x2 rows flattened with .view",
            "Bilinear.backward raised RuntimeError with x1 of shape (5, 3)",
            edit(_PER_ROW, ("outer = (a[:, :, None] * b[:, None, :]).reshape(",
                            "outer = (a[:, :, None] * b[:, None, :]).view("))),
]
