"""Lesson 00: answers that differ from autograd only at float extremes no model meets (squares
that overflow or underflow, subnormal x, a 2x that overflows, weights of 1e-310 or 1e200,
inputs of 1e308), which lesson 00 does not teach: its domain is the values a model meets, and
over them each is correct. Until issue 69 the grader probed those extremes and these were
catalogued as mistakes (2 * y / x guarded, nan_to_num or a clamp on the gradient, a gradient
set to 0 below a tiny |x|, a ratio of the weights, x1 + x2 formed first): a deliberate verdict
change. Also the orders of Square's product, which differed only at subnormal x.

Review 76g (issue 69, every numeric clause at both ends of its stated range): Square's "for every
finite x" is graded at both ends of float32's range (autograder/exercises/lesson00_template/
square_extremes.py), so the three below that are wrong there are mistakes again: 2 * y / x
guarded (inf where x ** 2 overflows float32, 0 where it underflows) and the gradient set to 0
for x below the dtype's smallest normal (float32's subnormals). Float64's extremes stay
ungraded: the rest keep their verdicts."""

from .. import Mistake, Unusual

UNUSUAL = [
    Unusual("Square", "2 * y / x below float64's smallest normal y guarded: wrong in float32",
            """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x ** 2
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        safe = torch.where(x == 0, torch.ones_like(x), x)
        return grad_output * torch.where(x == 0, torch.zeros_like(x), torch.where(torch.isinf(y), 2 * x, torch.where(y.double() < 2.3e-308, 2 * x, 2 * y / safe)))
"""),
    Unusual("Square", "nan_to_num on the gradient: the largest float where 2x overflows",
            """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return torch.nan_to_num(2 * x * grad_output)
"""),
    Unusual("Square", "the gradient clamped to float32's range, in float32 only",
            """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        r = 2 * x * grad_output
        if r.dtype == torch.float32:
            r = r.clamp(-3.4e38, 3.4e38)
        return r
"""),
    Unusual("Square", "nan_to_num on the output: the largest float where x ** 2 overflows",
            """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.nan_to_num(x ** 2)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return 2 * x * grad_output
"""),
    Unusual("Square", "the gradient clamped to the largest float64 where 2x overflows",
            """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        r = 2 * x * grad_output
        if r.dtype == torch.float64:
            r = r.clamp(-1.7e308, 1.7e308)
        return r
"""),
    Unusual("Square", "the gradient set to 0 where |x| < 1e-150",
            """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return torch.where(x.abs() < 1e-150, torch.zeros_like(x), 2 * x * grad_output)
"""),
    Unusual("Square", "the gradient set to 0 where |x| < 1e-200",
            """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return torch.where(x.abs() < 1e-200, torch.zeros_like(x), 2 * x * grad_output)
"""),
    Unusual("WeightedSum", "grad_x2 as grad_x1 * (w2 / w1), guarded at w1 = 0",
            """
class WeightedSum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x1, x2, w1, w2):
        ctx.w1, ctx.w2 = w1, w2
        return w1 * x1 + w2 * x2

    @staticmethod
    def backward(ctx, grad_output):
        g1 = grad_output * ctx.w1
        g2 = g1 * (ctx.w2 / ctx.w1) if ctx.w1 != 0 else grad_output * ctx.w2
        need_x1, need_x2 = ctx.needs_input_grad[:2]
        return g1 if need_x1 else None, g2 if need_x2 else None, None, None
"""),
    Unusual("WeightedSum", "grad_x2 through the ratio w2 / w1 where it is finite",
            """import math

class WeightedSum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x1, x2, w1, w2):
        ctx.w1, ctx.w2 = w1, w2
        return w1 * x1 + w2 * x2

    @staticmethod
    def backward(ctx, grad_output):
        g1 = grad_output * ctx.w1
        g2 = g1 * (ctx.w2 / ctx.w1) if ctx.w1 != 0 and math.isfinite(ctx.w2 / ctx.w1) else grad_output * ctx.w2
        need_x1, need_x2 = ctx.needs_input_grad[:2]
        return g1 if need_x1 else None, g2 if need_x2 else None, None, None
"""),
    Unusual("WeightedSum", "forward rescaled: w1 * (x1 + (w2 / w1) * x2)",
            """
class WeightedSum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x1, x2, w1, w2):
        ctx.w1, ctx.w2 = w1, w2
        if w1 == 0:
            return w2 * x2 + 0 * x1
        return w1 * (x1 + (w2 / w1) * x2)

    @staticmethod
    def backward(ctx, grad_output):
        need_x1, need_x2 = ctx.needs_input_grad[:2]
        return (grad_output * ctx.w1 if need_x1 else None,
                grad_output * ctx.w2 if need_x2 else None, None, None)
"""),
    Unusual("WeightedSum", "w1 * (x1 + x2) when w1 == w2: x1 + x2 overflows",
            """
class WeightedSum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x1, x2, w1, w2):
        ctx.w1, ctx.w2 = w1, w2
        if w1 == w2:
            return w1 * (x1 + x2)
        return w1 * x1 + w2 * x2

    @staticmethod
    def backward(ctx, grad_output):
        need_x1, need_x2 = ctx.needs_input_grad[:2]
        return (grad_output * ctx.w1 if need_x1 else None,
                grad_output * ctx.w2 if need_x2 else None, None, None)
"""),
    Unusual("Square", "grad_output * 2 * x: the finite product where only 2x overflows",
            """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * 2 * x
"""),
    Unusual("Square", "x * grad_output * 2: the product formed before the factor 2",
            """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return x * grad_output * 2
"""),
    Unusual("Square", "the product in the order (x * grad_output) * 2",
            """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return (x * grad_output) * 2
"""),
]


MISTAKES = [
    Mistake("Square", "2 * y / x with x = 0 guarded: inf where x ** 2 overflows",
            "x ** 2 overflows float32 there",
            """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x ** 2
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        safe = torch.where(x == 0, torch.ones_like(x), x)
        return grad_output * torch.where(x == 0, torch.zeros_like(x), 2 * y / safe)
"""),
    Mistake("Square", "2 * y / x guarded at x = 0 and where y is inf: 0 where x ** 2 underflows",
            "or go through the output y = x ** 2, which is subnormal or 0 in float32",
            """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x ** 2
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        safe = torch.where(x == 0, torch.ones_like(x), x)
        return grad_output * torch.where(x == 0, torch.zeros_like(x), torch.where(torch.isinf(y), 2 * x, 2 * y / safe))
"""),
    Mistake("Square", "the gradient set to 0 for subnormal x (below float64's smallest normal)",
            "does backward set a small |x|'s gradient to 0 (a threshold)",
            """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return torch.where(x.abs() < torch.finfo(x.dtype).tiny, torch.zeros_like(x), 2 * x * grad_output)
"""),
]
