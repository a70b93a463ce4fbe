"""Lesson 04, review 59: CubeOnce saving the output and recovering x from it with a cube root
(np.cbrt, or sign(y) |y| ** (1 / 3) in torch): right wherever x ** 3 is a normal number, 25% off
in float32 at x = 1e-15 (a subnormal cube), 0 at 1e-16 (the cube underflows to 0) and inf at
1e13 (it overflows), where 3x^2 is a normal number; until review 59 catalogued as unusual
answers (cube_once.py, review56b.py), now graded at those ends of "every x"."""

from .. import Mistake, edit
from .cube_once import _cube

SAVES_OUTPUT = "        y = x ** 3\n        ctx.save_for_backward(y)\n        return y"
CBRT = "import numpy as np\n" + _cube(
    "        y, = ctx.saved_tensors\n        c = np.cbrt(y.detach().cpu().numpy())\n"
    "        return grad_output * torch.as_tensor(3 * c * c).to(y.device)", SAVES_OUTPUT)
HINT = "computing the derivative from the saved output y (whatever the operation)"

MISTAKES = [
    Mistake("CubeOnce", "saves the output, NumPy cube root in backward", HINT, CBRT, named=True),
    Mistake("CubeOnce", "saves the output, np.cbrt, the mark applied after the class", HINT,
            edit(CBRT, ("    @staticmethod\n    @once_differentiable\n", "    @staticmethod\n"),
                 ("        c = np.cbrt(y.detach().cpu().numpy())\n        return grad_output * "
                  "torch.as_tensor(3 * c * c).to(y.device)",
                  "        g = grad_output.cpu().numpy()\n"
                  "        out = 3 * g * np.cbrt(y.cpu().numpy()) ** 2\n"
                  "        return torch.as_tensor(out, device=y.device)"))
            + "\nCubeOnce.backward = once_differentiable(CubeOnce.backward)\n"),
    Mistake("CubeOnce", "saves the output, recovers x as sign(y) |y| ** (1 / 3) in torch", HINT,
            edit(CBRT, ("        c = np.cbrt(y.detach().cpu().numpy())\n        return grad_output * "
                        "torch.as_tensor(3 * c * c).to(y.device)",
                        "        c = y.sign() * y.abs() ** (1 / 3)\n"
                        "        return grad_output * 3 * c * c"))),
]

UNUSUAL = []
