"""Lesson 04's transfer exercise, NumpyTanh, answered unusually and wrongly: its builders, then
answers by what they get wrong or right: torch arithmetic where NumPy is asked for, the inner
Function's inputs, outputs and gradients, what each Function saves (copies, aliases, dtypes),
saturation where tanh rounds to +-1, writes through .numpy(), and state kept outside ctx."""

import dataclasses

from .. import CACHED_BY_TENSOR, Mistake, Unusual, edit

NUMPY = "import numpy as np\n"
FORWARD = ("        y = torch.from_numpy(np.tanh(x.detach().numpy()))\n"
           "        ctx.save_for_backward(y)\n        return y")


def _tanh(backward: str, inner: str = "", forward: str = FORWARD) -> str:
    return f"""{NUMPY}
{inner}

class NumpyTanh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
{forward}

    @staticmethod
    def backward(ctx, grad_output):
{backward}
"""


def _inner(backward: str) -> str:
    return f"""
class _TanhGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, g, y):
        ctx.save_for_backward(g, y)
        g, y = g.detach().numpy(), y.detach().numpy()
        return torch.from_numpy(g * (1 - y * y))

    @staticmethod
    def backward(ctx, grad_b):
        g, y = ctx.saved_tensors
        gb, g, y = grad_b.detach().numpy(), g.detach().numpy(), y.detach().numpy()
{backward}
"""


CALL = "        y, = ctx.saved_tensors\n        return _TanhGrad.apply(grad_output, y)"
RIGHT = "        return torch.from_numpy(gb * (1 - y * y)), torch.from_numpy(-2 * gb * g * y)"
# RIGHT with each gradient gated on its ctx.needs_input_grad entry (rule 2: on a second derivative
# with a grad_output that requires no grad, only y's is asked for), for the unusual answers
RIGHT_GATED = ("        dg = torch.from_numpy(gb * (1 - y * y)) if ctx.needs_input_grad[0] else None\n"
               "        dy = torch.from_numpy(-2 * gb * g * y) if ctx.needs_input_grad[1] else None\n"
               "        return dg, dy")

UNUSUAL = [
    Unusual("NumpyTanh", "the PyTorch tutorial's layout: NumPy helper functions, the input saved",
            NUMPY + """
def tanh_forward(x):
    return np.tanh(x)


def tanh_backward(grad_out, x):
    return grad_out / np.cosh(x) ** 2


def tanh_backward_backward(grad_out, saved_grad_out, x):
    return -2 * grad_out * saved_grad_out * np.tanh(x) / np.cosh(x) ** 2


def to_numpy(t):
    return t.detach().cpu().numpy()


class NumpyTanh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.from_numpy(tanh_forward(to_numpy(x))).to(x.device)

    @staticmethod
    def backward(ctx, grad_out):
        x, = ctx.saved_tensors
        return NumpyTanhBackward.apply(grad_out, x)


class NumpyTanhBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, grad_out, x):
        ctx.save_for_backward(x, grad_out)
        return torch.from_numpy(tanh_backward(to_numpy(grad_out), to_numpy(x)))

    @staticmethod
    def backward(ctx, grad_out):
        x, saved_grad_out = ctx.saved_tensors
        dgrad_out = dx = None
        if ctx.needs_input_grad[0]:
            dgrad_out = torch.from_numpy(tanh_backward(to_numpy(grad_out), to_numpy(x)))
        if ctx.needs_input_grad[1]:
            dx = torch.from_numpy(tanh_backward_backward(
                to_numpy(grad_out), to_numpy(saved_grad_out), to_numpy(x)))
        return dgrad_out, dx
"""),
    Unusual("NumpyTanh", "an inner Function on (grad_output, y) with needs_input_grad",
            _tanh(CALL, _inner(
                "        dg = torch.from_numpy(gb * (1 - y * y)) if ctx.needs_input_grad[0] "
                "else None\n"
                "        dy = torch.from_numpy(-2 * gb * g * y) if ctx.needs_input_grad[1] "
                "else None\n        return dg, dy"))),
    Unusual("NumpyTanh", "torch.as_tensor conversions and the output kept as NumPy-made float64",
            _tanh(CALL, _inner(RIGHT_GATED),
                  "        y = torch.as_tensor(np.tanh(x.detach().cpu().numpy()), "
                  "dtype=x.dtype)\n        ctx.save_for_backward(y)\n        return y")),
]

INNER_ON_X = """
class _TanhGradOfX(torch.autograd.Function):
    @staticmethod
    def forward(ctx, g, x):
        ctx.save_for_backward(g, x)
        t = np.tanh(x.detach().numpy())
        return torch.from_numpy(g.detach().numpy() * (1 - t * t))

    @staticmethod
    def backward(ctx, grad_b):
        g, x = (a.detach().numpy() for a in ctx.saved_tensors)
        gb, t = grad_b.detach().numpy(), np.tanh(x)
        return torch.from_numpy(gb * (1 - t * t)), torch.from_numpy(-2 * gb * g * t * (1 - t * t))
"""
INNER_ON_X_GATED = INNER_ON_X.replace(
    "        return torch.from_numpy(gb * (1 - t * t)), torch.from_numpy(-2 * gb * g * t * (1 - t * t))",
    "        dg = torch.from_numpy(gb * (1 - t * t)) if ctx.needs_input_grad[0] else None\n"
    "        dx = torch.from_numpy(-2 * gb * g * t * (1 - t * t)) if ctx.needs_input_grad[1] "
    "else None\n        return dg, dx")
assert INNER_ON_X_GATED != INNER_ON_X
SAVE_X = ("        ctx.save_for_backward(x)\n"
          "        return torch.from_numpy(np.tanh(x.detach().numpy()))")
UNUSUAL += [
    Unusual("NumpyTanh", "x saved, the inner Function on (grad_output, x) takes tanh itself",
            _tanh("        x, = ctx.saved_tensors\n        return _TanhGradOfX.apply(grad_output, x)",
                  INNER_ON_X_GATED, SAVE_X)),
    Unusual("NumpyTanh", "inner backward marked @once_differentiable (its NumPy has no third "
            "derivative)", _tanh(CALL, _inner(RIGHT_GATED).replace(
                "    @staticmethod\n    def backward", "    @staticmethod\n    @once_differentiable\n"
                "    def backward"))),
    Unusual("NumpyTanh", "conversions as helpers: numpy(force=True), as_tensor with like's "
            "dtype and device",
            NUMPY + """
def to_numpy(t):
    return t.numpy(force=True)


def to_torch(a, like):
    return torch.as_tensor(a, dtype=like.dtype, device=like.device)


class TanhGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, g, y):
        ctx.save_for_backward(g, y)
        return to_torch(to_numpy(g) * (1 - to_numpy(y) ** 2), g)

    @staticmethod
    def backward(ctx, gb):
        g, y = ctx.saved_tensors
        gb, gn, yn = to_numpy(gb), to_numpy(g), to_numpy(y)
        return (to_torch(gb * (1 - yn ** 2), g) if ctx.needs_input_grad[0] else None,
                to_torch(-2 * gb * gn * yn, y) if ctx.needs_input_grad[1] else None)


class NumpyTanh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = to_torch(np.tanh(to_numpy(x)), x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return TanhGrad.apply(grad_output, y)
"""),
]

MISTAKES = [
    # review 52: made contiguous "for NumPy", so a transposed grad_output is saved as a copy
    Mistake("NumpyTanh", "grad_output.contiguous() handed to the inner Function, which saves it",
            "the Function NumpyTanh's backward calls saves a copy of grad_output",
            _tanh("        y, = ctx.saved_tensors\n"
                  "        return _TanhGrad.apply(grad_output.contiguous(), y)", _inner(RIGHT))),
    # review 80 (T2): the inner Function only when grad_output requires grad, plain NumPy
    # otherwise; a .sum() loss's grad_output needs no grad, so its second derivative is lost
    Mistake("NumpyTanh", "the inner Function only when grad_output requires grad",
            "your backward records its ops only when grad_output requires grad",
            _tanh("        y, = ctx.saved_tensors\n"
                  "        if grad_output.requires_grad:\n"
                  "            return _TanhGrad.apply(grad_output, y)\n"
                  "        g, a = grad_output.detach().numpy(), y.detach().numpy()\n"
                  "        return torch.from_numpy(np.asarray(g * (1 - a * a)))",
                  _inner(RIGHT_GATED))),
    Mistake("NumpyTanh", "forward saves a float64 y and returns it cast to x's dtype",
            "forward saved the output as float64 before its cast",
            _tanh(CALL, _inner(RIGHT),
                  "        y = torch.from_numpy(np.tanh(x.detach().numpy().astype(np.float64)))\n"
                  "        ctx.save_for_backward(y)\n        return y.to(x.dtype)")),
    Mistake("NumpyTanh", "forward keeps a NumPy tanh array on ctx", "NumpyTanh keeps a NumPy "
            "array as ctx.y", _tanh("        y = torch.from_numpy(ctx.y)\n"
                                    "        return _TanhGrad.apply(grad_output, y)", _inner(RIGHT),
                                    "        ctx.y = np.tanh(x.detach().numpy())\n"
                                    "        return torch.from_numpy(ctx.y.copy())")),
    # right while grad_output requires grad (both entries True); a Hessian-vector product's
    # grad_output does not, and then dy is dropped
    Mistake("NumpyTanh", "inner backward tests the other input's needs_input_grad entry",
            "when grad_output does not require grad",
            _tanh(CALL, _inner(
                "        dg = torch.from_numpy(gb * (1 - y * y)) if ctx.needs_input_grad[1] "
                "else None\n"
                "        dy = torch.from_numpy(-2 * gb * g * y) if ctx.needs_input_grad[0] "
                "else None\n        return dg, dy"))),
    Mistake("NumpyTanh", "inner Function saves grad_output as float32", "saves grad_output as "
            "float32 for float64 x",
            _tanh(CALL, _inner(RIGHT).replace("ctx.save_for_backward(g, y)",
                                              "ctx.save_for_backward(g.float(), y)"))),
    Mistake("NumpyTanh", "forward saves y.clone() and returns y", "forward saved a copy of the "
            "output", _tanh(CALL, _inner(RIGHT), FORWARD.replace("ctx.save_for_backward(y)",
                                                                "ctx.save_for_backward(y.clone())"))),
    Mistake("NumpyTanh", "inner Function saves y.clone()", "saves a copy of y",
            _tanh(CALL, _inner(RIGHT).replace("ctx.save_for_backward(g, y)",
                                              "ctx.save_for_backward(g, y.clone())"))),
    Mistake("NumpyTanh", "torch.tanh in forward", "NumpyTanh.forward computes with the torch op",
            _tanh(CALL, _inner(RIGHT), "        y = torch.tanh(x)\n"
                  "        ctx.save_for_backward(y)\n        return y")),
    Mistake("NumpyTanh", "tanh built from torch.exp in forward", "NumpyTanh.forward computes "
            "with the torch op",
            _tanh(CALL, _inner(RIGHT), "        e = torch.exp(-2 * x)\n        y = (1 - e) / (1 + e)\n"
                  "        ctx.save_for_backward(y)\n        return y")),
    Mistake("NumpyTanh", "torch arithmetic in backward", "NumpyTanh.backward computes with the "
            "torch op", _tanh("        y, = ctx.saved_tensors\n"
                              "        return grad_output * (1 - y * y)")),
    Mistake("NumpyTanh", "a NumPy backward and nothing more", "grad_x from NumpyTanh's backward "
            "is cut off from autograd",
            _tanh("        y, = ctx.saved_tensors\n        g = grad_output.detach().numpy()\n"
                  "        return torch.from_numpy(g * (1 - y.detach().numpy() ** 2))"),
            named=True, nbgrader=True),
    Mistake("NumpyTanh", "once_differentiable", "NumpyTanh's backward is marked "
            "@once_differentiable: a second backward through it raised the mark's error",
            _tanh("        y, = ctx.saved_tensors\n        g = grad_output.detach().numpy()\n"
                  "        return torch.from_numpy(g * (1 - y.detach().numpy() ** 2))"
                  ).replace("    @staticmethod\n    def backward",
                            "    @staticmethod\n    @once_differentiable\n    def backward"),
            named=True),
    Mistake("NumpyTanh", "a detached y passed to the inner Function", "with respect to x is zero: "
            "the y (or x) your backward passes",
            _tanh("        y, = ctx.saved_tensors\n"
                  "        return _TanhGrad.apply(grad_output, y.detach())", _inner(RIGHT))),
    Mistake("NumpyTanh", "inner backward gives y nothing", "with respect to x is wrong",
            _tanh(CALL, _inner("        return torch.from_numpy(gb * (1 - y * y)), None"))),
    Mistake("NumpyTanh", "inner backward: +2 g y", "with respect to x has the wrong sign",
            _tanh(CALL, _inner("        return torch.from_numpy(gb * (1 - y * y)), "
                               "torch.from_numpy(2 * gb * g * y)"))),
    Mistake("NumpyTanh", "inner backward in torch", "the backward of NumpyTanh's backward "
            "computes with the torch op",
            _tanh(CALL, _inner("        g, y = ctx.saved_tensors\n"
                               "        return grad_b * (1 - y * y), -2 * grad_b * g * y"))),
    Mistake("NumpyTanh", "inner backward returns its two gradients swapped", "returns its two "
            "gradients in the wrong order",
            _tanh(CALL, _inner("        return torch.from_numpy(-2 * gb * g * y), "
                               "torch.from_numpy(gb * (1 - y * y))"))),
    Mistake("NumpyTanh", "inner backward's gradient for y without grad_output", "lacks the "
            "factor grad_output", _tanh(CALL, _inner("        return torch.from_numpy(gb * (1 - y "
                                                     "* y)), torch.from_numpy(-2 * gb * y)"))),
    Mistake("NumpyTanh", "inner backward returns one gradient", "returned 1 gradient from its "
            "backward, for 2 inputs", _tanh(CALL, _inner("        return "
                                                         "torch.from_numpy(-2 * gb * g * y)"))),
    Mistake("NumpyTanh", "x saved and used as y", "your gradient for x is 1 - x**2",
            _tanh("        x, = ctx.saved_tensors\n        return _TanhGrad.apply(grad_output, x)",
                  _inner(RIGHT), SAVE_X)),
]

INNER_FORWARD = ("        g, y = g.detach().numpy(), y.detach().numpy()\n"
                 "        return torch.from_numpy(g * (1 - y * y))")
MISTAKES += [
    Mistake("NumpyTanh", "forward writes tanh into x through .numpy() (np.tanh(a, out=a))",
            "NumpyTanh's forward wrote into its input x",
            _tanh(CALL, _inner(RIGHT), "        a = x.detach().numpy()\n        np.tanh(a, out=a)\n"
                  "        y = torch.from_numpy(a.copy())\n        ctx.save_for_backward(y)\n"
                  "        return y")),
    Mistake("NumpyTanh", "inner forward squares the saved y in place through .numpy()",
            "NumpyTanh's backward (its own, or the forward of the Function it calls) wrote into "
            "its output y",
            _tanh(CALL, _inner(RIGHT).replace(INNER_FORWARD, INNER_FORWARD.replace(
                "\n        return torch.from_numpy(g * (1 - y * y))",
                "\n        y *= y\n        return torch.from_numpy(g * (1 - y))")))),
    Mistake("NumpyTanh", "inner backward multiplies the saved grad_output in place",
            "NumpyTanh's second backward (the backward of the Function its backward calls) wrote "
            "into grad_output",
            _tanh(CALL, _inner("        g *= gb\n        return torch.from_numpy(gb * (1 - y * y)), "
                               "torch.from_numpy(-2 * g * y)"))),
]
MISTAKES += [
    Mistake("NumpyTanh", "inner backward scales grad_b in place to reuse its memory",
            "NumpyTanh's second backward (the backward of the Function its backward calls) wrote "
            "into the gradient its backward's Function receives",
            _tanh(CALL, _inner("        gb *= 1 - y * y\n        return torch.from_numpy(gb), "
                               "torch.from_numpy(-2 * gb * g * y / (1 - y * y))"))),
]
MISTAKES += [
    Mistake("NumpyTanh", "forward saves a second torch.from_numpy of the same array",
            "is an intermediate, so ctx.saved_tensors gives it back with no graph and the second "
            "derivative with respect to x is lost; of the tensors forward handles, which ones "
            "does ctx.saved_tensors give back linked to the graph, and is the one you save among "
            "them?", _tanh(CALL, _inner(RIGHT), "        a = np.tanh(x.detach().numpy())\n"
                             "        ctx.save_for_backward(torch.from_numpy(a))\n"
                             "        return torch.from_numpy(a)")),
    Mistake("NumpyTanh", "forward saves y and returns y.view_as(x)", "the tensor NumpyTanh's "
            "forward saves holds y's values but is not the tensor forward returns",
            _tanh(CALL, _inner(RIGHT), FORWARD + ".view_as(x)")),
    Mistake("NumpyTanh", "forward saves x.detach()", "the x NumpyTanh's forward saves is a copy "
            "cut from the graph", _tanh("        x, = ctx.saved_tensors\n"
                                       "        return _TanhGradOfX.apply(grad_output, x)",
                                       INNER_ON_X, SAVE_X.replace("(x)", "(x.detach())"))),
    Mistake("NumpyTanh", "a detached grad_output passed to the inner Function", "with respect to "
            "grad_output is zero: the grad_output your backward passes",
            _tanh("        y, = ctx.saved_tensors\n"
                  "        return _TanhGrad.apply(grad_output.detach(), y)", _inner(RIGHT))),
]
MISTAKES += [
    Mistake("NumpyTanh", "forward computes in float64 and returns float64 for a float32 x",
            "NumpyTanh's output has dtype float64 for a float32 x",
            _tanh(CALL, _inner(RIGHT), "        y = torch.from_numpy(np.tanh(x.detach().numpy()"
                  ".astype(np.float64)))\n        ctx.save_for_backward(y)\n        return y")),
    Mistake("NumpyTanh", "the inner Function keeps g and y on its class",
            "the Function your backward calls (_TanhGrad) sets _TanhGrad.g",
            _tanh(CALL, _inner(RIGHT).replace("        ctx.save_for_backward(g, y)\n",
                                              "        _TanhGrad.g, _TanhGrad.y = g, y\n").replace(
                "        g, y = ctx.saved_tensors\n", "        g, y = _TanhGrad.g, _TanhGrad.y\n"))),
    Mistake("NumpyTanh", "the inner Function keeps g and y as ctx attributes", "the Function your "
            "backward calls (_TanhGrad) stores a tensor as ctx.g",
            _tanh(CALL, _inner(RIGHT).replace("        ctx.save_for_backward(g, y)\n",
                                              "        ctx.g, ctx.y = g, y\n").replace(
                "        g, y = ctx.saved_tensors\n", "        g, y = ctx.g, ctx.y\n"))),
]

THIRD_LEVEL = """
class _TanhGradGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, gb, g, y):
        ctx.save_for_backward(gb, g, y)
        gb, g, y = gb.detach().numpy(), g.detach().numpy(), y.detach().numpy()
        return torch.from_numpy(gb * (1 - y * y)), torch.from_numpy(-2 * gb * g * y)

    @staticmethod
    def backward(ctx, u, w):
        gb, g, y = (t.detach().numpy() for t in ctx.saved_tensors)
        u, w = u.detach().numpy(), w.detach().numpy()
        return (torch.from_numpy(u * (1 - y * y) - 2 * w * g * y),
                torch.from_numpy(-2 * w * gb * y), torch.from_numpy(-2 * gb * (u * y + w * g)))
"""
UNUSUAL += [
    Unusual("NumpyTanh", "three levels: the innermost backward a NumPy Function of its own "
            "(right to the third derivative)",
            _tanh(CALL, THIRD_LEVEL + _inner(
                "        dg, dy = _TanhGradGrad.apply(grad_b, *ctx.saved_tensors)\n"
                "        return (dg if ctx.needs_input_grad[0] else None,\n"
                "                dy if ctx.needs_input_grad[1] else None)").replace(
                "        gb, g, y = grad_b.detach().numpy(), g.detach().numpy(), "
                "y.detach().numpy()\n", ""))),
]


STASH = "_kept = {}\n"


NUMPY_2 = "import numpy as np\n"


INNER_STASH = NUMPY_2 + STASH + """
class _TanhGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, g, y):
        _kept[id(ctx)] = (g, y)
        g, y = g.detach().numpy(), y.detach().numpy()
        return torch.from_numpy(g * (1 - y * y))

    @staticmethod
    def backward(ctx, grad_b):
        g, y = (t.detach().numpy() for t in _kept[id(ctx)])
        gb = grad_b.detach().numpy()
        return torch.from_numpy(gb * (1 - y * y)), torch.from_numpy(-2 * gb * g * y)
"""


TANH = _tanh(CALL, _inner(RIGHT))
TANH_GATED = _tanh(CALL, _inner(RIGHT_GATED))


INNER_FORWARD_2 = ("        g, y = g.detach().numpy(), y.detach().numpy()\n"
                 "        return torch.from_numpy(g * (1 - y * y))")


SATURATED = "where tanh rounds to"


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


TANH_ARRAYS = _tanh(CALL, edit(_inner(RIGHT), (
    "        g, y = ctx.saved_tensors\n        gb, g, y = grad_b.detach().numpy(), "
    "g.detach().numpy(), y.detach().numpy()\n" + RIGHT,
    "        if not hasattr(ctx, 'arrays'):\n            g, y = ctx.saved_tensors\n"
    "            g, y = g.detach().numpy(), y.detach().numpy()\n"
    "            ctx.arrays = (1 - y * y, -2 * g * y)\n        d_g, d_y = ctx.arrays\n"
    "        gb = grad_b.detach().numpy()\n"
    "        return torch.from_numpy(gb * d_g), torch.from_numpy(gb * d_y)")))


HINT = "in backward: the contract keeps tensors only with ctx.save_for_backward"


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
        return (torch.from_numpy(gb * (1 - yn * yn)) if ctx.needs_input_grad[0] else None,
                torch.from_numpy(gb * m2gy.numpy()) if ctx.needs_input_grad[1] else None)
"""


NESTED = """import numpy as np


class NumpyTanh(torch.autograd.Function):
    class Back(torch.autograd.Function):
        @staticmethod
        def forward(ctx, g, y):
            ctx.save_for_backward(g, y)
            yn = y.detach().numpy()
            return torch.from_numpy(g.detach().numpy() * (1 - yn * yn))

        @staticmethod
        def backward(ctx, grad_b):
            g, y = ctx.saved_tensors
            gb, g, y = grad_b.detach().numpy(), g.detach().numpy(), y.detach().numpy()
            dg = torch.from_numpy(gb * (1 - y * y)) if ctx.needs_input_grad[0] else None
            dy = torch.from_numpy(-2 * gb * g * y) if ctx.needs_input_grad[1] else None
            return dg, dy

    @staticmethod
    def forward(ctx, x):
        y = torch.from_numpy(np.tanh(x.detach().numpy()))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return NumpyTanh.Back.apply(grad_output, y)
"""


F32 = "is off by float32 rounding"


UNGUARDED = "saves a tensor made from"


MISTAKES += [
    Mistake("NumpyTanh", "backward reads y from a module-level list",
            "NumpyTanh keeps state shared between calls", "_ys = []\n" + _tanh(
                "        ctx.saved_tensors\n        return _TanhGrad.apply(grad_output, _ys[-1])",
                _inner("        return (torch.from_numpy(gb * (1 - y * y)),\n"
                       "                torch.from_numpy(-2 * gb * g * y))"),
                FORWARD.replace("ctx.save_for_backward(y)",
                                "ctx.save_for_backward(y)\n        _ys.append(y)"))),
    Mistake("NumpyTanh", "forward keeps y in a module dict keyed by id(ctx)",
            "NumpyTanh's backward reads y (or x) from somewhere other than ctx.saved_tensors",
            STASH + _tanh("        return _TanhGrad.apply(grad_output, _kept[id(ctx)])",
                          _inner(RIGHT), FORWARD.replace("ctx.save_for_backward(y)",
                                                         "_kept[id(ctx)] = y"))),
    Mistake("NumpyTanh", "the inner Function keeps its tensors in a module dict keyed by id(ctx)",
            "the Function NumpyTanh's backward calls reads its tensors from somewhere other than "
            "ctx.saved_tensors", _tanh(CALL).replace("import numpy as np\n", INNER_STASH, 1)),
    Mistake("NumpyTanh", "inner backward multiplies, then divides grad_b in place",
            "wrote into the gradient its backward's Function receives (grad_b)", _tanh(
                CALL, _inner("        gb *= -2 * g * y\n        grad_y = gb.copy()\n"
                             "        gb /= -2 * g * y\n"
                             "        return torch.from_numpy(gb * (1 - y * y)), "
                             "torch.from_numpy(grad_y)"))),
    Mistake("NumpyTanh", "the inner Function's forward in torch ops",
            "NumpyTanh.backward computes with the torch op",
            edit(TANH, (INNER_FORWARD_2, "        return g * (1 - y * y)"))),
    Mistake("NumpyTanh", "the inner forward multiplies grad_output's memory (g *= ...)",
            "wrote into grad_output",
            edit(TANH, (INNER_FORWARD_2, "        g, y = g.detach().numpy(), y.detach().numpy()\n"
                                       "        g *= 1 - y * y\n"
                                       "        return torch.from_numpy(g.copy())"))),
    Mistake("NumpyTanh", "inner Function on (grad_output, x) with y's formula -2 g y",
            "the second derivative through NumpyTanh with respect to x is wrong",
            edit(TANH, (FORWARD, "        ctx.save_for_backward(x)\n"
                                 "        return torch.from_numpy(np.tanh(x.detach().numpy()))"),
                 (CALL, "        x, = ctx.saved_tensors\n"
                        "        return _TanhGrad.apply(grad_output, x)"),
                 (INNER_FORWARD_2, "        g, y = g.detach().numpy(), np.tanh(y.detach().numpy())\n"
                                 "        return torch.from_numpy(g * (1 - y * y))"),
                 ("g.detach().numpy(), y.detach().numpy()\n        return torch.from_numpy(gb",
                  "g.detach().numpy(), np.tanh(y.detach().numpy())\n"
                  "        return torch.from_numpy(gb"))),
    Mistake("NumpyTanh", "y on a module-level stack, popped in backward",
            "NumpyTanh's backward popped from an empty list",
            "_YS = []\n" + edit(TANH, ("        ctx.save_for_backward(y)\n",
                                       "        ctx.save_for_backward(y)\n        _YS.append(y)\n"),
                                (CALL, "        ctx.saved_tensors\n"
                                       "        return _TanhGrad.apply(grad_output, _YS.pop())"))),
    Mistake("NumpyTanh", "the inner Function keeps 1 - y^2 as a NumPy array on ctx",
            "stores a NumPy array as ctx.d",
            edit(TANH, (INNER_FORWARD_2, "        g, y = g.detach().numpy(), y.detach().numpy()\n"
                                       "        ctx.d = 1 - y * y\n"
                                       "        return torch.from_numpy(g * ctx.d)"),
                 ("torch.from_numpy(gb * (1 - y * y))", "torch.from_numpy(gb * ctx.d)"))),
    Mistake("NumpyTanh", "forward saves x.contiguous(), the inner Function on (grad_output, x)",
            "NumpyTanh's forward saves a copy of x",
            _tanh("        x, = ctx.saved_tensors\n"
                  "        return _TanhGradOfX.apply(grad_output, x)",
                  INNER_ON_X, edit(SAVE_X, ("        ctx.save_for_backward(x)\n",
                                            "        x = x.contiguous()\n"
                                            "        ctx.save_for_backward(x)\n")))),
    Mistake("NumpyTanh", "forward memoises NumPy's tanh in a global cache keyed by the tensor x",
            "returned the output of the old values", CACHED_BY_TENSOR + edit(TANH, (FORWARD, (
                "        y = torch.from_numpy(_cached((x,), (), lambda: np.tanh(x.detach().numpy()"
                ")))\n        ctx.save_for_backward(y)\n        return y")))),
    Mistake("NumpyTanh", "the inner Function saves its output b and divides it by 1 - y^2",
            SATURATED, edit(
                TANH,
                ("        ctx.save_for_backward(g, y)\n        g, y = g.detach().numpy(), "
                 "y.detach().numpy()\n        return torch.from_numpy(g * (1 - y * y))",
                 "        b = torch.from_numpy(g.detach().numpy() * (1 - y.detach().numpy() ** 2))"
                 "\n        ctx.save_for_backward(b, y)\n        return b"),
                ("        g, y = ctx.saved_tensors\n        gb, g, y = grad_b.detach().numpy(), "
                 "g.detach().numpy(), y.detach().numpy()",
                 "        b, y = ctx.saved_tensors\n        gb, b, y = grad_b.detach().numpy(), "
                 "b.detach().numpy(), y.detach().numpy()\n        g = b / (1 - y * y)")),
            named=True),
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
    Mistake("NumpyTanh", "the inner Function keeps NumPy arrays set in its backward on ctx",
            "the Function _TanhGrad that NumpyTanh.backward calls sets ctx.arrays (a NumPy array) "
            + HINT, TANH_ARRAYS, named=True),
    Mistake("NumpyTanh", "inner backward casts gb, g, y to float32", F32,
            edit(TANH, (RIGHT, "        gb, g, y = (a.astype(np.float32) for a in (gb, g, y))\n"
                        + RIGHT)), named=True),
    Mistake("NumpyTanh", "inner forward computes g (1 - y^2) in float32", F32,
            edit(TANH, ("        return torch.from_numpy(g * (1 - y * y))",
                        "        return torch.from_numpy(g.astype(np.float32) "
                        "* (1 - y.astype(np.float32) ** 2))")), named=True),
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
    # the same hole through .data, and for x where the inner Function takes x
    Mistake("NumpyTanh", "the inner Function saves grad_output.data", UNGUARDED,
            edit(TANH, ("        ctx.save_for_backward(g, y)\n",
                        "        ctx.save_for_backward(g.data, y)\n"))),
    Mistake("NumpyTanh", "the inner Function takes x and saves torch.from_numpy(x.numpy())",
            "saves a tensor made from x's memory",
            edit(UNUSUAL[0].code, ("ctx.save_for_backward(x, grad_out)",
                                        "ctx.save_for_backward(torch.from_numpy(x.detach()"
                                        ".numpy()), grad_out)"))),
]


UNUSUAL += [
    Unusual("NumpyTanh", "inner forward in float64, cast back in the outer backward",
            _tanh("        y, = ctx.saved_tensors\n"
                  "        return _TanhGrad.apply(grad_output, y).to(grad_output.dtype)",
                  _inner(RIGHT_GATED).replace(
                      "        g, y = g.detach().numpy(), y.detach().numpy()",
                      "        g = g.detach().numpy().astype(np.float64)\n"
                      "        y = y.detach().numpy().astype(np.float64)"))),
    Unusual("NumpyTanh", "plain NumPy when grad mode is off, the inner Function only under "
            "create_graph", edit(TANH_GATED, (CALL, "        y, = ctx.saved_tensors\n"
                                        "        if not torch.is_grad_enabled():\n"
                                        "            g, yn = grad_output.numpy(), y.numpy()\n"
                                        "            return torch.from_numpy(g * (1 - yn * yn))\n"
                                        "        return _TanhGrad.apply(grad_output, y)"))),
    Unusual("NumpyTanh", ".cpu().contiguous() before every .numpy()",
            TANH_GATED.replace(".detach().numpy()", ".detach().cpu().contiguous().numpy()")),
    Unusual("NumpyTanh", "NumPy's tanh in float64, cast back to x's dtype before it is saved",
            edit(TANH_GATED, ("np.tanh(x.detach().numpy())",
                              "np.tanh(x.detach().numpy().astype(np.float64)).astype("
                              "x.detach().numpy().dtype)"))),
    Unusual("NumpyTanh", "the inner Function saves -2gy (new memory, not a copy) and y",
            _tanh(CALL, NUMPY_TANH_INNER)),
    Unusual("NumpyTanh", "inner Function nested in the class body, needs_input_grad respected",
            NESTED),
    # (the inner Function in float64 for a float32 x, returning float64: a mistake by rule 2's
    # dtype, at the end)
]


# Rule 3 (memory linear in the sizes), NumPy included.
MISTAKES += [
    Mistake("NumpyTanh", "the inner Function builds n x n NumPy Jacobians",
            "a Jacobian built as a matrix", NUMPY + '\nclass NumpyTanh(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        y = torch.from_numpy(np.asarray(np.tanh(x.detach().numpy())))\n        ctx.save_for_backward(y)\n        return y\n    @staticmethod\n    def backward(ctx, grad_output):\n        y, = ctx.saved_tensors\n        return TanhGradY.apply(grad_output, y)\n\nclass TanhGradY(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, g, y):\n        ctx.save_for_backward(g, y)\n        yn, gn = y.detach().numpy(), g.detach().numpy()\n        J = np.diag(1 - yn.reshape(-1) ** 2)\n        return torch.from_numpy((gn.reshape(-1) @ J).reshape(yn.shape))\n    @staticmethod\n    def backward(ctx, gb):\n        g, y = ctx.saved_tensors\n        yn, gn, gbn = y.detach().numpy(), g.detach().numpy(), gb.detach().numpy()\n        Jg = np.diag(1 - yn.reshape(-1) ** 2)\n        Jy = np.diag(-2 * gn.reshape(-1) * yn.reshape(-1))\n        a = torch.from_numpy((gbn.reshape(-1) @ Jg).reshape(yn.shape)) if ctx.needs_input_grad[0] else None\n        b = torch.from_numpy((gbn.reshape(-1) @ Jy).reshape(yn.shape)) if ctx.needs_input_grad[1] else None\n        return a, b\n'),
]


# Rule 2 of the Function contract for the Function NumpyTanh's backward calls: on a second
# derivative with a grad_output that requires no grad (a Hessian-vector product), its backward
# is asked for y's gradient only; the engine drops grad_output's, computed for nothing.
MISTAKES += [
    Mistake("NumpyTanh", "inner backward ignores ctx.needs_input_grad: both gradients every call",
            "returned a gradient for g with ctx.needs_input_grad[0] False", TANH),
]


# Rule 1 at 0-d: on a 0-d array NumPy's ufuncs and arithmetic return a NumPy scalar
# (numpy.float64), which torch.from_numpy refuses ("expected np.ndarray"). The correct answers
# above wrap what they hand torch.from_numpy in np.asarray, as the solution does; each keeps its
# own feature. The builders stay as they were: the mistakes fail before the 0-d case.
def _arrays(code: str) -> str:
    """``code`` with each ``torch.from_numpy(e)`` written ``torch.from_numpy(np.asarray(e))``."""
    call, out, at = "torch.from_numpy(", [], 0
    while (start := code.find(call, at)) >= 0:
        depth, end = 1, start + len(call)
        while depth:
            depth += {"(": 1, ")": -1}.get(code[end], 0)
            end += 1
        out += [code[at:start], f"{call}np.asarray({code[start + len(call):end - 1]}))"]
        at = end
    return "".join(out) + code[at:]


UNUSUAL = [dataclasses.replace(answer, code=_arrays(answer.code)) for answer in UNUSUAL]

MISTAKES += [
    Mistake("NumpyTanh", "from_numpy on NumPy's scalar at 0-d",
            "NumpyTanh.forward raised TypeError with x of shape (): expected np.ndarray",
            TANH_GATED, named=True),
]

# a fresh review (at a38cbc94): np.asarray everywhere but in the inner backward, whose 0-d
# scalar only a second derivative at a 0-d x meets (graded last: Exercise.last)
MISTAKES.append(Mistake(
    "NumpyTanh", "inner backward without np.asarray",
    "the second derivative through NumpyTanh raised TypeError at a 0-d x",
    edit(_arrays(_tanh(CALL, _inner(RIGHT_GATED))),
         ("torch.from_numpy(np.asarray(gb * (1 - y * y)))", "torch.from_numpy(gb * (1 - y * y))"),
         ("torch.from_numpy(np.asarray(-2 * gb * g * y))", "torch.from_numpy(-2 * gb * g * y)"))))

# a fresh review (review77, N4): the inner Function computes in float64 whatever its inputs'
# dtype, so NumpyTanh.backward returns float64 for a float32 x, which autograd casts back
# without a word. Catalogued as correct (unusual) until rule 2's dtype clause was graded for
# every exercise (autograder.returned_dtypes): now a mistake.
MISTAKES += [
    Mistake("NumpyTanh", "inner Function computes in float64 for a float32 x, returns float64",
            "NumpyTanh.backward returned grad_x in float64 for a float32 x: autograd casts it "
            "back without a word",
            _arrays(_tanh(CALL, edit(_inner(RIGHT_GATED), (
                "        g, y = g.detach().numpy(), y.detach().numpy()\n",
                "        g = g.detach().numpy().astype(np.float64)\n"
                "        y = y.detach().numpy().astype(np.float64)\n"))))),
]

# a fresh review (r04b, W11): the inner backward scales by np.float64(-2.0); under NumPy 2's
# promotion (NEP 50) that scalar makes y's gradient float64 for a float32 y. NumpyTanh's own
# backward returns float32, so only a record of what the inner backward returns shows it
# (autograd casts it back without a word)
MISTAKES.append(Mistake(
    "NumpyTanh", "inner backward's gradient for y in float64 for a float32 y "
    "(np.float64(-2.0) * ...)",
    "returned grad_y in float64 for a float32 y",
    edit(_arrays(_tanh(CALL, _inner(RIGHT_GATED))),
         ("np.asarray(-2 * gb * g * y)", "np.asarray(np.float64(-2.0) * gb * g * y)"))))
