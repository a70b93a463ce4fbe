"""Lesson 04, review 58c: CubeOnce recovering 3x^2 from the saved output as 3y / x (nan at
x = 0) and as y ** (1 / 3) (nan at negative x), graded at zeros, negative and tiny x in float64
and float32; Swish's backward with beta x clamped to +-700 before 1 / (1 + exp(-z)) (right first
derivatives, nan float32 second derivatives past |beta x| = 88.7). The reviewer's unusual
answers: a sigmoid built from tanh with an einsum for beta (wrong in the saturated tail since
review 59c: TANH_SIGMOID, listed there), and CubeOnce saving 3x^2 made in
NumPy with the mark applied by hand to the plain function under the class."""

from .. import Mistake, Unusual, edit
from .cube_once import _cube
from .swish import READ, RETURN, _swish

SWISH = _swish(READ + RETURN)
CUBE = "import numpy as np\n" + _cube(
    "        x, = ctx.saved_tensors\n"
    "        local = torch.as_tensor(3 * x.detach().cpu().numpy() ** 2).to(x.device)\n"
    "        return grad_output * local")
FROM_OUTPUT = ("        y = x ** 3\n        ctx.save_for_backward(x, y)\n        return y")

# Right in the bulk, wrong in the sigmoid's saturated tail (1 + tanh rounds to 0 there):
# a mistake since review 59c grades the tail relatively (review59c lists it).
TANH_SIGMOID = _swish("        x, beta = ctx.saved_tensors\n"
                      "        t = torch.tanh(beta * x / 2)\n"
                      "        s, ds = (1 + t) / 2, (1 - t * t) / 4\n"
                      "        gx = grad_output * (s + beta * x * ds) if ctx.needs_input_grad[0] "
                      "else None\n"
                      "        gb = torch.einsum('...,...,...->', grad_output, x * x, ds) "
                      "if ctx.needs_input_grad[1] else None\n"
                      "        return gx, gb")

UNUSUAL = [
    Unusual("CubeOnce", "saves 3x^2 made in NumPy, the whole backward in NumPy, the mark "
            "applied by hand to __dict__['backward'].__func__",
            edit(CUBE, ("        ctx.save_for_backward(x)\n",
                        "        ctx.save_for_backward(torch.as_tensor("
                        "3 * x.detach().cpu().numpy() ** 2).to(x.device))\n"),
                 ("    @staticmethod\n    @once_differentiable\n", "    @staticmethod\n"),
                 ("        x, = ctx.saved_tensors\n"
                  "        local = torch.as_tensor(3 * x.detach().cpu().numpy() ** 2)"
                  ".to(x.device)\n        return grad_output * local",
                  "        d, = ctx.saved_tensors\n"
                  "        out = np.multiply(grad_output.detach().cpu().numpy(), d.cpu().numpy())\n"
                  "        return torch.as_tensor(out).to(grad_output.device)"))
            + "CubeOnce.backward = staticmethod(once_differentiable("
              "CubeOnce.__dict__['backward'].__func__))\n"),
]

MISTAKES = [
    Mistake("CubeOnce", "3y / x in NumPy from the saved x and output: nan at x = 0",
            "backward divides by x there (0 / 0), as recovering 3x^2 from the output",
            edit(CUBE, ("        ctx.save_for_backward(x)\n        return x ** 3", FROM_OUTPUT),
                 ("        x, = ctx.saved_tensors\n", "        x, y = ctx.saved_tensors\n"),
                 ("3 * x.detach().cpu().numpy() ** 2",
                  "3 * y.detach().cpu().numpy() / x.detach().cpu().numpy()"))),
    Mistake("CubeOnce", "y ** (1 / 3) of the saved output: nan at negative x",
            "exactly where x < 0: a formula undefined there",
            edit(CUBE, ("        ctx.save_for_backward(x)\n        return x ** 3", FROM_OUTPUT),
                 ("        x, = ctx.saved_tensors\n", "        x, y = ctx.saved_tensors\n"),
                 ("3 * x.detach().cpu().numpy() ** 2",
                  "3 * (y.detach().cpu().numpy() ** (1 / 3)) ** 2"))),
    Mistake("SwishFunction", "beta x clamped to +-700 before 1 / (1 + exp(-z)): nan float32 "
            "second derivatives past |beta x| = 88.7",
            "is nan at x = -500 and -77 (|beta x| = 100.1 to 650: exp overflows float32 past 88.7)",
            edit(SWISH, ("        s = torch.sigmoid(beta * x)\n",
                         "        z = (beta * x).clamp(-700, 700)\n"
                         "        s = 1 / (1 + torch.exp(-z))\n"))),
]
