"""Lesson 00 (template): Square and WeightedSum, answered unusually and answered wrongly."""

from tools.catalogue import Mistake, Unusual


def _square(forward: str, backward: str) -> str:
    return f"""
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
{forward}

    @staticmethod
    def backward(ctx, grad_output):
{backward}
"""


def _weighted(backward: str, forward: str = "        ctx.w1, ctx.w2 = w1, w2\n"
              "        return w1 * x1 + w2 * x2") -> str:
    return f"""
class WeightedSum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x1, x2, w1, w2):
{forward}

    @staticmethod
    def backward(ctx, grad_output):
{backward}
"""


def _outer(backward: str, forward: str = "        ctx.save_for_backward(u, v)\n"
           "        return torch.outer(u, v)") -> str:
    return f"""
class Outer(torch.autograd.Function):
    @staticmethod
    def forward(ctx, u, v):
{forward}

    @staticmethod
    def backward(ctx, grad_output):
{backward}
"""


READ_UV = "        u, v = ctx.saved_tensors\n"
SAVE_X = "        ctx.save_for_backward(x)\n        return x ** 2"
READ_X = "        x, = ctx.saved_tensors\n"

UNUSUAL = [
    Unusual("Square", "x * x and 2 * x computed as x + x",
            _square("        ctx.save_for_backward(x)\n        return x * x",
                    READ_X + "        return grad_output * (x + x)")),
    Unusual("Square", "torch.mul and torch.square, gradient via torch.addcmul",
            _square("        ctx.save_for_backward(x)\n        return torch.square(x)",
                    READ_X + "        return torch.addcmul(torch.zeros_like(x), grad_output, x,"
                    " value=2)")),
    Unusual("Square", "einsum forward and backward",
            _square("        ctx.save_for_backward(x)\n        return torch.einsum('...,...->...', x, x)",
                    READ_X + "        return torch.einsum('...,...->...', grad_output, 2 * x)")),
    Unusual("Square", "needs_input_grad checked, pow(2)",
            _square("        ctx.save_for_backward(x)\n        return x.pow(2)",
                    READ_X + "        return 2 * x * grad_output if ctx.needs_input_grad[0] "
                    "else None")),
    Unusual("Square", "forward without ctx and a setup_context (the torch.func style)",
            """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return x * x

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, = inputs
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return 2 * x * grad_output
"""),
    Unusual("Square", "saves x only when it needs a gradient; in-place on its own product",
            _square("        if ctx.needs_input_grad[0]:\n            ctx.save_for_backward(x)\n"
                    "        return x.square()",
                    READ_X + "        return torch.mul(grad_output, x).mul_(2)")),
    # x.detach() shares x's version counter: autograd still refuses an in-place change
    Unusual("Square", "saves x.detach(), which autograd still tracks",
            _square("        ctx.save_for_backward(x.detach())\n        return x ** 2",
                    READ_X + "        return grad_output * 2 * x")),
    Unusual("Square", "set_materialize_grads(False), a None grad_output handled",
            _square("        ctx.set_materialize_grads(False)\n        ctx.save_for_backward(x)\n"
                    "        return x ** 2",
                    "        if grad_output is None:\n            return None\n" + READ_X
                    + "        return grad_output * x * 2")),
    Unusual("WeightedSum", "torch.add with alpha",
            _weighted("        return grad_output * ctx.w1, grad_output * ctx.w2, None, None",
                      "        ctx.w1, ctx.w2 = w1, w2\n"
                      "        return torch.add(w1 * x1, x2, alpha=w2)")),
    Unusual("WeightedSum", "weights kept as a tuple, gradients from needs_input_grad",
            _weighted("        w1, w2 = ctx.weights\n"
                      "        return tuple(grad_output * w if need else None\n"
                      "                     for w, need in zip((w1, w2, None, None),"
                      " ctx.needs_input_grad[:2]))"
                      " + (None, None)",
                      "        ctx.weights = (w1, w2)\n        return w1 * x1 + w2 * x2")),
    Unusual("WeightedSum", "torch.mul by Python floats, list returned as tuple",
            _weighted("        return tuple([torch.mul(grad_output, ctx.w1),"
                      " torch.mul(grad_output, ctx.w2), None, None])",
                      "        ctx.w1, ctx.w2 = w1, w2\n"
                      "        return torch.mul(x1, w1) + torch.mul(x2, w2)")),
    Unusual("WeightedSum", "PyTorch 0.3's Add/Mul style: one tuple, needs_input_grad unpacked",
            _weighted("        need_x1, need_x2, _, _ = ctx.needs_input_grad\n"
                      "        return (grad_output.mul(ctx.w1) if need_x1 else None,\n"
                      "                grad_output.mul(ctx.w2) if need_x2 else None, None, None)")),
    Unusual("WeightedSum", "setup_context, weights kept as one tuple",
            """
class WeightedSum(torch.autograd.Function):
    @staticmethod
    def forward(x1, x2, w1, w2):
        return w1 * x1 + w2 * x2

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.w = inputs[2:]

    @staticmethod
    def backward(ctx, g):
        n1, n2, _, _ = ctx.needs_input_grad
        return (g * ctx.w[0] if n1 else None, g * ctx.w[1] if n2 else None, None, None)
"""),
    # PyTorch's own AddBackward passes the incoming gradient on unchanged
    Unusual("WeightedSum", "grad_output itself, unscaled, for a weight of 1",
            _weighted("        out = [None, None]\n"
                      "        for i, w in enumerate((ctx.w1, ctx.w2)):\n"
                      "            if ctx.needs_input_grad[i]:\n"
                      "                out[i] = grad_output if w == 1 else grad_output * w\n"
                      "        return out[0], out[1], None, None")),
    Unusual("WeightedSum", "weights saved as 0-d tensors of the input's dtype",
            _weighted("        w1, w2 = ctx.saved_tensors\n"
                      "        return grad_output * w1, grad_output * w2, None, None",
                      "        ctx.save_for_backward(torch.tensor(w1, dtype=x1.dtype),"
                      " torch.tensor(w2, dtype=x1.dtype))\n        return w1 * x1 + w2 * x2")),
    # PyTorch 0.3's torch/autograd/_functions/blas.py, class Addr (M + u v^T): backward
    # `torch.mv(grad_output, vector2)` and `torch.mm(vector1.unsqueeze(0), grad_output)`
    Unusual("Outer", "torch.mv and torch.mm, as PyTorch 0.3's Addr Function",
            _outer(READ_UV + "        grad_u = grad_v = None\n"
                   "        if ctx.needs_input_grad[0]:\n"
                   "            grad_u = torch.mv(grad_output, v)\n"
                   "        if ctx.needs_input_grad[1]:\n"
                   "            grad_v = torch.mm(u.unsqueeze(0), grad_output).squeeze(0)\n"
                   "        return grad_u, grad_v",
                   "        ctx.save_for_backward(u, v)\n        return torch.ger(u, v)")),
    Unusual("Outer", "einsum forward and backward",
            _outer(READ_UV + "        need_u, need_v = ctx.needs_input_grad\n"
                   "        return (torch.einsum('ij,j->i', grad_output, v) if need_u else None,\n"
                   "                torch.einsum('ij,i->j', grad_output, u) if need_v else None)",
                   "        ctx.save_for_backward(u, v)\n"
                   "        return torch.einsum('i,j->ij', u, v)")),
    Unusual("Outer", "broadcast products summed over the other index",
            _outer(READ_UV + "        grad_u = (grad_output * v).sum(1) if ctx.needs_input_grad[0] "
                   "else None\n"
                   "        grad_v = (grad_output * u[:, None]).sum(0) if "
                   "ctx.needs_input_grad[1] else None\n        return grad_u, grad_v",
                   "        ctx.save_for_backward(u, v)\n        return u.unsqueeze(1) * v")),
    Unusual("Outer", "saves only the input the other gradient needs",
            _outer("        saved = ctx.saved_tensors\n"
                   "        need_u, need_v = ctx.needs_input_grad\n"
                   "        grad_u = grad_output @ saved[-1] if need_u else None\n"
                   "        grad_v = saved[0] @ grad_output if need_v else None\n"
                   "        return grad_u, grad_v",
                   "        need_u, need_v = ctx.needs_input_grad\n"
                   "        ctx.save_for_backward(*([u] if need_v else []), *([v] if need_u else []))\n"
                   "        return torch.outer(u, v)")),
    Unusual("Outer", "setup_context, broadcast forward, grad_v through mT",
            """
class Outer(torch.autograd.Function):
    @staticmethod
    def forward(u, v):
        return u.unsqueeze(-1) * v.unsqueeze(-2)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    @staticmethod
    def backward(ctx, g):
        u, v = ctx.saved_tensors
        return (g @ v if ctx.needs_input_grad[0] else None,
                g.mT @ u if ctx.needs_input_grad[1] else None)
"""),
    Unusual("Outer", "tensordot", _outer(
        READ_UV + "        need_u, need_v = ctx.needs_input_grad\n"
        "        return (torch.tensordot(grad_output, v, dims=1) if need_u else None,\n"
        "                torch.tensordot(u, grad_output, dims=1) if need_v else None)")),
    # the engine sums a (1, m) gradient down to u's (m,)
    Unusual("Outer", "grad_u as a (1, m) row, which the engine sums to (m,)", _outer(
        READ_UV + "        need_u, need_v = ctx.needs_input_grad\n"
        "        return ((grad_output @ v)[None] if need_u else None,\n"
        "                u @ grad_output if need_v else None)")),
    Unusual("Outer", "saves u.detach() and v.detach(), which autograd still tracks", _outer(
        READ_UV + "        need_u, need_v = ctx.needs_input_grad\n"
        "        return (grad_output @ v if need_u else None, u @ grad_output if need_v else None)",
        "        ctx.save_for_backward(u.detach(), v.detach())\n        return torch.outer(u, v)")),
]

MISTAKES = [
    Mistake("Square", "wrong sign", "your gradient for x is the expected one times -1: check "
            "the sign", _square(SAVE_X, READ_X + "        return -2 * x * grad_output"),
),
    Mistake("Square", "constant factor 5x",
            "off by a constant factor 2.5: a factor missing, or one too many?",
            _square(SAVE_X, READ_X + "        return 5 * x * grad_output")),
    Mistake("Square", "zero gradient", "your gradient for x is zero everywhere, where the expected "
            "one is not", _square(SAVE_X, READ_X + "        return torch.zeros_like(x)")),
    Mistake("Square", "forgets grad_output", "Square.backward ignores grad_output: grad_x is "
            "the local derivative dy/dx alone",
            _square(SAVE_X, READ_X + "        return 2 * x"), named=True, nbgrader=True),
    Mistake("Square", "forward computes x ** 3", "Square's output is wrong",
            _square("        ctx.save_for_backward(x)\n        return x ** 3",
                    READ_X + "        return 2 * x * grad_output")),
    Mistake("Square", "tensor on ctx", "Square stores a tensor as ctx.x: use "
            "ctx.save_for_backward",
            _square("        ctx.x = x\n        return x ** 2",
                    "        return grad_output * 2 * ctx.x"), named=True),
    Mistake("Square", "two calls to save_for_backward", "your gradient for x is wrong",
            _square("        ctx.save_for_backward(x)\n        y = x ** 2\n"
                    "        ctx.save_for_backward(y)  # replaces (x,)\n        return y",
                    READ_X + "        return grad_output * 2 * x"), named=True),
    Mistake("Square", "saves x.data", "Square saved a tensor autograd cannot check for in-place "
            "changes",
            _square("        ctx.save_for_backward(x.data)\n        return x ** 2",
                    READ_X + "        return grad_output * 2 * x")),
    Mistake("Square", "backward left as the stub", "Square is not implemented yet: its stub "
            "still raises NotImplementedError",
            _square(SAVE_X, "        # YOUR CODE HERE\n        raise NotImplementedError()")),
    Mistake("Square", "a plain function", "Square must be a class deriving from "
            "torch.autograd.Function, got function", "\ndef Square(x):\n    return x ** 2\n"),
    Mistake("Square", "an instance", "Square is an instance: pass the class itself",
            _square(SAVE_X, READ_X + "        return 2 * x * grad_output")
            + "\nimport warnings\nwith warnings.catch_warnings():\n"
              "    warnings.simplefilter('ignore')\n    Square = Square()\n", named=True),
    Mistake("WeightedSum", "two gradients for four inputs",
            "backward returned 2 gradients for 4 inputs: return None for w1 and w2",
            _weighted("        return grad_output * ctx.w1, grad_output * ctx.w2"),
            named=True, nbgrader=True),
    Mistake("WeightedSum", "a gradient for the float w1",
            "backward returned a gradient for w1, which is not a tensor: return None for w1",
            _weighted("        return (grad_output * ctx.w1, grad_output * ctx.w2, "
                      "torch.zeros(()), None)"), named=True),
    Mistake("WeightedSum", "swapped weights", "the weights are swapped",
            _weighted("        return grad_output * ctx.w2, grad_output * ctx.w1, None, None")),
    Mistake("WeightedSum", "forgets grad_output", "WeightedSum.backward ignores grad_output: "
            "grad_x1 is the local derivative",
            _weighted("        ones = torch.ones_like(grad_output)\n"
                      "        return ones * ctx.w1, ones * ctx.w2, None, None")),
    Mistake("Square", "a Jacobian as a matrix: grad_output @ torch.diag(2 * x)",
            "Square.backward raised RuntimeError with x of shape (3, 4)",
            _square(SAVE_X, READ_X + "        return grad_output @ torch.diag(2 * x)")),
    Mistake("WeightedSum", "grad_x1 gated on needs_input_grad[1]",
            "it decides whether to compute grad_x1 from another input's entry of "
            "ctx.needs_input_grad (entry 0 belongs to x1)",
            _weighted("        grad_x1 = grad_output * ctx.w1 if ctx.needs_input_grad[1] else None\n"
                      "        grad_x2 = grad_output * ctx.w2 if ctx.needs_input_grad[1] else None\n"
                      "        return grad_x1, grad_x2, None, None"), named=True),
    Mistake("Outer", "ignores needs_input_grad",
            "Outer.backward returned a gradient for v although only u requires grad",
            _outer(READ_UV + "        return grad_output @ v, u @ grad_output"), nbgrader=True),
    Mistake("Outer", "entries of needs_input_grad swapped",
            "it decides whether to compute grad_u from another input's entry of "
            "ctx.needs_input_grad (entry 0 belongs to u)",
            _outer(READ_UV + "        need_v, need_u = ctx.needs_input_grad\n"
                   "        return (grad_output @ v if need_u else None,\n"
                   "                u @ grad_output if need_v else None)")),
    Mistake("Outer", "grad_u = grad_output.T @ v (the wrong side)",
            "Outer's gradient for u multiplies grad_output G from the wrong side",
            _outer(READ_UV + "        need_u, need_v = ctx.needs_input_grad\n"
                   "        return (grad_output.T @ v if need_u else None,\n"
                   "                u @ grad_output if need_v else None)")),
    Mistake("Outer", "grad_v = grad_output @ u (the wrong side)",
            "Outer's gradient for v multiplies grad_output G from the wrong side",
            _outer(READ_UV + "        need_u, need_v = ctx.needs_input_grad\n"
                   "        return (grad_output @ v if need_u else None,\n"
                   "                grad_output @ u if need_v else None)")),
    Mistake("Outer", "sums over the wrong index",
            "grad_u has shape (3,) but u has shape (4,)",
            _outer(READ_UV + "        need_u, need_v = ctx.needs_input_grad\n"
                   "        return ((grad_output * v).sum(0) if need_u else None,\n"
                   "                (grad_output * u[:, None]).sum(1) if need_v else None)")),
    Mistake("Outer", "saves the output", "Outer saved an output of shape (4, 3)",
            _outer("        u, v, y = ctx.saved_tensors\n        need_u, need_v = ctx.needs_input_grad\n"
                   "        return (grad_output @ v if need_u else None,\n"
                   "                u @ grad_output if need_v else None)",
                   "        y = torch.outer(u, v)\n        ctx.save_for_backward(u, v, y)\n"
                   "        return y")),
    Mistake("Outer", "forgets grad_output", "Outer.backward ignores grad_output: grad_u is "
            "the local derivative dy/du alone, the right gradient only when grad_output is all "
            "ones; u[k] reaches several outputs y[i, j], and each carries its own weight",
            _outer(READ_UV + "        need_u, need_v = ctx.needs_input_grad\n"
                   "        return (v.sum().expand(u.shape) if need_u else None,\n"
                   "                u.sum().expand(v.shape) if need_v else None)")),
    Mistake("Square", "x kept on the class", "Square's backward used another call's inputs",
            _square("        Square.saved = x.detach()\n        return x ** 2",
                    "        return 2 * Square.saved * grad_output"), named=True),
    Mistake("Square", "x kept in a global", "Square's backward used another call's inputs",
            "\n_saved = {}\n" + _square("        _saved['x'] = x\n        return x ** 2",
                                          "        return 2 * _saved['x'] * grad_output")),
    Mistake("Square", "saves the output, x recovered as sqrt(y)",
            "Square saved its output y = x ** 2, which has lost the sign of x",
            _square("        y = x ** 2\n        ctx.save_for_backward(y)\n        return y",
                    "        y, = ctx.saved_tensors\n        return grad_output * 2 * y.sqrt()"),
            named=True),
    Mistake("Square", "2|x|", "your gradient for x has the wrong sign wherever x < 0",
            _square(SAVE_X, READ_X + "        return grad_output * 2 * x.abs()")),
    Mistake("WeightedSum", "weights kept on the class",
            "WeightedSum's backward used another call's inputs",
            """
class WeightedSum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x1, x2, w1, w2):
        WeightedSum.w = (w1, w2)
        return w1 * x1 + w2 * x2

    @staticmethod
    def backward(ctx, g):
        return g * WeightedSum.w[0], g * WeightedSum.w[1], None, None
""", named=True),
    # None is not zero to torch.autograd.grad, which then raises for x2
    Mistake("WeightedSum", "None for a weight of 0",
            "backward returned None for x2 when its weight is 0",
            _weighted("        g1 = grad_output * ctx.w1 if ctx.needs_input_grad[0] and ctx.w1 else None\n"
                      "        g2 = grad_output * ctx.w2 if ctx.needs_input_grad[1] and ctx.w2 else None\n"
                      "        return g1, g2, None, None")),
    Mistake("Outer", "u and v kept on the class", "Outer.forward sets Outer.uv: a class attribute",
            _outer("        u, v = Outer.uv\n        need_u, need_v = ctx.needs_input_grad\n"
                   "        return (grad_output @ v if need_u else None,\n"
                   "                u @ grad_output if need_v else None)",
                   "        Outer.uv = (u, v)\n        ctx.save_for_backward(u, v)\n"
                   "        return torch.outer(u, v)")),
    Mistake("Outer", "saves u.data and v.data",
            "Outer saved a tensor autograd cannot check for in-place changes",
            _outer(READ_UV + "        need_u, need_v = ctx.needs_input_grad\n"
                   "        return (grad_output @ v if need_u else None,\n"
                   "                u @ grad_output if need_v else None)",
                   "        ctx.save_for_backward(u.data, v.data)\n        return torch.outer(u, v)"),
            named=True),
    Mistake("Outer", "saves clones of u and v", "Outer saved an intermediate of shape (4,)",
            _outer(READ_UV + "        return grad_output @ v, u @ grad_output",
                   "        ctx.save_for_backward(u.clone(), v.clone())\n        return torch.outer(u, v)")),
]
