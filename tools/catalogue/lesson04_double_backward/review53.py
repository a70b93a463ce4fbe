"""Lesson 04, review 53: SwishFunction backwards that treat beta = 0 apart (a branch on
beta.item() == 0 with a formula that has no beta in it; a sigmoid built from beta.abs() and a
where on beta's sign, whose derivative in beta jumps at 0), right at every other beta and caught
by second derivatives at beta = 0; a NumpyTanh whose backward reads y from a module list, named
as state shared between calls. The review's other answers are catalogued already."""

from .. import Mistake, Unusual
from .numpy_tanh import FORWARD, _inner, _tanh
from .swish import READ, RETURN, _swish

UNUSUAL = [
    Unusual("SwishFunction", "1 - s as sigmoid(-z), torch.dot of the flattened tensors", _swish(
        "        x, beta = ctx.saved_tensors\n        z = beta * x\n"
        "        s, t = torch.sigmoid(z), torch.sigmoid(-z)\n"
        "        grad_x = grad_output * (s + z * s * t) if ctx.needs_input_grad[0] else None\n"
        "        grad_beta = (torch.dot((grad_output * x * (s * t)).reshape(-1), x.reshape(-1))\n"
        "                     if ctx.needs_input_grad[1] else None)\n"
        "        return grad_x, grad_beta")),
]

MISTAKES = [
    Mistake("SwishFunction", "beta == 0 special-cased in backward with constants",
            "right at beta = 1.3 and -0.7 but wrong at beta = 0", _swish(
                "        x, beta = ctx.saved_tensors\n"
                "        if beta.item() == 0.0:\n"
                "            return grad_output * 0.5, (grad_output * x * x).sum() * 0.25\n"
                + READ + RETURN)),
    Mistake("SwishFunction", "sigmoid from beta.abs() and a where on beta's sign",
            "right at beta = 1.3 and -0.7 but wrong at beta = 0", _swish(
                "        x, beta = ctx.saved_tensors\n"
                "        t = torch.sigmoid(beta.abs() * x)\n"
                "        s = torch.where(beta >= 0, t, 1 - t)\n"
                "        ds = s * (1 - s)\n" + RETURN)),
    Mistake("NumpyTanh", "backward reads y from a module-level list",
            "NumpyTanh keeps state shared between calls", "_ys = []\n" + _tanh(
                "        ctx.saved_tensors\n        return _TanhGrad.apply(grad_output, _ys[-1])",
                _inner("        return (torch.from_numpy(gb * (1 - y * y)),\n"
                       "                torch.from_numpy(-2 * gb * g * y))"),
                FORWARD.replace("ctx.save_for_backward(y)",
                                "ctx.save_for_backward(y)\n        _ys.append(y)"))),
]
