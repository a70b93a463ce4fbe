"""Lesson 04: answers with known verdicts for CubeOnce, a backward marked @once_differentiable
whose local derivative is computed in NumPy: its builders, then its unusual answers and
mistakes: the mark and where it goes, what forward saves (x, the output, 3x^2, a copy, an
alias autograd does not guard), the way back from NumPy to x's device and dtype, the ends of
x ** 3's range, and state kept outside ctx."""

from .. import Mistake, Unusual, edit


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
    Unusual("CubeOnce", "a NumPy backward, as the lesson motivates",
            _cube(CUBE_READ + "        g = 3 * x.cpu().numpy() ** 2 * grad_output.cpu().numpy()\n"
                  "        return torch.as_tensor(g, dtype=x.dtype).reshape(x.shape).to(x.device)")),
    # saving the output and a cube root in backward is a mistake (listed below)
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
    Mistake("CubeOnce", "a NumPy view of x kept on ctx", "CubeOnce keeps a NumPy array as ctx.a: "
            "the contract keeps what backward needs only with ctx.save_for_backward",
            "import numpy as np\n" + _cube(
                "        return grad_output * torch.as_tensor(3 * ctx.a ** 2).to(grad_output)",
                "        ctx.a = x.detach().cpu().numpy()\n        return x ** 3")),
    Mistake("CubeOnce", "a NumPy copy of x kept on ctx", "which tensor that forward already "
            "has could it save in the array's place?",
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


NUMPY = "import numpy as np\n"


STASH = "_kept = {}\n"


LOCAL = "        a = x.detach().cpu().numpy()\n        {where}.local = np.asarray(3 * a ** 2)\n"


CUBE = NUMPY + _cube(CUBE_READ + "        local = torch.as_tensor(3 * x.detach().cpu().numpy() ** 2)"
                     ".to(x.device)\n        return grad_output * local")


LOCAL_2 = "        local = torch.as_tensor(3 * x.detach().cpu().numpy() ** 2).to(x.device)\n"


CUBE_2 = NUMPY + _cube(CUBE_READ + LOCAL_2 + "        return grad_output * local")


ALIAS = "shares x's memory but is not x"


CUBE_3 = "import numpy as np\n" + _cube(
    "        x, = ctx.saved_tensors\n"
    "        local = torch.as_tensor(3 * x.detach().cpu().numpy() ** 2).to(x.device)\n"
    "        return grad_output * local")


FROM_OUTPUT = ("        y = x ** 3\n        ctx.save_for_backward(x, y)\n        return y")


SAVES_OUTPUT = "        y = x ** 3\n        ctx.save_for_backward(y)\n        return y"


CBRT = "import numpy as np\n" + _cube(
    "        y, = ctx.saved_tensors\n        c = np.cbrt(y.detach().cpu().numpy())\n"
    "        return grad_output * torch.as_tensor(3 * c * c).to(y.device)", SAVES_OUTPUT)


HINT = "computing the derivative from the saved output y (whatever the operation)"


CUBE_LOCAL = ("        if not hasattr(ctx, 'local'):\n            x, = ctx.saved_tensors\n"
              "            ctx.local = torch.as_tensor(3 * x.detach().cpu().numpy() ** 2)"
              ".to(x.device)\n        return grad_output * ctx.local")


CUBE_CACHE = "import numpy as np\n" + _cube(CUBE_LOCAL)


HINT_2 = "in backward: the contract keeps tensors only with ctx.save_for_backward"


CTX_META = edit(CUBE, ("        return x ** 3",
                      "        ctx.dtype, ctx.device = x.dtype, x.device\n        return x ** 3"),
                ("torch.as_tensor(3 * x.detach().cpu().numpy() ** 2).to(x.device)",
                 "torch.as_tensor(3 * x.detach().cpu().numpy() ** 2, dtype=ctx.dtype, "
                 "device=ctx.device)"))


MISTAKES += [
    Mistake("CubeOnce", "x kept in a module dict keyed by id(ctx)",
            "CubeOnce's backward reads what it needs from somewhere other than ctx.saved_tensors",
            NUMPY + STASH + _cube(
                "        x = _kept[id(ctx)]\n        a = x.detach().cpu().numpy()\n"
                "        return grad_output * torch.as_tensor(3 * a ** 2).to(x.device)",
                "        _kept[id(ctx)] = x\n        return x ** 3")),
    Mistake("CubeOnce", "3x^2 as a NumPy array on ctx", "CubeOnce keeps a NumPy array as "
            "ctx.local: the contract keeps what backward needs only with ctx.save_for_backward, "
            "and an array on ctx is outside autograd's view",
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
    Mistake("CubeOnce", "3x^2 memoised in a global dict keyed by x.data_ptr()",
            "returned grad_x of the old values",
            "_CACHE = {}\n" + edit(CUBE_2, (LOCAL_2, "        key = (x.data_ptr(), tuple(x.shape), "
                                          "x.dtype)\n"
                                          "        if key not in _CACHE:  # x kept alive with it\n"
                                          "    " + LOCAL_2.replace("local =", "_CACHE[key] = x,") +
                                          "        local = _CACHE[key][1]\n"))),
    Mistake("CubeOnce", "multiplies by grad_output's first entry only",
            "the local derivative times one number",
            edit(CUBE_2, ("grad_output * local", "local * grad_output.reshape(-1)[0]"))),
    Mistake("CubeOnce", "saves torch.from_numpy(x.numpy()), an alias of x", ALIAS, edit(
        CUBE_2, ("        ctx.save_for_backward(x)\n",
               "        ctx.save_for_backward(torch.from_numpy(x.detach().cpu().numpy()))\n")),
        named=True),
    Mistake("CubeOnce", "saves x.data", ALIAS, edit(
        CUBE_2, ("        ctx.save_for_backward(x)\n", "        ctx.save_for_backward(x.data)\n"))),
    Mistake("CubeOnce", "saves a CPU copy of x when x is on a GPU, for NumPy in backward",
            "saved a CPU copy of x", edit(
                CUBE_2, ("        ctx.save_for_backward(x)\n",
                       "        ctx.save_for_backward(x.detach().cpu() if x.is_cuda else x)\n"),
                ("to(x.device)", "to(grad_output.device)"))),
    Mistake("CubeOnce", "saves the output's .data, a cube root in backward",
            "shares the output's memory", NUMPY + _cube(
                "        y, = ctx.saved_tensors\n        c = np.cbrt(y.detach().cpu().numpy())\n"
                "        return grad_output * torch.as_tensor(3 * c * c).to(y.device)",
                "        y = x ** 3\n        ctx.save_for_backward(y.data)\n        return y")),
    Mistake("CubeOnce", "3y / x in NumPy from the saved x and output: nan at x = 0",
            "backward divides by x there (0 / 0), as recovering 3x^2 from the output",
            edit(CUBE_3, ("        ctx.save_for_backward(x)\n        return x ** 3", FROM_OUTPUT),
                 ("        x, = ctx.saved_tensors\n", "        x, y = ctx.saved_tensors\n"),
                 ("3 * x.detach().cpu().numpy() ** 2",
                  "3 * y.detach().cpu().numpy() / x.detach().cpu().numpy()"))),
    Mistake("CubeOnce", "y ** (1 / 3) of the saved output: nan at negative x",
            "exactly where x < 0: a formula undefined there",
            edit(CUBE_3, ("        ctx.save_for_backward(x)\n        return x ** 3", FROM_OUTPUT),
                 ("        x, = ctx.saved_tensors\n", "        x, y = ctx.saved_tensors\n"),
                 ("3 * x.detach().cpu().numpy() ** 2",
                  "3 * (y.detach().cpu().numpy() ** (1 / 3)) ** 2"))),
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
    Mistake("CubeOnce", "grad_output times the NumPy array, unconverted",
            "NumPy was handed CubeOnce's tensor on x's device and converted it itself",
            _cube(CUBE_READ + "        return grad_output * (3 * x.detach().cpu().numpy() ** 2)"),
            named=True),
    Mistake("CubeOnce", "memoises 3x^2 as ctx.local in backward",
            "CubeOnce.backward sets ctx.local (a tensor) " + HINT_2, CUBE_CACHE, named=True),
    Mistake("CubeOnce", "memoises 3x^2 as a NumPy array on ctx in backward",
            "CubeOnce.backward sets ctx.local (a NumPy array) " + HINT_2,
            edit(CUBE_CACHE, ("torch.as_tensor(3 * x.detach().cpu().numpy() ** 2).to(x.device)",
                              "3 * x.detach().cpu().numpy() ** 2"),
                 ("grad_output * ctx.local", "torch.as_tensor(grad_output.cpu().numpy() * "
                  "ctx.local).to(grad_output.device)")), named=True),
    Mistake("CubeOnce", "3x^2 cast to float32 in backward (torch.as_tensor(..., dtype=float32))",
            "is 3x^2 rounded to float32",
            edit(CUBE, ("torch.as_tensor(3 * x.detach().cpu().numpy() ** 2)",
                        "torch.as_tensor(3 * x.detach().cpu().numpy() ** 2, "
                        "dtype=torch.float32)")), named=True),
    Mistake("CubeOnce", "raises its own once_differentiable-like error instead of the mark",
            "raising an error yourself is not the mark",
            edit(CUBE, ("    @once_differentiable\n", ""),
                 ("        return grad_output * local",
                  "        if grad_output.requires_grad:\n            raise RuntimeError("
                  "\"trying to differentiate twice a function that was marked with "
                  "@once_differentiable\")\n        return grad_output * local")), named=True),
    Mistake("CubeOnce", "3x^2 computed from x narrowed to float32 in NumPy (.astype)",
            "is 3x^2 rounded to float32",
            edit(CUBE, ("3 * x.detach().cpu().numpy() ** 2",
                        "3 * x.detach().cpu().numpy().astype(np.float32) ** 2")), named=True),
    Mistake("CubeOnce", "3y / x in NumPy from the saved x and output, guarded at x = 0",
            "computing the derivative from the saved output y (whatever the operation)",
            NUMPY + _cube("        x, y = ctx.saved_tensors\n"
                  "        a, b = x.detach().cpu().numpy(), y.detach().cpu().numpy()\n"
                  "        with np.errstate(all='ignore'):\n"
                  "            local = np.where(a == 0, 0.0, 3 * b / np.where(a == 0, 1, a))"
                  ".astype(a.dtype)\n"
                  "        return grad_output * torch.as_tensor(local).to(x.device)",
                  "        y = x ** 3\n        ctx.save_for_backward(x, y)\n        return y"),
            named=True),
    Mistake(
    "CubeOnce", "x's dtype kept in a global: the last call's dtype rounds an earlier call's 3x^2",
    "wrong when a float32 call ran its forward before",
    edit(CTX_META, ("        ctx.dtype, ctx.device = x.dtype, x.device\n",
                    "        global _DTYPE\n        _DTYPE, ctx.device = x.dtype, x.device\n"),
         ("dtype=ctx.dtype", "dtype=_DTYPE"))),
    Mistake("CubeOnce", "3x^2 cast to float16 in backward (torch.as_tensor(..., "
            "dtype=torch.float16))", "3x^2 rounded to float16",
            edit(CUBE, ("torch.as_tensor(3 * x.detach().cpu().numpy() ** 2)",
                        "torch.as_tensor(3 * x.detach().cpu().numpy() ** 2, dtype=torch.float16)"))),
    Mistake("CubeOnce", "x.numpy() on the saved x, backward not marked",
            "CubeOnce.backward raised RuntimeError only when run with create_graph=True",
            "import numpy as np\n" + _cube(
                CUBE_READ + "        g = grad_output.detach().numpy() * 3 * x.numpy() ** 2\n"
                "        return torch.as_tensor(g)", decorator="")),
    Mistake("CubeOnce", "backward returns the NumPy array itself",
            "CubeOnce.backward returned a NumPy array where autograd needs a tensor",
            "import numpy as np\n" + _cube(
                CUBE_READ + "        return grad_output.numpy() * 3 * x.numpy() ** 2")),
]


UNUSUAL += [
    # (3x^2 saved in float64 NumPy for a float32 x: a mistake by rule 2's dtype, at the end)
    Unusual("CubeOnce", "torch.tensor(np.multiply(g, 3x^2), device=x.device), no detach under "
            "the mark", edit(CUBE, ("        local = torch.as_tensor(3 * x.detach().cpu().numpy()"
                                    " ** 2).to(x.device)\n        return grad_output * local",
                                    "        a, g = x.cpu().numpy(), grad_output.cpu().numpy()\n"
                                    "        return torch.tensor(np.multiply(g, 3 * a * a), "
                                    "device=x.device)"))),
    # (a float64 gradient for a float32 x: a mistake by rule 2's dtype, at the end)
    Unusual("CubeOnce", "torch.as_tensor(..., device=grad_output.device, dtype=grad_output.dtype)",
            edit(CUBE, (").to(x.device)",
                        ", device=grad_output.device, dtype=grad_output.dtype)"))),
    Unusual("CubeOnce", "backward flattens grad_output and x, then reshapes", edit(
        CUBE_2, (LOCAL_2 + "        return grad_output * local",
               "        a = x.detach().cpu().numpy().reshape(-1)\n        return (grad_output."
               "reshape(-1) * torch.as_tensor(3 * a ** 2).to(x.device)).reshape(x.shape)"))),
    Unusual("CubeOnce", "saves 3x^2 made in NumPy, the whole backward in NumPy, the mark "
            "applied by hand to __dict__['backward'].__func__",
            edit(CUBE_3, ("        ctx.save_for_backward(x)\n",
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
    Unusual("CubeOnce", "keeps x's dtype and device on ctx (metadata, no tensor)", CTX_META),
]


# Rule 3 (memory linear in the sizes, NumPy included), the device named, and .numpy(force=True).
UNUSUAL += [
    Unusual("CubeOnce", "x.numpy(force=True), back with x.new_tensor",
            "import numpy as np\n" + '\nclass CubeOnce(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        ctx.save_for_backward(x)\n        return x ** 3\n    @staticmethod\n    @once_differentiable\n    def backward(ctx, grad_output):\n        x, = ctx.saved_tensors\n        return grad_output * x.new_tensor(3 * np.square(x.numpy(force=True)))\n'),
    Unusual("CubeOnce", "the product in NumPy from numpy(force=True), back with .to(grad_output)",
            "import numpy as np\n" + '\nclass CubeOnce(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        ctx.save_for_backward(x)\n        return x * x * x\n    @staticmethod\n    @once_differentiable\n    def backward(ctx, grad_output):\n        x, = ctx.saved_tensors\n        a, g = x.numpy(force=True), grad_output.numpy(force=True)\n        return torch.as_tensor(3 * g * a * a).to(grad_output)\n'),
]
MISTAKES += [
    Mistake("CubeOnce", "an n x n NumPy Jacobian",
            "a Jacobian built as a matrix",
            "import numpy as np\n" + '\nclass CubeOnce(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        ctx.save_for_backward(x)\n        return x ** 3\n    @staticmethod\n    @once_differentiable\n    def backward(ctx, grad_output):\n        x, = ctx.saved_tensors\n        a = x.detach().cpu().numpy().reshape(-1)\n        J = np.diag(3 * a ** 2)                                   # n x n\n        g = grad_output.detach().cpu().numpy().reshape(-1)\n        return torch.as_tensor((g @ J).reshape(x.shape)).to(x.device)\n'),
    Mistake("CubeOnce", "device=\"cuda\" if x.is_cuda else \"cpu\"",
            "named a CUDA device itself",
            "import numpy as np\n" + '\nclass CubeOnce(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        ctx.save_for_backward(x)\n        return x ** 3\n    @staticmethod\n    @once_differentiable\n    def backward(ctx, grad_output):\n        x, = ctx.saved_tensors\n        dev = "cuda" if x.is_cuda else "cpu"\n        local = torch.as_tensor(3 * x.detach().cpu().numpy() ** 2, device=dev)\n        return grad_output * local\n'),
]

# Review 75: the contract's NumPy bullet (3x^2 computed in NumPy; torch only converts and
# multiplies by grad_output), graded since. These answers passed before it was (several were
# catalogued unusual, for the mark's placement); each computes 3x^2 with torch, and each placement
# has a NumPy twin among the unusual answers below.
CUBE_TORCH_BACKWARD = "CubeOnce.backward computes with torch ops"
CUBE_TORCH_FORWARD = "CubeOnce.forward saves a tensor it computed with torch ops"

MISTAKES += [
    Mistake("CubeOnce", "no NumPy at all: g * 3 * x ** 2 under the mark (review 75)",
            CUBE_TORCH_BACKWARD, _cube(CUBE_READ + "        return grad_output * 3 * x ** 2"),
            named=True),
    Mistake("CubeOnce", "x * x * x, saves x squared made in torch, 3 * x2 * grad_output in torch", CUBE_TORCH_FORWARD,
            _cube("        x2, = ctx.saved_tensors\n        return 3 * x2 * grad_output",
                  "        ctx.save_for_backward(x * x)\n        return x * x * x")),
    Mistake("CubeOnce", "torch.pow, a mul chain in backward", CUBE_TORCH_BACKWARD,
            _cube(CUBE_READ + "        return grad_output.mul(3).mul(x.square())",
                  "        ctx.save_for_backward(x)\n        return torch.pow(x, 3)")),
    Mistake("CubeOnce", "decorators in the reverse order, backward in torch", CUBE_TORCH_BACKWARD,
            _cube(CUBE_READ + "        return grad_output * 3 * x ** 2",
                  decorator="").replace("    @staticmethod\n    def backward",
                                        "    @once_differentiable\n    @staticmethod\n"
                                        "    def backward")),
    Mistake("CubeOnce", "marked after the class without staticmethod, backward in torch", CUBE_TORCH_BACKWARD,
            _cube(CUBE_READ + "        return grad_output * 3 * x ** 2", decorator="")
            + "\n\nCubeOnce.backward = once_differentiable(CubeOnce.backward)\n"),
    Mistake("CubeOnce", "marked after the class, as the solution does, backward in torch", CUBE_TORCH_BACKWARD,
            _cube(CUBE_READ + "        return grad_output * 3 * x ** 2", decorator="")
            + "\n\nCubeOnce.backward = staticmethod(once_differentiable(CubeOnce.backward))\n"),
    Mistake("CubeOnce", "the mark applied after the class, saves x.view_as(x), backward in torch", CUBE_TORCH_BACKWARD,
            _cube(CUBE_READ + "        return grad_output * 3 * x * x",
                  "        ctx.save_for_backward(x.view_as(x))\n        return x ** 3", "")
            + "\nCubeOnce.backward = once_differentiable(CubeOnce.backward)\n"),
    Mistake("CubeOnce", "@once_differentiable above @staticmethod, saves 3x^2 made with torch in forward", CUBE_TORCH_FORWARD,
            edit(_cube("        local, = ctx.saved_tensors\n        return grad_output * local",
                       "        ctx.save_for_backward(3 * x * x)\n        return x ** 3"),
                 ("    @staticmethod\n    @once_differentiable\n    def backward",
                  "    @once_differentiable\n    @staticmethod\n    def backward"))),
]

NP_LOCAL = ("        local = torch.as_tensor(3 * x.detach().cpu().numpy() ** 2).to(x.device)\n"
            "        return grad_output * local")

UNUSUAL += [
    Unusual("CubeOnce", "decorators in the reverse order (fine on Python >= 3.10), NumPy 3x^2",
            "import numpy as np\n" + _cube(CUBE_READ + NP_LOCAL, decorator="").replace(
                "    @staticmethod\n    def backward",
                "    @once_differentiable\n    @staticmethod\n    def backward")),
    Unusual("CubeOnce", "marked after the class without staticmethod (placement (c)), NumPy 3x^2",
            "import numpy as np\n" + _cube(CUBE_READ + NP_LOCAL, decorator="")
            + "\n\nCubeOnce.backward = once_differentiable(CubeOnce.backward)\n"),
    Unusual("CubeOnce", "the mark applied after the class, saves x.view_as(x), NumPy 3x^2",
            "import numpy as np\n" + _cube(CUBE_READ + NP_LOCAL,
                                           "        ctx.save_for_backward(x.view_as(x))\n"
                                           "        return x ** 3", "")
            + "\nCubeOnce.backward = once_differentiable(CubeOnce.backward)\n"),
    Unusual("CubeOnce", "x * x * x in torch, saves x, 3x^2 in NumPy",
            "import numpy as np\n" + _cube(CUBE_READ + NP_LOCAL,
                                           "        ctx.save_for_backward(x)\n"
                                           "        return x * x * x")),
]

# Rule 2's dtype: backward returns float64 for a float32 x, which autograd casts back without a
# word. The first two were catalogued as correct (unusual) until that clause was graded for
# every exercise (autograder.returned_dtypes): now mistakes. The third is a fresh review's
# (review77, C5): 3x^2 taken in NumPy in float64 whatever x's dtype.
MISTAKES += [
    Mistake("CubeOnce", "saves 3x^2 made in float64 NumPy (more digits for float32 x)",
            "CubeOnce.backward returned grad_x in float64 for a float32 x",
            NUMPY + _cube("        local, = ctx.saved_tensors\n        return grad_output * local",
                          "        a = x.detach().cpu().numpy().astype(np.float64)\n"
                          "        ctx.save_for_backward(torch.as_tensor(3 * a ** 2).to(x.device))"
                          "\n        return x ** 3")),
    Mistake("CubeOnce", "a float64 gradient for a float32 x (the engine casts it back)",
            "CubeOnce.backward returned grad_x in float64 for a float32 x",
            edit(CUBE, ("numpy() ** 2", "numpy().astype(np.float64) ** 2"),
                 ("grad_output * local", "grad_output.double() * local"))),
    Mistake("CubeOnce", "NumPy 3x^2 always in float64: float64 returned for a float32 x",
            "CubeOnce.backward returned grad_x in float64 for a float32 x",
            "import numpy as np\n" + _cube(
                CUBE_READ + "        local = 3 * x.detach().cpu().numpy().astype(np.float64) ** 2\n"
                "        return grad_output * torch.as_tensor(local).to(x.device)")),
]
