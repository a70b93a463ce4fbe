"""Lesson 04, review 58: NumpyTanh built from exponentials, right wherever x = 1.5 randn and the
saturation points up to |x| = 25 reach, nan where exp(2|x|) overflows (|x| past 355 in float64,
44 in float32): (e^2x - 1) / (e^2x + 1), sinh / cosh, the form in e^-2x (wrong for large
negative x), 2x clamped to +-700 (float64's range, not float32's), and an inner Function
computing tanh'(x) as 4 e^2x / (e^2x + 1)^2 from a saved x, in its forward (a nan first
derivative) or in its backward only (a nan second derivative)."""

from .. import Mistake, edit
from .numpy_tanh import CALL, RIGHT, _inner, _tanh

TANH = _tanh(CALL, _inner(RIGHT))
TANH_OF_A = "torch.from_numpy(np.tanh(x.detach().numpy()))"
EXP = "(lambda e: (e - 1) / (e + 1))(np.exp(2 * x.detach().numpy()))"
SINH = "(lambda a: np.sinh(a) / np.cosh(a))(x.detach().numpy())"
EXP_NEG = "(lambda e: (1 - e) / (1 + e))(np.exp(-2 * x.detach().numpy()))"
# clamped for float64's exp (past 709.8 it overflows), not for float32's (past 88.7)
CLAMPED = "(lambda e: (e - 1) / (e + 1))(np.exp(np.clip(2 * x.detach().numpy(), -700, 700)))"

SAVED_X = _tanh("        x, = ctx.saved_tensors\n        return _TanhGradOfX.apply(grad_output, x)",
                """
class _TanhGradOfX(torch.autograd.Function):
    @staticmethod
    def forward(ctx, g, x):
        ctx.save_for_backward(g, x)
        e = np.exp(2 * x.detach().numpy())
        return torch.from_numpy(g.detach().numpy() * 4 * e / (e + 1) ** 2)

    @staticmethod
    def backward(ctx, grad_b):
        g, x = ctx.saved_tensors
        gb, g, a = grad_b.detach().numpy(), g.detach().numpy(), x.detach().numpy()
        t = np.tanh(a)
        d = 1 - t * t
        return torch.from_numpy(gb * d), torch.from_numpy(-2 * gb * g * t * d)
""", "        ctx.save_for_backward(x)\n        return torch.from_numpy(np.tanh(x.detach().numpy()))")

SECOND_ONLY = edit(
    SAVED_X, ("        e = np.exp(2 * x.detach().numpy())\n        return torch.from_numpy(g.detach()"
              ".numpy() * 4 * e / (e + 1) ** 2)", "        t = np.tanh(x.detach().numpy())\n"
              "        return torch.from_numpy(g.detach().numpy() * (1 - t * t))"),
    ("        t = np.tanh(a)\n        d = 1 - t * t\n",
     "        t = np.tanh(a)\n        e = np.exp(2 * a)\n        d = 4 * e / (e + 1) ** 2\n"))

MISTAKES = [
    Mistake("NumpyTanh", "forward computes (e^2x - 1) / (e^2x + 1)",
            "NumpyTanh(x) is nan at x = 400 (float64), where tanh is +1",
            edit(TANH, (TANH_OF_A, f"torch.from_numpy({EXP})")), named=True),
    Mistake("NumpyTanh", "forward computes sinh / cosh", "NumpyTanh(x) is nan at x = -10000 "
            "(float64)", edit(TANH, (TANH_OF_A, f"torch.from_numpy({SINH})"))),
    Mistake("NumpyTanh", "forward computes (1 - e^-2x) / (1 + e^-2x), nan for large negative x",
            "NumpyTanh(x) is nan at x = -10000 (float64)",
            edit(TANH, (TANH_OF_A, f"torch.from_numpy({EXP_NEG})"))),
    Mistake("NumpyTanh", "forward computes (e^2x - 1) / (e^2x + 1) with 2x clamped to +-700",
            "NumpyTanh(x) is nan at x = 50 (float32)",
            edit(TANH, (TANH_OF_A, f"torch.from_numpy({CLAMPED})"))),
    Mistake("NumpyTanh", "the inner Function computes tanh'(x) as 4 e^2x / (e^2x + 1)^2",
            "its first derivative is nan at x = 400 (float64)", SAVED_X),
    Mistake("NumpyTanh", "the inner Function's backward computes tanh'(x) as 4 e^2x / (e^2x + 1)^2",
            "NumpyTanh's second derivative with respect to x is nan at x = 400 (float64)",
            SECOND_ONLY),
]

UNUSUAL = []
