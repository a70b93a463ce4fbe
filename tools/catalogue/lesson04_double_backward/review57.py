"""Lesson 04, review 57: NumpyTanh whose inner Function saves its own output b and recovers
grad_output as b / (1 - y^2), NaN where NumPy's tanh rounds to +-1 (past |x| 19.0 in float64,
10.0 in float32, which x = 1.5 randn never reached); SwishFunction saving beta.detach();
CubeOnce saving a tensor made from x's (or the output's) memory, torch.from_numpy(x.numpy()) or
.data, which autograd's version counter does not guard, and a CPU copy of a GPU x. Unusual: a
Swish saving x, beta and the output with an einsum for grad_beta, NumPy's tanh in float64 cast
back to float32, a CubeOnce backward that flattens and reshapes."""

from .. import Mistake, Unusual, edit
from .cube_once import CUBE_READ, _cube
from .numpy_tanh import CALL, RIGHT, _inner, _tanh
from .swish import READ, RETURN, _swish

NUMPY = "import numpy as np\n"
LOCAL = "        local = torch.as_tensor(3 * x.detach().cpu().numpy() ** 2).to(x.device)\n"
CUBE = NUMPY + _cube(CUBE_READ + LOCAL + "        return grad_output * local")
TANH = _tanh(CALL, _inner(RIGHT))
SATURATED = "where tanh rounds to"
ALIAS = "shares x's memory but is not x"

MISTAKES = [
    Mistake("SwishFunction", "saves beta.detach(), as if beta were a hyper-parameter",
            "made by .detach()", edit(_swish(READ + RETURN), (
                "ctx.save_for_backward(x, beta)", "ctx.save_for_backward(x, beta.detach())"))),
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
    Mistake("CubeOnce", "saves torch.from_numpy(x.numpy()), an alias of x", ALIAS, edit(
        CUBE, ("        ctx.save_for_backward(x)\n",
               "        ctx.save_for_backward(torch.from_numpy(x.detach().cpu().numpy()))\n")),
        named=True),
    Mistake("CubeOnce", "saves x.data", ALIAS, edit(
        CUBE, ("        ctx.save_for_backward(x)\n", "        ctx.save_for_backward(x.data)\n"))),
    Mistake("CubeOnce", "saves a CPU copy of x when x is on a GPU, for NumPy in backward",
            "saved a CPU copy of x", edit(
                CUBE, ("        ctx.save_for_backward(x)\n",
                       "        ctx.save_for_backward(x.detach().cpu() if x.is_cuda else x)\n"),
                ("to(x.device)", "to(grad_output.device)"))),
    Mistake("CubeOnce", "saves the output's .data, a cube root in backward",
            "shares the output's memory", NUMPY + _cube(
                "        y, = ctx.saved_tensors\n        c = np.cbrt(y.detach().cpu().numpy())\n"
                "        return grad_output * torch.as_tensor(3 * c * c).to(y.device)",
                "        y = x ** 3\n        ctx.save_for_backward(y.data)\n        return y")),
]

UNUSUAL = [
    Unusual("SwishFunction", "saves x, beta and the output; grad_beta as an einsum", """
class SwishFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, beta):
        y = x * torch.exp(F.logsigmoid(beta * x))
        ctx.save_for_backward(x, beta, y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        x, beta, y = ctx.saved_tensors
        s = torch.exp(F.logsigmoid(beta * x))
        one_minus_s = torch.exp(F.logsigmoid(-beta * x))
        grad_x = grad_output * (s + beta * y * one_minus_s)
        return grad_x, torch.einsum("...,...->", grad_output * x, y * one_minus_s)
"""),
    Unusual("NumpyTanh", "NumPy's tanh in float64, cast back to x's dtype before it is saved",
            edit(TANH, ("np.tanh(x.detach().numpy())",
                        "np.tanh(x.detach().numpy().astype(np.float64)).astype("
                        "x.detach().numpy().dtype)"))),
    Unusual("CubeOnce", "backward flattens grad_output and x, then reshapes", edit(
        CUBE, (LOCAL + "        return grad_output * local",
               "        a = x.detach().cpu().numpy().reshape(-1)\n        return (grad_output."
               "reshape(-1) * torch.as_tensor(3 * a ** 2).to(x.device)).reshape(x.shape)"))),
]
