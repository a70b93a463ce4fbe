"""Lesson 04's transfer exercise, NumpyTanh, answered unusually and wrongly."""

from .. import Mistake, Unusual

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
        dx = tanh_backward_backward(to_numpy(grad_out), to_numpy(saved_grad_out), to_numpy(x))
        dgrad_out = tanh_backward(to_numpy(grad_out), to_numpy(x))
        return torch.from_numpy(dgrad_out), torch.from_numpy(dx)
"""),
    Unusual("NumpyTanh", "an inner Function on (grad_output, y) with needs_input_grad",
            _tanh(CALL, _inner(
                "        dg = torch.from_numpy(gb * (1 - y * y)) if ctx.needs_input_grad[0] "
                "else None\n"
                "        dy = torch.from_numpy(-2 * gb * g * y) if ctx.needs_input_grad[1] "
                "else None\n        return dg, dy"))),
    Unusual("NumpyTanh", "torch.as_tensor conversions and the output kept as NumPy-made float64",
            _tanh(CALL, _inner(RIGHT),
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
SAVE_X = ("        ctx.save_for_backward(x)\n"
          "        return torch.from_numpy(np.tanh(x.detach().numpy()))")
UNUSUAL += [
    Unusual("NumpyTanh", "x saved, the inner Function on (grad_output, x) takes tanh itself",
            _tanh("        x, = ctx.saved_tensors\n        return _TanhGradOfX.apply(grad_output, x)",
                  INNER_ON_X, SAVE_X)),
    Unusual("NumpyTanh", "inner backward marked @once_differentiable (its NumPy has no third "
            "derivative)", _tanh(CALL, _inner(RIGHT).replace(
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
        return to_torch(gb * (1 - yn ** 2), g), to_torch(-2 * gb * gn * yn, y)


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
            "@once_differentiable",
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
    Mistake("NumpyTanh", "inner backward: +2 g y", "with respect to x is wrong",
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
            "the tensor NumpyTanh's forward saves holds y's values but is not the tensor forward "
            "returns", _tanh(CALL, _inner(RIGHT), "        a = np.tanh(x.detach().numpy())\n"
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
                "        return _TanhGradGrad.apply(grad_b, *ctx.saved_tensors)").replace(
                "        gb, g, y = grad_b.detach().numpy(), g.detach().numpy(), "
                "y.detach().numpy()\n", ""))),
]
