"""Lesson 04: answers with known verdicts for CubeOnce, a backward marked @once_differentiable."""

from .. import Mistake, Unusual


def _cube(backward: str, forward: str = "        ctx.save_for_backward(x)\n        return x ** 3",
          decorator: str = "\n    @once_differentiable") -> str:
    return f"""
class CubeOnce(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
{forward}

    @staticmethod{decorator}
    def backward(ctx, grad_output):
{backward}
"""


CUBE_READ = "        x, = ctx.saved_tensors\n"

UNUSUAL = [
    Unusual("CubeOnce", "x * x * x, saves x squared (an intermediate is fine here)",
            _cube("        x2, = ctx.saved_tensors\n        return 3 * x2 * grad_output",
                  "        ctx.save_for_backward(x * x)\n        return x * x * x")),
    Unusual("CubeOnce", "torch.pow, mul chain",
            _cube(CUBE_READ + "        return grad_output.mul(3).mul(x.square())",
                  "        ctx.save_for_backward(x)\n        return torch.pow(x, 3)")),
    Unusual("CubeOnce", "a NumPy backward, as the lesson motivates",
            _cube(CUBE_READ + "        g = 3 * x.cpu().numpy() ** 2 * grad_output.cpu().numpy()\n"
                  "        return torch.as_tensor(g, dtype=x.dtype).reshape(x.shape).to(x.device)")),
    Unusual("CubeOnce", "decorators in the reverse order (fine on Python >= 3.10)",
            _cube(CUBE_READ + "        return grad_output * 3 * x ** 2",
                  decorator="").replace("    @staticmethod\n    def backward",
                                        "    @once_differentiable\n    @staticmethod\n"
                                        "    def backward")),
    # review 59: saving the output and a cube root in backward is a mistake (review59.py)
    Unusual("CubeOnce", "conversions as helpers, 0-d safe",
            "import numpy as np\n\n\ndef to_numpy(t):\n    return t.detach().cpu().numpy()\n\n\n"
            "def to_torch(a, like):\n    return torch.as_tensor(a).to(like.device)\n"
            + _cube(CUBE_READ + "        return to_torch(to_numpy(grad_output) * 3 * "
                    "to_numpy(x) ** 2, x)")),
    # review 52: x.detach() shares x's memory (not a copy); the mark above @staticmethod
    Unusual("CubeOnce", "saves x.detach(), marked above @staticmethod, NumPy square",
            "import numpy as np\n" + _cube(
                CUBE_READ + "        a = x.cpu().numpy()\n"
                "        return grad_output * torch.tensor(3 * np.square(a), device=x.device)",
                "        ctx.save_for_backward(x.detach())\n        return x ** 3",
                decorator="").replace("    @staticmethod\n    def backward",
                                      "    @once_differentiable\n    @staticmethod\n"
                                      "    def backward")),
    Unusual("CubeOnce", "marked after the class without staticmethod (placement (c))",
            _cube(CUBE_READ + "        return grad_output * 3 * x ** 2", decorator="")
            + "\n\nCubeOnce.backward = once_differentiable(CubeOnce.backward)\n"),
    Unusual("CubeOnce", "marked after the class, as the lesson's solution does",
            _cube(CUBE_READ + "        return grad_output * 3 * x ** 2", decorator="")
            + "\n\nCubeOnce.backward = staticmethod(once_differentiable(CubeOnce.backward))\n"),
]

MISTAKES = [
    Mistake("CubeOnce", "saves x squared widened to float64", "forward saved a float64 tensor",
            _cube("        x2, = ctx.saved_tensors\n        return 3 * x2 * grad_output",
                  "        ctx.save_for_backward((x * x).double())\n        return x * x * x")),
    Mistake("CubeOnce", "saves x.clone()", "forward saved a copy of x",
            _cube(CUBE_READ + "        return 3 * x * x * grad_output",
                  "        ctx.save_for_backward(x.clone())\n        return x ** 3")),
    Mistake("CubeOnce", "returns a copy of the output it saves", "forward saved a copy of the output",
            _cube("        x, y = ctx.saved_tensors\n        return 3 * x * x * grad_output",
                  "        y = x ** 3\n        ctx.save_for_backward(x, y)\n        return y.clone()")),
    Mistake("CubeOnce", "forgets @once_differentiable", "a second backward through CubeOnce "
            "succeeded", _cube(CUBE_READ + "        return grad_output * 3 * x ** 2",
                               decorator=""), named=True, nbgrader=True),
    Mistake("CubeOnce", "the mark on forward instead of backward (placement (a))",
            "a second backward through CubeOnce succeeded",
            _cube(CUBE_READ + "        return grad_output * 3 * x ** 2", decorator="")
            .replace("    @staticmethod\n    def forward",
                     "    @staticmethod\n    @once_differentiable\n    def forward")),
    Mistake("CubeOnce", "detaches instead", "your backward is not marked @once_differentiable, "
            "and the gradient it returns has no graph",
            _cube(CUBE_READ + "        return (grad_output * 3 * x ** 2).detach()",
                  decorator="")),
    Mistake("CubeOnce", "all NumPy, grad_output too, and not marked", "your backward is not "
            "marked @once_differentiable, and the gradient it returns has no graph",
            "import numpy as np\n" + _cube(
                CUBE_READ + "        g, a = grad_output.detach().numpy(), x.detach().numpy()\n"
                "        return torch.from_numpy(g * 3 * a ** 2)", decorator="")),
    Mistake("CubeOnce", "3x instead of 3x^2", "your gradient for x is wrong",
            _cube(CUBE_READ + "        return grad_output * 3 * x")),
    Mistake("CubeOnce", "torch.from_numpy of a NumPy scalar: fails a 0-d x",
            "torch.from_numpy takes NumPy arrays only; what does NumPy arithmetic on a 0-d "
            "array return?",
            "import numpy as np\n" + _cube(
                CUBE_READ + "        return grad_output * torch.from_numpy(3 * x.numpy() ** 2)"),
            named=True),
    Mistake("CubeOnce", "x kept on ctx", "CubeOnce stores a tensor as ctx.x",
            _cube("        return grad_output * 3 * ctx.x ** 2",
                  "        ctx.x = x\n        return x ** 3"), named=True),
    Mistake("CubeOnce", "a NumPy view of x kept on ctx", "CubeOnce keeps a NumPy array as ctx.a",
            "import numpy as np\n" + _cube(
                "        return grad_output * torch.as_tensor(3 * ctx.a ** 2).to(grad_output)",
                "        ctx.a = x.detach().cpu().numpy()\n        return x ** 3")),
    Mistake("CubeOnce", "a NumPy copy of x kept on ctx", "CubeOnce keeps a NumPy array as ctx.a",
            "import numpy as np\n" + _cube(
                "        return grad_output * torch.as_tensor(3 * ctx.a ** 2).to(grad_output)",
                "        ctx.a = x.detach().cpu().numpy().copy()\n        return x ** 3")),
    # review 52: NumPy writes through .numpy() into memory the caller owns
    Mistake("CubeOnce", "NumPy backward squares x in place through .numpy()",
            "CubeOnce.backward modified its input x in place",
            "import numpy as np\n" + _cube(
                CUBE_READ + "        a = x.detach().cpu().numpy()\n        a *= a\n        a *= 3\n"
                "        return grad_output * torch.as_tensor(a).to(x.device)")),
    Mistake("CubeOnce", "NumPy backward multiplies into grad_output through .numpy()",
            "CubeOnce's backward modified grad_output in place",
            "import numpy as np\n" + _cube(
                CUBE_READ + "        g = grad_output.detach().cpu().numpy()\n"
                "        g *= 3 * x.detach().cpu().numpy() ** 2\n"
                "        return torch.as_tensor(g).to(x.device)")),
]
