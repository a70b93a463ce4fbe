"""Lesson 04, review 59 (third round): a SwishFunction whose backward clamps beta * x (to +-80,
in both dtypes, in float32 only, or for beta's gradient only), wrong by a factor of 1e8 in the
sigmoid's saturated tail where an absolute tolerance saw nothing; a CubeOnce whose 3x^2 is
cast to float32 (named as the cast, not as x ** 3 leaving the range); two sigmoids built as
(1 + tanh(z / 2)) / 2, once unusual, now wrong in that tail; and the reviewer's NumpyTanh whose
inner Function saves -2gy, correct."""

from .. import Mistake, Unusual, edit
from .numpy_tanh import CALL, _tanh
from .review56 import CUBE, SWISH
from .review56b import TANH_SIGMOID_SAVES_Y
from .review58c import TANH_SIGMOID
from .swish import TANH_SIGMOID_DOT

TAIL = "wrong in the sigmoid's saturated tail"
CLAMPED = "s = 1 / (1 + torch.exp(-(beta * x).clamp(-80, 80)))"
NUMPY_TANH_INNER = """
class _TanhGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, g, y):
        gn, yn = g.detach().numpy(), y.detach().numpy()
        ctx.save_for_backward(torch.from_numpy(-2 * gn * yn), y)  # a new tensor, not a copy
        return torch.from_numpy(gn * (1 - yn * yn))

    @staticmethod
    def backward(ctx, grad_b):
        m2gy, y = ctx.saved_tensors
        gb, yn = grad_b.detach().numpy(), y.detach().numpy()
        return torch.from_numpy(gb * (1 - yn * yn)), torch.from_numpy(gb * m2gy.numpy())
"""

MISTAKES = [
    Mistake("SwishFunction", "beta * x clamped to +-80 in backward (1 / (1 + exp(-z)))", TAIL,
            edit(SWISH, ("s = torch.sigmoid(beta * x)", CLAMPED)), named=True),
    Mistake("SwishFunction", "beta * x clamped to +-80 for a float32 x only", TAIL,
            edit(SWISH, ("s = torch.sigmoid(beta * x)",
                         "z = beta * x\n        z = z.clamp(-80, 80) if z.dtype == torch.float32 "
                         "else z\n        s = torch.sigmoid(z)"))),
    Mistake("SwishFunction", "beta * x clamped to +-80 in beta's gradient only",
            "your gradient for beta is " + TAIL,
            edit(SWISH, ("(grad_output * x * x * ds).sum()",
                         "(grad_output * x * x * torch.sigmoid((beta * x).clamp(-80, 80))"
                         " * torch.sigmoid(-(beta * x).clamp(-80, 80))).sum()"))),
    # Accepted as unusual (swish.py, reviews 56b and 58c) before the tail was graded relatively:
    # 1 + tanh(z / 2) cancels to 0 where sigma(z) is tiny but normal.
    Mistake("SwishFunction", "sigmoid as (1 + tanh(z / 2)) / 2, output saved, einsum grad_beta",
            "which torch.sigmoid keeps to full relative precision", TANH_SIGMOID_SAVES_Y),
    Mistake("SwishFunction", "sigmoid as (1 + tanh(z / 2)) / 2, grad_beta by einsum, "
            "needs_input_grad", "which step of your backward rounds it to 0", TANH_SIGMOID),
    Mistake("SwishFunction", "sigmoid from tanh, beta gradient as a dot product",
            "which step of your backward rounds it to 0", TANH_SIGMOID_DOT),
    Mistake("CubeOnce", "3x^2 cast to float32 in backward (torch.as_tensor(..., dtype=float32))",
            "is 3x^2 rounded to float32",
            edit(CUBE, ("torch.as_tensor(3 * x.detach().cpu().numpy() ** 2)",
                        "torch.as_tensor(3 * x.detach().cpu().numpy() ** 2, "
                        "dtype=torch.float32)")), named=True),
]

UNUSUAL = [
    Unusual("NumpyTanh", "the inner Function saves -2gy (new memory, not a copy) and y",
            _tanh(CALL, NUMPY_TANH_INNER)),
]
