"""Lesson 00: answers with known verdicts for Square."""

from .. import Mistake, Unusual
from .answers import READ_X, SAVE_X, _square

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
    Mistake("Square", "a Jacobian as a matrix: grad_output @ torch.diag(2 * x)",
            "Square's backward builds a Jacobian as a matrix",
            _square(SAVE_X, READ_X + "        return grad_output @ torch.diag(2 * x)"),
            named=True),
    Mistake("Square", "x kept on the class", "Square.forward sets Square.saved",
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
    # a review's answer (lesson 00, score 7): y and x both saved, the gradient 2 * y / x: right
    # wherever x != 0, nan at x = 0, which no sample draws (the battery tries 0 and -0.0)
    Mistake("Square", "2 * y / x, from the saved output and x",
            "your gradient for x is nan at x = 0",
            _square("        y = x ** 2\n        ctx.save_for_backward(x, y)\n        return y",
                    "        x, y = ctx.saved_tensors\n        return grad_output * 2 * y / x"),
            named=True),
    # a review's answer (lesson 00, score 8): the chain rule's product written into grad_output
    Mistake("Square", "grad_output multiplied in place",
            "Square's backward modified grad_output in place",
            _square(SAVE_X, READ_X + "        grad_output *= 2 * x\n        return grad_output")),
    # a fresh review's answer (s11): "half precision is enough for a square"; its output's
    # zeros at tiny x once looked like a backward threshold
    Mistake("Square", "forward in float16 for float32 x, cast back",
            "every value of Square's output is exactly a float16 number",
            _square("        ctx.save_for_backward(x)\n"
                    "        return (x.half() ** 2).to(x.dtype) if x.dtype == torch.float32 "
                    "else x ** 2", READ_X + "        return grad_output * 2 * x")),
]

# found by reviewers: more correct forms

UNUSUAL += [
    Unusual("Square", "x.detach() saved, grads not materialised, in place on a fresh tensor",
            """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(x.detach())
        return torch.mul(x, x)

    @staticmethod
    def backward(ctx, grad_output):
        if grad_output is None:
            return None
        x, = ctx.saved_tensors
        return grad_output.mul(x).mul_(2)
"""),
    Unusual("Square", "x.mul(x), the gradient by addcmul into zeros",
            """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.mul(x)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return torch.addcmul(torch.zeros_like(x), x, grad_output, value=2.0)
"""),
    Unusual("Square", "a copy of the output saved beside x",
            """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x ** 2
        ctx.save_for_backward(x, y.clone())
        return y

    @staticmethod
    def backward(ctx, grad_output):
        x, _ = ctx.saved_tensors
        return 2 * x * grad_output
"""),
]

# review 76g (issue 69: every numeric clause at both ends of its stated range): "for every finite
# x" graded at both ends of float32's range
MISTAKES += [
    Mistake("Square", "2 * y / x guarded at x = 0: inf where x ** 2 overflows float32",
            "x ** 2 overflows float32 there",
            _square("        y = x ** 2\n        ctx.save_for_backward(x, y)\n        return y",
                    "        x, y = ctx.saved_tensors\n        return grad_output * torch.where("
                    "x == 0, torch.zeros_like(x), 2 * y / x)")),
    Mistake("Square", "the gradient set to 0 where |x| < 1e-6",
            "does backward set a small |x|'s gradient to 0 (a threshold)",
            _square(SAVE_X, READ_X + "        return grad_output * torch.where(x.abs() < 1e-6, "
                    "torch.zeros_like(x), 2 * x)")),
    Mistake("Square", "the gradient set to 0 where |x| < 1e-4",
            "does backward set a small |x|'s gradient to 0 (a threshold)",
            _square(SAVE_X, READ_X + "        return grad_output * torch.where(x.abs() < 1e-4, "
                    "torch.zeros_like(x), 2 * x)")),
]

# review 81 (Square is the first Function, written before any worked example): the tuple of
# saved tensors used as a tensor; the output saved with the sign kept beside it (right wherever
# x ** 2 is finite and normal, wrong at both ends of float32's range); a list for a tuple
MISTAKES += [
    Mistake("Square", "ctx.saved_tensors not unpacked: x = ctx.saved_tensors",
            "ctx.saved_tensors is a tuple, one entry per tensor forward saved",
            _square(SAVE_X, "        x = ctx.saved_tensors\n        return 2 * x * grad_output")),
    Mistake("Square", "ctx.saved_tensors not unpacked, a tensor method called on it",
            "ctx.saved_tensors is a tuple, one entry per tensor forward saved",
            _square(SAVE_X, "        x = ctx.saved_tensors\n        return grad_output * x.mul(2)")),
    Mistake("Square", "the output saved with a mask of negative x, x rebuilt as +-sqrt(y)",
            "x ** 2 overflows float32 there",
            _square("        y = x ** 2\n        ctx.save_for_backward(y, x < 0)\n        return y",
                    "        y, negative = ctx.saved_tensors\n        root = y.sqrt()\n"
                    "        return grad_output * 2 * torch.where(negative, -root, root)")),
    Mistake("Square", "the output saved with x.sign(), x rebuilt as sign * sqrt(y)",
            "x ** 2 overflows float32 there",
            _square("        y = x ** 2\n        ctx.save_for_backward(y, x.sign())\n        return y",
                    "        y, sign = ctx.saved_tensors\n"
                    "        return grad_output * 2 * sign * y.sqrt()")),
    Mistake("Square", "the gradient returned in a list",
            "expected Variable or None (got list)",
            _square(SAVE_X, READ_X + "        return [grad_output * 2 * x]")),
]

UNUSUAL += [
    # the decision Exercise 1 asks for, answered "both": the contract bounds no memory of Square's
    Unusual("Square", "x and the output both saved, only x read",
            _square("        y = x ** 2\n        ctx.save_for_backward(x, y)\n        return y",
                    "        x, _ = ctx.saved_tensors\n        return 2 * x * grad_output")),
    Unusual("Square", "2x saved in forward, a one-tuple returned",
            _square("        ctx.save_for_backward(2 * x)\n        return x * x",
                    "        double, = ctx.saved_tensors\n        return (grad_output * double,)")),
    Unusual("Square", "saved_tensors[0] read, one trailing None",
            _square(SAVE_X, "        return grad_output * ctx.saved_tensors[0] * 2, None")),
]
