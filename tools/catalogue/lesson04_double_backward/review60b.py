"""Lesson 04, review 60 (second round): NumpyTanh's inner Function saving torch.from_numpy of
grad_output's (or y's) NumPy array, which shares the memory but not autograd's version counter:
both passed both checks, and the contract's "no copy" means the version counter, as CubeOnce's
does. The first lines that guessed a cause the probe had not confirmed (a clamp for a sigma'
lost to cancellation, a 'beta is about 0' branch for a product that underflows) now state what
the numbers show; a nan grad_beta at beta = 0 names the point, and a 3x^2 rounded to float16 is
named as such instead of a bare largest error."""

from .. import Mistake, Unusual, edit
from .numpy_tanh import CALL, RIGHT, UNUSUAL as TANH_UNUSUAL, _inner, _tanh
from .review56 import CUBE
from .review60 import SOLUTION

TANH = _tanh(CALL, _inner(RIGHT))
UNGUARDED = "saves a tensor made from"

MISTAKES = [
    # passed both checks: an in-place change to grad_output between the passes went unseen
    Mistake("NumpyTanh", "the inner Function saves torch.from_numpy(grad_output.numpy())",
            UNGUARDED,
            edit(TANH, ("        ctx.save_for_backward(g, y)\n",
                        "        ctx.save_for_backward(torch.from_numpy(g.detach().numpy()), y)\n")),
            named=True),
    Mistake("NumpyTanh", "the inner Function saves torch.from_numpy(y.numpy()) for y (passed "
            "both checks)", "saves a tensor made from y's memory",
            edit(TANH, ("        ctx.save_for_backward(g, y)\n",
                        "        ctx.save_for_backward(g, torch.from_numpy(y.detach().numpy()))\n"))),
]
MISTAKES += [  # the same hole through .data, and for x where the inner Function takes x
    Mistake("NumpyTanh", "the inner Function saves grad_output.data", UNGUARDED,
            edit(TANH, ("        ctx.save_for_backward(g, y)\n",
                        "        ctx.save_for_backward(g.data, y)\n"))),
    Mistake("NumpyTanh", "the inner Function takes x and saves torch.from_numpy(x.numpy())",
            "saves a tensor made from x's memory",
            edit(TANH_UNUSUAL[0].code, ("ctx.save_for_backward(x, grad_out)",
                                        "ctx.save_for_backward(torch.from_numpy(x.detach()"
                                        ".numpy()), grad_out)"))),
]
MISTAKES += [
    Mistake("SwishFunction", "sigma' as s(-z) - s(-z)^2, which cancels to 0 in the tail (was "
            "asked whether backward clamps beta * x)", "so its term beta x sigma'(beta x) came out",
            edit(SOLUTION, ("        ds = s * (1 - s)\n",
                            "        ds = torch.sigmoid(-beta * x) - torch.sigmoid(-beta * x) ** 2\n"))),
    Mistake("SwishFunction", "grad_beta as (x's gradient - s) * x / beta: nan at beta = 0",
            "(nan, with beta = 0)",
            edit(SOLUTION, ("(grad_output * x * ds * x).sum()",
                            "(grad_output * (s + beta * x * ds - s) * x / beta).sum()"))),
    Mistake("CubeOnce", "3x^2 cast to float16 in backward (torch.as_tensor(..., "
            "dtype=torch.float16))", "3x^2 rounded to float16",
            edit(CUBE, ("torch.as_tensor(3 * x.detach().cpu().numpy() ** 2)",
                        "torch.as_tensor(3 * x.detach().cpu().numpy() ** 2, dtype=torch.float16)"))),
]
UNUSUAL = []

# Correct over the domain a model meets (issue 69 item 4): each was wrong only at x = 1e160 with
# beta = 6e-159, or at betas from 1e-17 down to float64's subnormals (float32's 1e-36), which the
# grader no longer tries. Once mistakes.
UNUSUAL += [
    Unusual("SwishFunction", "x's gradient as s + beta * ds * x: beta * ds underflows for a tiny "
            "beta (was asked about a 'beta is about 0' branch)",
            edit(SOLUTION, ("(s + beta * x * ds)", "(s + beta * ds * x)"))),
]
