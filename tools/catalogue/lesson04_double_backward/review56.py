"""Lesson 04, review 56: a CubeOnce whose NumPy result never goes back to x's device (caught on
the CPU with x on a stand-in device), or whose .numpy() skips .cpu(); a cube root as y ** (2/3)
(nan at negative x, named there); a grad_beta of shape (1,), a mean times numel (nan on an empty
x, named), globals used as stacks, a float64 output for float32 x, a grad_beta from x.detach(),
x.view(-1), a clamped sigmoid, a where on beta == 0; an inner Function in torch, writing into
grad_output, on x with y's formula, or keeping 1 - y^2 on ctx. Unusual: torch.tensor(...,
device=x.device), a float64 gradient for float32 x, torch.as_tensor(device=, dtype=), a
NumpyTanh that calls its inner Function only under create_graph, .cpu().contiguous()."""

from .. import Mistake, Unusual, edit
from .cube_once import CUBE_READ, _cube
from .numpy_tanh import CALL, FORWARD, RIGHT, _inner, _tanh
from .swish import READ, RETURN, SCALED, _swish

NUMPY = "import numpy as np\n"
SWISH = _swish(READ + RETURN)
CUBE = NUMPY + _cube(CUBE_READ + "        local = torch.as_tensor(3 * x.detach().cpu().numpy() ** 2)"
                     ".to(x.device)\n        return grad_output * local")
TANH = _tanh(CALL, _inner(RIGHT))
INNER_FORWARD = ("        g, y = g.detach().numpy(), y.detach().numpy()\n"
                 "        return torch.from_numpy(g * (1 - y * y))")

UNUSUAL = [
    Unusual("CubeOnce", "torch.tensor(np.multiply(g, 3x^2), device=x.device), no detach under "
            "the mark", edit(CUBE, ("        local = torch.as_tensor(3 * x.detach().cpu().numpy()"
                                    " ** 2).to(x.device)\n        return grad_output * local",
                                    "        a, g = x.cpu().numpy(), grad_output.cpu().numpy()\n"
                                    "        return torch.tensor(np.multiply(g, 3 * a * a), "
                                    "device=x.device)"))),
    Unusual("CubeOnce", "a float64 gradient for a float32 x (the engine casts it back)",
            edit(CUBE, ("numpy() ** 2", "numpy().astype(np.float64) ** 2"),
                 ("grad_output * local", "grad_output.double() * local"))),
    Unusual("CubeOnce", "torch.as_tensor(..., device=grad_output.device, dtype=grad_output.dtype)",
            edit(CUBE, (").to(x.device)",
                        ", device=grad_output.device, dtype=grad_output.dtype)"))),
    Unusual("NumpyTanh", "plain NumPy when grad mode is off, the inner Function only under "
            "create_graph", edit(TANH, (CALL, "        y, = ctx.saved_tensors\n"
                                        "        if not torch.is_grad_enabled():\n"
                                        "            g, yn = grad_output.numpy(), y.numpy()\n"
                                        "            return torch.from_numpy(g * (1 - yn * yn))\n"
                                        "        return _TanhGrad.apply(grad_output, y)"))),
    Unusual("NumpyTanh", ".cpu().contiguous() before every .numpy()",
            TANH.replace(".detach().numpy()", ".detach().cpu().contiguous().numpy()")),
]

MISTAKES = [
    Mistake("CubeOnce", "forgets .to(x.device): the gradient stays on the CPU",
            "CubeOnce's backward returned its gradient on cpu, not on x's device",
            edit(CUBE, (".to(x.device)\n", "\n"),
                 ("grad_output * local", "grad_output.cpu() * local"))),
    Mistake("CubeOnce", "a CPU local derivative times grad_output on x's device",
            "mixed a tensor on x's device with one left on the CPU",
            edit(CUBE, (".to(x.device)\n", "\n"))),
    Mistake("CubeOnce", ".numpy() without .cpu()", "called .numpy() on a tensor not in CPU memory",
            edit(CUBE, ("x.detach().cpu().numpy()", "x.detach().numpy()"))),
    Mistake("CubeOnce", "saves the output, x^2 as y ** (2/3): nan at negative x",
            "grad_x contains inf or nan where the true gradient is finite, first at index",
            NUMPY + _cube("        y, = ctx.saved_tensors\n"
                          "        local = 3 * np.power(y.detach().cpu().numpy(), 2 / 3)\n"
                          "        return grad_output * torch.as_tensor(local).to(y.device)",
                          "        y = x ** 3\n        ctx.save_for_backward(y)\n        return y")),
    Mistake("CubeOnce", "grad_output.mul_(local)", "CubeOnce's backward modified grad_output in place",
            edit(CUBE, ("grad_output * local", "grad_output.mul_(local)"))),
    Mistake("CubeOnce", "saves float32 x as float16", "CubeOnce saved x as a float16 copy",
            edit(CUBE, ("        ctx.save_for_backward(x)\n",
                        "        ctx.save_for_backward(x.half() if x.dtype == torch.float32 "
                        "else x)\n"),
                 ("numpy() ** 2", "numpy().astype(np.float32 if x.dtype == torch.float16 "
                                  "else np.float64) ** 2"))),
    Mistake("CubeOnce", "3x^2 on a module-level stack, popped in backward",
            "CubeOnce's backward reads what it needs from somewhere other than ctx.saved_tensors",
            "_LOCALS = []\n" + NUMPY + _cube(
                "        ctx.saved_tensors\n        return grad_output * _LOCALS.pop()",
                "        ctx.save_for_backward(x)\n        _LOCALS.append(torch.as_tensor(3 * "
                "x.detach().cpu().numpy() ** 2).to(x.device))\n        return x ** 3")),
    Mistake("SwishFunction", "grad_beta as a mean times numel: nan on an empty x",
            "grad_beta contains inf or nan where the true gradient is finite, with x empty",
            edit(SWISH, (".sum()", ".mean() * x.numel()"))),
    Mistake("SwishFunction", "beta on a module-level stack, popped in backward",
            "SwishFunction's backward used another call's beta",
            "_BETAS = []\n" + _swish(
                READ.replace("x, beta = ctx.saved_tensors", "x, _ = ctx.saved_tensors\n"
                             "        beta = _BETAS.pop()") + SCALED,
                "        ctx.save_for_backward(x, beta)\n        _BETAS.append(beta)\n"
                "        return x * torch.sigmoid(beta * x)")),
    Mistake("SwishFunction", "computes and returns float64 for a float32 x",
            "SwishFunction's output has dtype torch.float64 but should have dtype torch.float32",
            edit(SWISH, ("        return x * torch.sigmoid(beta * x)",
                         "        return x.double() * torch.sigmoid(beta.double() * x.double())"))),
    Mistake("SwishFunction", "grad_beta from x.detach()",
            "the derivative of SwishFunction's backward with respect to x is wrong in grad_beta",
            edit(SWISH, ("(grad_output * x * x * ds).sum()",
                         "(grad_output * x.detach() ** 2 * torch.sigmoid(beta * x.detach())"
                         " * (1 - torch.sigmoid(beta * x.detach()))).sum()"))),
    Mistake("SwishFunction", "x.view(-1) in backward: fails on a transposed x",
            "view size is not compatible",
            edit(SWISH, ("(grad_output * x * x * ds).sum()",
                         "torch.dot((grad_output * ds * x).reshape(-1), x.view(-1))"))),
    Mistake("SwishFunction", "z clamped to +-15 in forward and backward",
            "SwishFunction's output is wrong: largest error",
            SWISH.replace("torch.sigmoid(beta * x)", "torch.sigmoid((beta * x).clamp(-15, 15))")),
    Mistake("SwishFunction", "ds/dbeta as (x / beta) ds/dx under a where on beta == 0",
            "wrong at beta = 0: backward treats beta = 0 apart",
            _swish("        x, beta = ctx.saved_tensors\n        s = torch.sigmoid(beta * x)\n"
                   "        ds_dx = beta * s * (1 - s)\n"
                   "        ds_dbeta = torch.where(beta == 0, x * s * (1 - s), x / beta * ds_dx)\n"
                   "        return grad_output * (s + x * ds_dx), (grad_output * x * ds_dbeta).sum()")),
    Mistake("NumpyTanh", "the inner Function's forward in torch ops",
            "NumpyTanh.backward computes with the torch op",
            edit(TANH, (INNER_FORWARD, "        return g * (1 - y * y)"))),
    Mistake("NumpyTanh", "the inner forward multiplies grad_output's memory (g *= ...)",
            "wrote into grad_output",
            edit(TANH, (INNER_FORWARD, "        g, y = g.detach().numpy(), y.detach().numpy()\n"
                                       "        g *= 1 - y * y\n"
                                       "        return torch.from_numpy(g.copy())"))),
    Mistake("NumpyTanh", "inner Function on (grad_output, x) with y's formula -2 g y",
            "the second derivative through NumpyTanh with respect to x is wrong",
            edit(TANH, (FORWARD, "        ctx.save_for_backward(x)\n"
                                 "        return torch.from_numpy(np.tanh(x.detach().numpy()))"),
                 (CALL, "        x, = ctx.saved_tensors\n"
                        "        return _TanhGrad.apply(grad_output, x)"),
                 (INNER_FORWARD, "        g, y = g.detach().numpy(), np.tanh(y.detach().numpy())\n"
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
            edit(TANH, (INNER_FORWARD, "        g, y = g.detach().numpy(), y.detach().numpy()\n"
                                       "        ctx.d = 1 - y * y\n"
                                       "        return torch.from_numpy(g * ctx.d)"),
                 ("torch.from_numpy(gb * (1 - y * y))", "torch.from_numpy(gb * ctx.d)"))),
]

# Correct since the Function contract's rule 2 (issue 67): autograd's engine sums a gradient of a
# shape beta broadcasts to down to beta's, and records the sum under create_graph=True. Once
# mistakes.
UNUSUAL += [
    Unusual("SwishFunction", "grad_beta of shape (1,)",
            edit(SWISH, ("(grad_output * x * x * ds).sum()",
                         "(grad_output * x * x * ds).reshape(-1).sum(0, keepdim=True)"))),
]
