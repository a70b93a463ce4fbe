"""Lesson 00: answers with known verdicts for WeightedSum."""

from .. import Mistake, Unusual
from .answers import _weighted

UNUSUAL = [
    Unusual("WeightedSum", "torch.add with alpha",
            _weighted("        need_x1, need_x2 = ctx.needs_input_grad[:2]\n"
                      "        return (grad_output * ctx.w1 if need_x1 else None,\n"
                      "                grad_output * ctx.w2 if need_x2 else None, None, None)",
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
            _weighted("        need_x1, need_x2 = ctx.needs_input_grad[:2]\n"
                      "        return tuple([torch.mul(grad_output, ctx.w1) if need_x1 else None,"
                      " torch.mul(grad_output, ctx.w2) if need_x2 else None, None, None])",
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
                      "        need_x1, need_x2 = ctx.needs_input_grad[:2]\n"
                      "        return (grad_output * w1 if need_x1 else None,\n"
                      "                grad_output * w2 if need_x2 else None, None, None)",
                      "        ctx.save_for_backward(torch.tensor(w1, dtype=x1.dtype),"
                      " torch.tensor(w2, dtype=x1.dtype))\n        return w1 * x1 + w2 * x2")),
    # the arithmetic skipped where the weights leave x1 as it is, a copy returned
    Unusual("WeightedSum", "x1.clone() when w1 = 1 and w2 = 0",
            _weighted("        return (grad_output * ctx.w1 if ctx.needs_input_grad[0] else None,\n"
                      "                grad_output * ctx.w2 if ctx.needs_input_grad[1] else None,"
                      " None, None)",
                      "        ctx.w1, ctx.w2 = w1, w2\n"
                      "        if w1 == 1 and w2 == 0:\n"
                      "            return x1.clone()\n"
                      "        return w1 * x1 + w2 * x2")),
    # w1 factored out (a review's answer): right to rounding over the weights a model meets,
    # w1 = 0 kept apart; w2 / w1 overflows float32 only for a w1 near 1e-39, an extreme the
    # contract does not name
    Unusual("WeightedSum", "w1 factored out, w1 * (x1 + (w2 / w1) * x2), w1 = 0 apart",
            _weighted("        need_x1, need_x2 = ctx.needs_input_grad[:2]\n"
                      "        return (grad_output * ctx.w1 if need_x1 else None,\n"
                      "                grad_output * ctx.w2 if need_x2 else None, None, None)",
                      "        ctx.w1, ctx.w2 = w1, w2\n"
                      "        return w1 * (x1 + (w2 / w1) * x2) if w1 != 0 else w2 * x2")),
]

MISTAKES = [
    Mistake("WeightedSum", "two gradients for four inputs",
            "backward returned 2 gradients for 4 inputs: w1 and w2 get no gradient",
            _weighted("        return grad_output * ctx.w1, grad_output * ctx.w2"),
            named=True, nbgrader=True),
    Mistake("WeightedSum", "a gradient for the float w1",
            "backward returned a tensor of zeros for w1, an input that is not a tensor: a "
            "tensor of zeros is not None; return None for w1",
            _weighted("        return (grad_output * ctx.w1, grad_output * ctx.w2, "
                      "torch.zeros(()), None)"), named=True),
    Mistake("WeightedSum", "swapped weights", "the weights are swapped",
            _weighted("        return grad_output * ctx.w2, grad_output * ctx.w1, None, None")),
    Mistake("WeightedSum", "forgets grad_output", "WeightedSum.backward ignores grad_output: "
            "grad_x1 is the local derivative",
            _weighted("        ones = torch.ones_like(grad_output)\n"
                      "        return ones * ctx.w1, ones * ctx.w2, None, None")),
    Mistake("WeightedSum", "grad_x1 gated on needs_input_grad[1]",
            "it decides whether to compute grad_x1 from another input's entry of "
            "ctx.needs_input_grad: which entry is x1's?",
            _weighted("        grad_x1 = grad_output * ctx.w1 if ctx.needs_input_grad[1] else None\n"
                      "        grad_x2 = grad_output * ctx.w2 if ctx.needs_input_grad[1] else None\n"
                      "        return grad_x1, grad_x2, None, None"), named=True),
    Mistake("WeightedSum", "weights kept on the class", "WeightedSum.forward sets WeightedSum.w",
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
    # one number kept instead of two, "one multiplication fewer" (a review's answer): right
    # wherever w1 != 0, a ZeroDivisionError at w1 = 0, which the contract includes
    Mistake("WeightedSum", "the ratio w2 / w1 kept, which w1 = 0 divides by",
            "WeightedSum raised ZeroDivisionError with w1=0.0, w2=1.5",
            _weighted("        grad_x1 = grad_output * ctx.w1\n"
                      "        return grad_x1, grad_x1 * ctx.ratio, None, None",
                      "        ctx.w1, ctx.ratio = w1, w2 / w1\n"
                      "        return w1 * (x1 + ctx.ratio * x2)")),
    # a mutant (issue 45): a weight compared with a round number no test used to hold
    Mistake("WeightedSum", "grad_output unscaled for a weight of 2", "your gradient for x",
            _weighted("        out = [None, None]\n"
                      "        for i, w in enumerate((ctx.w1, ctx.w2)):\n"
                      "            if ctx.needs_input_grad[i]:\n"
                      "                out[i] = grad_output if w == 2 else grad_output * w\n"
                      "        return out[0], out[1], None, None")),
    # a review's answer (lesson 00, score 8): the weights hung on the input, read back through
    # the saved x1; without saved-tensor hooks the same Python object comes back and it passes
    Mistake("WeightedSum", "weights hung on the input x1",
            "WeightedSum.forward set x1._weights, an attribute on its input x1",
            _weighted("        x1, = ctx.saved_tensors\n        w1, w2 = x1._weights\n"
                      "        return grad_output * w1, grad_output * w2, None, None",
                      "        x1._weights = (w1, w2)\n        ctx.save_for_backward(x1)\n"
                      "        return w1 * x1 + w2 * x2")),
    # a review's answer (lesson 00, score 7): the weights in a module dict under id(x1), read
    # back through a key on ctx; two calls on different inputs have different keys, so only
    # two calls on the same x1 (the per-call check's second pair) show it
    Mistake("WeightedSum", "weights in a global dict, keyed by x1",
            "WeightedSum's backward used another call's w1, w2: with two calls on the same input "
            "tensors",
            "\n_WEIGHTS = {}\n" + _weighted(
                "        w1, w2 = _WEIGHTS[ctx.key]\n"
                "        return grad_output * w1, grad_output * w2, None, None",
                "        ctx.key = id(x1)\n        _WEIGHTS[id(x1)] = (w1, w2)\n"
                "        return w1 * x1 + w2 * x2")),
    # the same in a dict on the class: the dict is the same object after forward, its contents
    # are not (the class state is compared by value, containers copied)
    Mistake("WeightedSum", "weights in a dict on the class, keyed by x1",
            "WeightedSum.forward changes what is in WeightedSum.weights",
            """
class WeightedSum(torch.autograd.Function):
    weights = {}

    @staticmethod
    def forward(ctx, x1, x2, w1, w2):
        ctx.key = id(x1)
        WeightedSum.weights[id(x1)] = (w1, w2)
        return w1 * x1 + w2 * x2

    @staticmethod
    def backward(ctx, grad_output):
        w1, w2 = WeightedSum.weights[ctx.key]
        return grad_output * w1, grad_output * w2, None, None
"""),
]

# found by reviewers: more correct forms (weights as tensors of a dtype that keeps them), a
# tiny weight taken for 0, a fifth value returned by backward

UNUSUAL += [
    Unusual("WeightedSum", "torch.add with alpha=, a generator over needs_input_grad",
            """
class WeightedSum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x1, x2, w1, w2):
        ctx.weights = (w1, w2)
        return torch.add(x1 * w1, x2, alpha=w2)

    @staticmethod
    def backward(ctx, grad_output):
        grads = tuple(grad_output * w if need else None
                      for w, need in zip(ctx.weights, ctx.needs_input_grad))
        return grads + (None, None)
"""),
    Unusual("WeightedSum", "weights as a float64 tensor saved, read back with tolist()",
            """
class WeightedSum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x1, x2, w1, w2):
        ctx.save_for_backward(torch.tensor([w1, w2], dtype=torch.float64))
        return torch.add(x1 * w1, x2, alpha=w2)

    @staticmethod
    def backward(ctx, grad_output):
        w, = ctx.saved_tensors
        w1, w2 = w.tolist()
        need_x1, need_x2 = ctx.needs_input_grad[:2]
        return (grad_output.mul(w1) if need_x1 else None,
                grad_output.mul(w2) if need_x2 else None, None, None)
"""),
    Unusual("WeightedSum", "the term whose weight is 0 skipped in forward",
            """
class WeightedSum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x1, x2, w1, w2):
        ctx.w1, ctx.w2 = w1, w2
        if not w1:
            return w2 * x2
        if not w2:
            return w1 * x1
        return w1 * x1 + w2 * x2

    @staticmethod
    def backward(ctx, grad_output):
        need_x1, need_x2 = ctx.needs_input_grad[:2]
        return (grad_output * ctx.w1 if need_x1 else None,
                grad_output * ctx.w2 if need_x2 else None, None, None)
"""),
    Unusual("WeightedSum", "the weights saved as one tensor of x1's dtype",
            """
class WeightedSum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x1, x2, w1, w2):
        w = torch.tensor([w1, w2], dtype=x1.dtype, device=x1.device)
        ctx.save_for_backward(w)
        return w[0] * x1 + w[1] * x2

    @staticmethod
    def backward(ctx, grad_output):
        w, = ctx.saved_tensors
        need_x1, need_x2 = ctx.needs_input_grad[:2]
        return (grad_output * w[0] if need_x1 else None,
                grad_output * w[1] if need_x2 else None, None, None)
"""),
    Unusual("WeightedSum", "the weights saved as two 0-d float64 tensors, torch.add's alpha=",
            """
class WeightedSum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x1, x2, w1, w2):
        ctx.save_for_backward(torch.tensor(w1, dtype=torch.float64),
                              torch.tensor(w2, dtype=torch.float64))
        return torch.add(x1 * w1, x2, alpha=w2)

    @staticmethod
    def backward(ctx, grad_output):
        w1, w2 = ctx.saved_tensors
        need_x1, need_x2 = ctx.needs_input_grad[:2]
        return (grad_output * w1 if need_x1 else None,
                grad_output * w2 if need_x2 else None, None, None)
"""),
]

MISTAKES += [
    # the natural answer before rule 2 was graded: both gradients, whatever needs_input_grad says
    Mistake("WeightedSum", "ignores needs_input_grad",
            "returned a gradient for x2 with only x1 requiring grad",
            _weighted("        return grad_output * ctx.w1, grad_output * ctx.w2, None, None"),
            named=True),
    Mistake("WeightedSum", "weights below 1e-7 taken for 0",
            "a tiny weight",
            """
class WeightedSum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x1, x2, w1, w2):
        w1 = 0.0 if abs(w1) < 1e-7 else w1
        w2 = 0.0 if abs(w2) < 1e-7 else w2
        ctx.w1, ctx.w2 = w1, w2
        return w1 * x1 + w2 * x2

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.w1, grad_output * ctx.w2, None, None
"""),
    Mistake("WeightedSum", "five values for four inputs, a trailing None",
            "WeightedSum.backward returned 5 values",
            """
class WeightedSum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x1, x2, w1, w2):
        ctx.w1, ctx.w2 = w1, w2
        return w1 * x1 + w2 * x2

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.w1, grad_output * ctx.w2, None, None, None
"""),
    # a fresh review's answer (W11): "no arithmetic when nothing needs weighting"; autograd
    # hands the caller a view of x1, which a write into the output changes (rule 1)
    Mistake("WeightedSum", "x1 itself returned when w1 = 1 and w2 = 0",
            "WeightedSum.forward returned its input x1 itself",
            _weighted("        return (grad_output * ctx.w1 if ctx.needs_input_grad[0] else None,\n"
                      "                grad_output * ctx.w2 if ctx.needs_input_grad[1] else None,"
                      " None, None)",
                      "        ctx.w1, ctx.w2 = w1, w2\n"
                      "        if w1 == 1 and w2 == 0:\n"
                      "            return x1\n"
                      "        return w1 * x1 + w2 * x2")),
    # the same shortcut in the setup_context form, for x2: read where setup_context runs
    Mistake("WeightedSum", "x2 itself returned when w1 = 0 and w2 = 1, setup_context form",
            "WeightedSum.forward returned its input x2 itself",
            """
class WeightedSum(torch.autograd.Function):
    @staticmethod
    def forward(x1, x2, w1, w2):
        if w1 == 0 and w2 == 1:
            return x2
        return w1 * x1 + w2 * x2

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.w1, ctx.w2 = inputs[2:]

    @staticmethod
    def backward(ctx, g):
        n1, n2 = ctx.needs_input_grad[:2]
        return (g * ctx.w1 if n1 else None, g * ctx.w2 if n2 else None, None, None)
"""),
    # a learner who saves as Square did, though no gradient reads x1 or x2 (fresh review 81:
    # with the floats' design shown by shift, what to save is this exercise's decision)
    Mistake("WeightedSum", "x1 and x2 saved though no gradient reads them, floats on ctx",
            "WeightedSum saved x1 and x2 for backward, which neither gradient reads",
            _weighted("        x1, x2 = ctx.saved_tensors\n"
                      "        need_x1, need_x2 = ctx.needs_input_grad[:2]\n"
                      "        return (grad_output * ctx.w1 if need_x1 else None,\n"
                      "                grad_output * ctx.w2 if need_x2 else None, None, None)",
                      "        ctx.save_for_backward(x1, x2)\n        ctx.w1, ctx.w2 = w1, w2\n"
                      "        return w1 * x1 + w2 * x2")),
    # a fresh review's answer (w5b): the same shortcut through a view, sharing x1's memory
    Mistake("WeightedSum", "x1.view_as(x1) returned when w1 = 1 and w2 = 0",
            "WeightedSum.forward returned a view of its input x1",
            _weighted("        return (grad_output * ctx.w1 if ctx.needs_input_grad[0] else None,\n"
                      "                grad_output * ctx.w2 if ctx.needs_input_grad[1] else None,"
                      " None, None)",
                      "        ctx.w1, ctx.w2 = w1, w2\n"
                      "        if w1 == 1 and w2 == 0:\n"
                      "            return x1.view_as(x1)\n"
                      "        return w1 * x1 + w2 * x2")),
]
