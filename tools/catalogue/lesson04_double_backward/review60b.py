"""Lesson 04, review 60 (second round): NumpyTanh's inner Function saving torch.from_numpy of
grad_output's (or y's) NumPy array, which shares the memory but not autograd's version counter:
both passed both checks, and the contract's "no copy" means the version counter, as CubeOnce's
does."""

from .. import Mistake, edit
from .numpy_tanh import CALL, RIGHT, _inner, _tanh

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
UNUSUAL = []
