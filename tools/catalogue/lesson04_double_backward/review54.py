"""Lesson 04, review 54: tensors kept aside in a module dict keyed by id(ctx) instead of
save_for_backward (Swish, CubeOnce, NumpyTanh's forward and its inner Function), caught under
saved-tensor hooks that hand backward doubled tensors; 3x^2 as a NumPy array on ctx or on the
class (the contract keeps what backward needs with save_for_backward); an inner backward that
multiplies, then divides grad_b in place through NumPy (nan where y = 0, written into the
caller's tensor). Unusual: a logsigmoid Swish, a float64 inner Function for float32 NumpyTanh,
3x^2 saved in float64."""

from .. import Mistake, Unusual
from .cube_once import CUBE_READ, _cube
from .numpy_tanh import CALL, FORWARD, RIGHT, _inner, _tanh
from .swish import _swish

NUMPY = "import numpy as np\n"
STASH = "_kept = {}\n"
INNER_STASH = NUMPY + STASH + """
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
LOCAL = "        a = x.detach().cpu().numpy()\n        {where}.local = np.asarray(3 * a ** 2)\n"

UNUSUAL = [
    Unusual("SwishFunction", "sigmoid from exp(logsigmoid), sigma' as sigma(z) sigma(-z)",
            "import torch.nn.functional as F\n" + _swish(
                "        x, beta = ctx.saved_tensors\n        z = beta * x\n"
                "        s, ds = torch.sigmoid(z), torch.sigmoid(z) * torch.sigmoid(-z)\n"
                "        return (grad_output * s + grad_output * z * ds,\n"
                "                torch.sum(grad_output * ds * x * x))",
                "        ctx.save_for_backward(x, beta)\n"
                "        return x * torch.exp(F.logsigmoid(beta * x))")),
    Unusual("CubeOnce", "saves 3x^2 made in float64 NumPy (more digits for float32 x)",
            NUMPY + _cube("        local, = ctx.saved_tensors\n        return grad_output * local",
                          "        a = x.detach().cpu().numpy().astype(np.float64)\n"
                          "        ctx.save_for_backward(torch.as_tensor(3 * a ** 2).to(x.device))"
                          "\n        return x ** 3")),
    Unusual("NumpyTanh", "inner forward in float64, cast back in the outer backward",
            _tanh("        y, = ctx.saved_tensors\n"
                  "        return _TanhGrad.apply(grad_output, y).to(grad_output.dtype)",
                  _inner(RIGHT).replace(
                      "        g, y = g.detach().numpy(), y.detach().numpy()",
                      "        g = g.detach().numpy().astype(np.float64)\n"
                      "        y = y.detach().numpy().astype(np.float64)"))),
]

MISTAKES = [
    Mistake("SwishFunction", "(x, beta) in a module dict keyed by id(ctx)",
            "SwishFunction's backward reads x and beta from somewhere other than "
            "ctx.saved_tensors", STASH + _swish(
                "        x, beta = _kept[id(ctx)]\n        s = torch.sigmoid(beta * x)\n"
                "        ds = s * (1 - s)\n"
                "        return grad_output * (s + beta * x * ds), (grad_output * x * x * ds).sum()",
                "        _kept[id(ctx)] = (x, beta)\n        return x * torch.sigmoid(beta * x)")),
    Mistake("CubeOnce", "x kept in a module dict keyed by id(ctx)",
            "CubeOnce's backward reads what it needs from somewhere other than ctx.saved_tensors",
            NUMPY + STASH + _cube(
                "        x = _kept[id(ctx)]\n        a = x.detach().cpu().numpy()\n"
                "        return grad_output * torch.as_tensor(3 * a ** 2).to(x.device)",
                "        _kept[id(ctx)] = x\n        return x ** 3")),
    Mistake("CubeOnce", "3x^2 as a NumPy array on ctx", "CubeOnce keeps a NumPy array as ctx.local",
            NUMPY + _cube("        return grad_output * torch.as_tensor(ctx.local).to(grad_output)",
                          LOCAL.format(where="ctx") + "        return x ** 3")),
    Mistake("CubeOnce", "3x^2 as a NumPy array on the class",
            "CubeOnce.forward sets CubeOnce.local: a class attribute is shared by every call, so "
            "what one call keeps there every other call sees and can change; where can each "
            "call keep a tensor its backward needs, its own and tracked by autograd (an array "
            "is no tensor yet)?",
            NUMPY + _cube("        return grad_output * torch.as_tensor(CubeOnce.local)"
                          ".to(grad_output)",
                          LOCAL.format(where="CubeOnce") + "        return x ** 3")),
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
]
