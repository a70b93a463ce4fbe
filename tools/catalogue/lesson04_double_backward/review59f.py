"""Lesson 04, review 59 (sixth round): SwishFunctions whose grad_beta squares x before the small
factor sigma'(beta x), the solution's own form until then: inf (nan where sigma' rounds to 0) at
x = 1e20 in float32 or 1e160 in float64 with beta x = -60, inside |beta x| <= 800. Summing in
float64 does not help: x * x overflowed before the sum (once an unusual answer of review 56b,
whose unusual entry now multiplies by x last). NumpyTanhs whose inner Function narrows to
float32 in forward or in backward (named as a float32 step, not at y = 0); a CubeOnce computing
3y / x from the saved output, guarded at 0 (named without a guessed cube root)."""

from .. import Mistake, Unusual, edit
from .cube_once import _cube
from .numpy_tanh import NUMPY, RIGHT
from .review56 import SWISH, TANH

F32 = "is off by float32 rounding"

MISTAKES = [
    Mistake("NumpyTanh", "inner backward casts gb, g, y to float32", F32,
            edit(TANH, (RIGHT, "        gb, g, y = (a.astype(np.float32) for a in (gb, g, y))\n"
                        + RIGHT)), named=True),
    Mistake("NumpyTanh", "inner forward computes g (1 - y^2) in float32", F32,
            edit(TANH, ("        return torch.from_numpy(g * (1 - y * y))",
                        "        return torch.from_numpy(g.astype(np.float32) "
                        "* (1 - y.astype(np.float32) ** 2))")), named=True),
    Mistake("CubeOnce", "3y / x in NumPy from the saved x and output, guarded at x = 0",
            "computing the derivative from the saved output y (whatever the operation)",
            NUMPY + _cube("        x, y = ctx.saved_tensors\n"
                  "        a, b = x.detach().cpu().numpy(), y.detach().cpu().numpy()\n"
                  "        with np.errstate(all='ignore'):\n"
                  "            local = np.where(a == 0, 0.0, 3 * b / np.where(a == 0, 1, a))"
                  ".astype(a.dtype)\n"
                  "        return grad_output * torch.as_tensor(local).to(x.device)",
                  "        y = x ** 3\n        ctx.save_for_backward(x, y)\n        return y"),
            named=True),
]

UNUSUAL = []

# Correct over the domain a model meets (issue 69 item 4): each was wrong only at x = 1e160 with
# beta = 6e-159, or at betas from 1e-17 down to float64's subnormals (float32's 1e-36), which the
# grader no longer tries. Once mistakes.
UNUSUAL += [
    Unusual("SwishFunction", "grad_beta as (g * x * x * ds).sum(): x * x overflows at huge x",
            SWISH),
    Unusual("SwishFunction", "grad_beta as (g * x * x * ds) summed in float64: still inf",
            edit(SWISH, ("(grad_output * x * x * ds).sum()",
                                   "(grad_output * x * x * ds).sum(dtype=torch.float64)"
                                   ".to(beta.dtype)"))),
]
