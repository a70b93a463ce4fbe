"""Lesson 04, review 59 (second round): tensors and NumPy arrays a backward sets on ctx, a cache
that passed every check made after forward: Swish caching its sigmoid (a plain backward then a
create_graph one gives wrong second derivatives, silently), CubeOnce memoising 3x^2 (an in-place
change of x between two backwards goes unseen), and NumpyTanh's inner Function keeping NumPy
arrays set in its backward; a where-patched 0 / 0 and an unconverted NumPy result, named by
what a probe saw; and the reviewer's unusual, correct answers."""

from .. import Mistake, Unusual, edit
from .cube_once import CUBE_READ, _cube
from .numpy_tanh import CALL, RIGHT, _inner, _tanh
from .swish import READ, RETURN, _swish

HINT = "in backward: the contract keeps tensors only with ctx.save_for_backward"

SWISH_CACHE = _swish("        x, beta = ctx.saved_tensors\n        if not hasattr(ctx, 's'):\n"
                     "            ctx.s = torch.sigmoid(beta * x)\n        s = ctx.s\n"
                     "        ds = s * (1 - s)\n" + RETURN)
CUBE_LOCAL = ("        if not hasattr(ctx, 'local'):\n            x, = ctx.saved_tensors\n"
              "            ctx.local = torch.as_tensor(3 * x.detach().cpu().numpy() ** 2)"
              ".to(x.device)\n        return grad_output * ctx.local")
CUBE_CACHE = "import numpy as np\n" + _cube(CUBE_LOCAL)
TANH_ARRAYS = _tanh(CALL, edit(_inner(RIGHT), (
    "        g, y = ctx.saved_tensors\n        gb, g, y = grad_b.detach().numpy(), "
    "g.detach().numpy(), y.detach().numpy()\n" + RIGHT,
    "        if not hasattr(ctx, 'arrays'):\n            g, y = ctx.saved_tensors\n"
    "            g, y = g.detach().numpy(), y.detach().numpy()\n"
    "            ctx.arrays = (1 - y * y, -2 * g * y)\n        d_g, d_y = ctx.arrays\n"
    "        gb = grad_b.detach().numpy()\n"
    "        return torch.from_numpy(gb * d_g), torch.from_numpy(gb * d_y)")))

SAVES_Y = ("        y = x * torch.sigmoid(beta * x)\n        ctx.save_for_backward(x, beta, y)\n"
           "        return y")
WHERE_PATCH = _swish("        x, beta, y = ctx.saved_tensors\n"
                     "        s = torch.where(x != 0, y / torch.where(x != 0, x, 1.0), 0.5)\n"
                     "        ds = s * (1 - s)\n" + RETURN, SAVES_Y)

MISTAKES = [
    Mistake("SwishFunction", "s = y / x with 0.5 patched in at x = 0 by torch.where",
            "its backward picks a value with torch.where at x = 0", WHERE_PATCH, named=True),
    Mistake("CubeOnce", "grad_output times the NumPy array, unconverted",
            "NumPy was handed CubeOnce's tensor on x's device and converted it itself",
            _cube(CUBE_READ + "        return grad_output * (3 * x.detach().cpu().numpy() ** 2)"),
            named=True),
    Mistake("SwishFunction", "caches the sigmoid as ctx.s in backward",
            "SwishFunction.backward sets ctx.s (a tensor) " + HINT, SWISH_CACHE, named=True),
    Mistake("SwishFunction", "caches the sigmoid's derivative as ctx.ds in backward, every call",
            "SwishFunction.backward sets ctx.ds (a tensor) " + HINT,
            _swish(READ + "        ctx.ds = ds\n" + RETURN), named=True),
    Mistake("CubeOnce", "memoises 3x^2 as ctx.local in backward",
            "CubeOnce.backward sets ctx.local (a tensor) " + HINT, CUBE_CACHE, named=True),
    Mistake("CubeOnce", "memoises 3x^2 as a NumPy array on ctx in backward",
            "CubeOnce.backward sets ctx.local (a NumPy array) " + HINT,
            edit(CUBE_CACHE, ("torch.as_tensor(3 * x.detach().cpu().numpy() ** 2).to(x.device)",
                              "3 * x.detach().cpu().numpy() ** 2"),
                 ("grad_output * ctx.local", "torch.as_tensor(grad_output.cpu().numpy() * "
                  "ctx.local).to(grad_output.device)")), named=True),
    Mistake("NumpyTanh", "the inner Function keeps NumPy arrays set in its backward on ctx",
            "the Function _TanhGrad that NumpyTanh.backward calls sets ctx.arrays (a NumPy array) "
            + HINT, TANH_ARRAYS, named=True),
]

UNUSUAL = [
    Unusual("CubeOnce", "the mark applied after the class, saves x.view_as(x)",
            _cube(CUBE_READ + "        return grad_output * 3 * x * x",
                  "        ctx.save_for_backward(x.view_as(x))\n        return x ** 3", "")
            + "\nCubeOnce.backward = once_differentiable(CubeOnce.backward)\n"),
    Unusual("CubeOnce", "@once_differentiable above @staticmethod, saves 3x^2 made in forward",
            edit(_cube("        local, = ctx.saved_tensors\n        return grad_output * local",
                       "        ctx.save_for_backward(3 * x * x)\n        return x ** 3"),
                 ("    @staticmethod\n    @once_differentiable\n    def backward",
                  "    @once_differentiable\n    @staticmethod\n    def backward"))),
]
