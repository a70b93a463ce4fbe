"""Lesson 02: answers with known verdicts for MyLinearFunction, among them products written
without a matmul (which no FLOP count sees) and forwards that save only what the wanted
gradients read."""

from .. import Mistake, Unusual
from .answers import _BROADCAST, _LEADING, _ONE_D, _RETURN, FLAT, GUARDED, _linear

_NO_GUARD = (FLAT + "        grad_bias = g2.sum(0) if ctx.has_bias else None\n"
             "        return grad_output @ weight, g2.T @ x2, grad_bias")
_F_LINEAR = ("        ctx.save_for_backward(x, weight)\n"
             "        ctx.has_bias = bias is not None\n"
             "        return F.linear(x, weight, bias)")

# a backward that reads every shape from grad_output and the tensors it is about to use
_SHAPES_FROM_G = ("        x, weight = ctx.saved_tensors\n        n = ctx.needs_input_grad\n"
                  "        g2 = grad_output.reshape(-1, grad_output.shape[-1])\n"
                  "        grad_x = grad_output @ weight if n[0] else None\n"
                  "        grad_weight = g2.T @ x.reshape(-1, x.shape[-1]) if n[1] else None\n"
                  "        grad_bias = g2.sum(0) if ctx.has_bias and n[2] else None\n" + _RETURN)

UNUSUAL = [
    Unusual("MyLinearFunction", "einsum forward and backward",
            _linear(FLAT + "        grad_x = torch.einsum('...o,oi->...i', grad_output, weight) "
                    "if ctx.needs_input_grad[0] else None\n"
                    "        grad_weight = torch.einsum('mo,mi->oi', g2, x2) "
                    "if ctx.needs_input_grad[1] else None\n"
                    "        grad_bias = torch.einsum('mo->o', g2) if ctx.has_bias and "
                    "ctx.needs_input_grad[2] else None\n"
                    "        return grad_x, grad_weight, grad_bias",
                    "        ctx.save_for_backward(x, weight)\n"
                    "        ctx.has_bias = bias is not None\n"
                    "        y = torch.einsum('...i,oi->...o', x, weight)\n"
                    "        return y if bias is None else y + bias")),
    Unusual("MyLinearFunction", "addmm forward on the flattened input, tensordot grad_weight",
            _linear(FLAT + "        grad_x = (g2 @ weight).reshape(x.shape) if "
                    "ctx.needs_input_grad[0] else None\n"
                    "        grad_weight = torch.tensordot(g2, x2, dims=([0], [0])) if "
                    "ctx.needs_input_grad[1] else None\n"
                    "        grad_bias = g2.sum(0) if ctx.has_bias and ctx.needs_input_grad[2] "
                    "else None\n        return grad_x, grad_weight, grad_bias",
                    "        ctx.save_for_backward(x, weight)\n"
                    "        ctx.has_bias = bias is not None\n"
                    "        x2 = x.reshape(-1, weight.shape[1])\n"
                    "        if bias is None:\n            y = x2 @ weight.T\n"
                    "        else:\n            y = torch.addmm(bias, x2, weight.T)\n"
                    "        return y.reshape(*x.shape[:-1], weight.shape[0])")),
    Unusual("MyLinearFunction", "grad_bias as new_ones(rows) @ g2",
            _linear(FLAT + GUARDED +
                    "        grad_bias = g2.new_ones(g2.shape[0]) @ g2 if ctx.has_bias and "
                    "ctx.needs_input_grad[2] else None\n"
                    "        return grad_x, grad_weight, grad_bias")),
    Unusual("MyLinearFunction", "saves only what the wanted gradients read, unflattened einsum",
            _linear("        x, weight = ctx.saved_tensors\n        n = ctx.needs_input_grad\n"
                    "        gx = grad_output @ weight if n[0] else None\n"
                    "        gw = torch.einsum('...o,...i->oi', grad_output, x) if n[1] else None\n"
                    # grad_output itself for 1-D x: right, as x @ W.T + b's own backward
                    "        gb = torch.einsum('...o->o', grad_output) "
                    "if ctx.has_bias and n[2] else None\n        return gx, gw, gb",
                    "        ctx.save_for_backward(x if ctx.needs_input_grad[1] else None,\n"
                    "                              weight if ctx.needs_input_grad[0] else None)\n"
                    "        ctx.has_bias = bias is not None\n"
                    "        return F.linear(x, weight, bias)")),
    Unusual("MyLinearFunction", "one product [x, 1] for weight and bias together",
            _linear(FLAT + "        n = ctx.needs_input_grad\n"
                    "        grad_x = grad_output @ weight if n[0] else None\n"
                    "        grad_weight = grad_bias = None\n"
                    "        if ctx.has_bias and n[1] and n[2]:\n"
                    "            both = g2.T @ torch.cat([x2, x2.new_ones(x2.shape[0], 1)], 1)\n"
                    "            grad_weight, grad_bias = both[:, :-1], both[:, -1]\n"
                    "        elif n[1]:\n            grad_weight = g2.T @ x2\n"
                    "        elif ctx.has_bias and n[2]:\n            grad_bias = g2.sum(0)\n"
                    "        return grad_x, grad_weight, grad_bias", _F_LINEAR)),
    Unusual("MyLinearFunction", "grad_bias summed over the leading dims, 1-D x handled apart",
            _linear(FLAT + GUARDED + f"        grad_bias = None\n"
                    "        if ctx.has_bias and ctx.needs_input_grad[2]:\n"
                    f"            grad_bias = (grad_output.sum({_LEADING}) if grad_output.dim() > 1"
                    "\n                         else grad_output)\n" + _RETURN)),
    Unusual("MyLinearFunction", "saves conditionally, shapes read from grad_output",
            _linear(_SHAPES_FROM_G,
                    "        ctx.save_for_backward(x if ctx.needs_input_grad[1] else None,\n"
                    "                              weight if ctx.needs_input_grad[0] else None)\n"
                    "        ctx.has_bias = bias is not None\n"
                    "        y = x @ weight.T\n"
                    "        return y + bias if bias is not None else y")),
]

MISTAKES = [
    # the engine sums a (*, out) grad_bias down to bias's (out,): values right, the shape not
    # the lesson's "What the engine sums for you": one (out, in) matrix per batch entry, which
    # the engine sums to weight's shape; a 2-D x gives the right shape, a 3-D one does not
    Mistake("MyLinearFunction", "grad_x = grad_output @ weight.T",
            "grad_x = grad_output @ weight.T is wrong, a transpose too many",
            _linear(FLAT + "        grad_bias = g2.sum(0) if ctx.has_bias else None\n"
                    "        return grad_output @ weight.T, g2.T @ x2, grad_bias"), named=True),
    Mistake("MyLinearFunction", "grad_x as (grad_output @ weight).mT", "a transpose",
            # as tools.submissions has handed it to the end-to-end nbgrader test since lesson 02
            _linear(FLAT + "        grad_x = (grad_output @ weight).mT\n"
                    "        grad_weight = g2.T @ x2\n"
                    "        grad_bias = g2.sum(0) if ctx.has_bias else None\n"
                    "        return grad_x, grad_weight, grad_bias"), nbgrader=True),
    Mistake("MyLinearFunction", "grad_weight = x.T @ grad_output",
            "grad_weight has shape (3, 4) but weight has shape (4, 3): a transpose?",
            _linear(FLAT + "        grad_bias = g2.sum(0) if ctx.has_bias else None\n"
                    "        return grad_output @ weight, x2.T @ g2, grad_bias")),
    Mistake("MyLinearFunction", "ignores needs_input_grad",
            "ctx.needs_input_grad[1] is False for weight. Which of your products is for grad_weight", _linear(_NO_GUARD),
            named=True),
    Mistake("MyLinearFunction", "2-D only, as in PyTorch's docs",
            "but works for 2-D x: your backward's products are written for 2-D x, one row per "
            "example, and this x has no leading dimension. grad_weight sums over every position",
            _linear("        x, weight = ctx.saved_tensors\n"
                    "        grad_x = grad_output.mm(weight) if ctx.needs_input_grad[0] else None\n"
                    "        grad_weight = grad_output.t().mm(x) if ctx.needs_input_grad[1] "
                    "else None\n"
                    "        grad_bias = grad_output.sum(0) if ctx.has_bias and "
                    "ctx.needs_input_grad[2] else None\n"
                    "        return grad_x, grad_weight, grad_bias"), named=True),
    Mistake("MyLinearFunction", "unflattened grad_output.T @ x",
            "MyLinearFunction.backward fails for x of shape (3,) but works for 2-D x: "
            "grad_weight is written for 2-D x, one row per example, and this x has no leading "
            "dimension. grad_weight sums over every position, however many leading dimensions "
            "hold them: which two 2-D matrices, made from grad_output and x, turn that sum into "
            "one matrix product",
            _linear("        x, weight = ctx.saved_tensors\n" + GUARDED.replace("g2.T @ x2",
                    "grad_output.T @ x") + "        grad_bias = grad_output.reshape(-1, "
                    "weight.shape[0]).sum(0) if ctx.has_bias and ctx.needs_input_grad[2] "
                    "else None\n        return grad_x, grad_weight, grad_bias"), named=True),
    Mistake("MyLinearFunction", "bias gradient summed over dim 0 only",
            "grad_bias has shape () but bias has shape (4,)",
            _linear(FLAT + GUARDED + "        grad_bias = grad_output.sum(0) if ctx.has_bias "
                    "and ctx.needs_input_grad[2] else None\n"
                    "        return grad_x, grad_weight, grad_bias"), named=True),
    Mistake("MyLinearFunction", "needs_input_grad[2] read without a bias",
            "ctx.needs_input_grad has one entry per argument actually passed",
            _linear(FLAT + GUARDED + "        grad_bias = g2.sum(0) if ctx.needs_input_grad[2] "
                    "else None\n        return grad_x, grad_weight, grad_bias"), named=True),
    Mistake("MyLinearFunction", "+ bias with no bias=None path",
            "MyLinearFunction.forward fails for bias=None",
            _linear(FLAT + GUARDED + "        grad_bias = g2.sum(0) if ctx.needs_input_grad[2] "
                    "else None\n        return grad_x, grad_weight, grad_bias",
                    "        ctx.save_for_backward(x, weight)\n"
                    "        return x @ weight.T + bias")),
    Mistake("MyLinearFunction", "tensors kept on ctx", "MyLinearFunction stores a tensor as ctx.x",
            _linear("        grad_x = grad_output @ ctx.weight if ctx.needs_input_grad[0] else "
                    "None\n        g2 = grad_output.reshape(-1, ctx.weight.shape[0])\n"
                    "        grad_weight = g2.T @ ctx.x.reshape(-1, ctx.weight.shape[1]) if "
                    "ctx.needs_input_grad[1] else None\n"
                    "        grad_bias = g2.sum(0) if ctx.has_bias and ctx.needs_input_grad[2] "
                    "else None\n        return grad_x, grad_weight, grad_bias",
                    "        ctx.x, ctx.weight = x, weight\n"
                    "        ctx.has_bias = bias is not None\n"
                    "        y = x @ weight.T\n"
                    "        return y + bias if bias is not None else y")),
    Mistake("MyLinearFunction", "grad_x gated on needs_input_grad[1]",
            "it decides whether to compute grad_x from another input's entry of "
            "ctx.needs_input_grad: which entry is x's?",
            _linear(FLAT + GUARDED.replace("ctx.needs_input_grad[0]", "ctx.needs_input_grad[1]")
                    + "        grad_bias = g2.sum(0) if ctx.has_bias and ctx.needs_input_grad[2] "
                    "else None\n        return grad_x, grad_weight, grad_bias"), named=True),
    Mistake("MyLinearFunction", "grad_output.view on a non-contiguous grad_output",
            "MyLinearFunction.backward raised RuntimeError",
            _linear(FLAT.replace("grad_output.reshape", "grad_output.view") + GUARDED
                    + "        grad_bias = g2.sum(0) if ctx.has_bias and ctx.needs_input_grad[2] "
                    "else None\n        return grad_x, grad_weight, grad_bias")),
    Mistake("MyLinearFunction", "every gradient without a matmul, then None where not needed",
            "MyLinearFunction.backward used the values of x (in aten.mul) when only x requires "
            "grad",
            _linear("        x, weight = ctx.saved_tensors\n" + _BROADCAST +
                    "        gb = grad_output.reshape(-1, weight.shape[0]).sum(0)\n"
                    "        return tuple(g if need else None for g, need in "
                    "zip((gx, gw, gb), ctx.needs_input_grad))", _F_LINEAR), named=True),
    Mistake("MyLinearFunction", "grad_x always computed, returned only when needed",
            "ctx.needs_input_grad[0] is False for x. Which of your products is for grad_x",
            _linear(FLAT + "        grad_x = grad_output @ weight\n"
                    "        grad_weight = g2.T @ x2 if ctx.needs_input_grad[1] else None\n"
                    "        grad_bias = g2.sum(0) if ctx.has_bias and ctx.needs_input_grad[2] "
                    "else None\n"
                    "        return grad_x if ctx.needs_input_grad[0] else None, grad_weight, "
                    "grad_bias", _F_LINEAR), named=True),
    Mistake("MyLinearFunction", "grad_bias summed over dims range(ndim - 1): dim=() for 1-D x",
            _ONE_D,
            _linear(FLAT + GUARDED + f"        grad_bias = grad_output.sum({_LEADING}) if "
                    "ctx.has_bias and ctx.needs_input_grad[2] else None\n" + _RETURN),
            named=True),
    Mistake("MyLinearFunction", "saves x only when x needs a gradient (the reads swapped)",
            "with only x requiring grad, your forward did not save weight, and grad_x reads it",
            _linear(_SHAPES_FROM_G, "        ctx.save_for_backward(x if ctx.needs_input_grad[0] else None,\n"
                    "                              weight if ctx.needs_input_grad[1] else None)\n"
                    "        ctx.has_bias = bias is not None\n"
                    "        return F.linear(x, weight, bias)")),
    Mistake("MyLinearFunction", "saves conditionally, backward still reshapes x and reads weight.shape",
            "with only x requiring grad, your forward saved None in place of x, as it may",
            _linear(FLAT + GUARDED + "        grad_bias = g2.sum(0) if ctx.has_bias and "
                    "ctx.needs_input_grad[2] else None\n" + _RETURN,
                    "        ctx.save_for_backward(x if ctx.needs_input_grad[1] else None,\n"
                    "                              weight if ctx.needs_input_grad[0] else None)\n"
                    "        ctx.has_bias = bias is not None\n"
                    "        return F.linear(x, weight, bias)"), named=True),
    Mistake("MyLinearFunction", "saves conditionally, backward reads weight.shape for g2",
            "with only weight requiring grad, your forward saved None in place of weight",
            _linear("        x, weight = ctx.saved_tensors\n"
                    "        g2 = grad_output.reshape(-1, weight.shape[0])\n"
                    + GUARDED.replace("g2.T @ x2", "g2.T @ x.reshape(-1, x.shape[-1])")
                    + "        grad_bias = g2.sum(0) if ctx.has_bias and "
                    "ctx.needs_input_grad[2] else None\n" + _RETURN,
                    "        ctx.save_for_backward(x if ctx.needs_input_grad[1] else None,\n"
                    "                              weight if ctx.needs_input_grad[0] else None)\n"
                    "        ctx.has_bias = bias is not None\n"
                    "        return F.linear(x, weight, bias)")),
    # (G.mT @ x).sum(0) sums one batch dim: right for 3-D x, a (1, out, in) grad_weight for x of
    # leading shape (2, 1, 3), which the engine sums; the lesson's "What the engine sums for
    # you" names it (review of lesson 02, /tmp/review_02_linear/wrong_linear.py L8)
    # an empty batch, x of shape (0, in): reshape cannot infer -1 from zero elements
    Mistake("MyLinearFunction", "x flattened as x.reshape(rows, -1)",
            "MyLinearFunction fails for an empty batch, x of shape (0, 3)",
            _linear(FLAT.replace("x.reshape(-1, weight.shape[1])", "x.reshape(g2.shape[0], -1)")
                    + GUARDED + "        grad_bias = g2.sum(0) if ctx.has_bias and "
                    "ctx.needs_input_grad[2] else None\n" + _RETURN), named=True),
    # a mean times the number of rows is the sum, except over no rows: 0/0
    Mistake("MyLinearFunction", "grad_bias as g2.mean(0) times the number of rows",
            "MyLinearFunction fails for an empty batch",
            _linear(FLAT + GUARDED + "        grad_bias = g2.mean(0) * g2.shape[0] if "
                    "ctx.has_bias and ctx.needs_input_grad[2] else None\n" + _RETURN)),
    # backward asks autograd for what the learner was to derive: the contract's "by hand"
    Mistake("MyLinearFunction", "asks autograd inside backward",
            "MyLinearFunction.backward calls torch.autograd.grad",
            _linear("        x, weight = ctx.saved_tensors\n"
                    "        with torch.enable_grad():\n"
                    "            xx = x.detach().requires_grad_()\n"
                    "            ww = weight.detach().requires_grad_()\n"
                    "            grad_x, grad_weight = torch.autograd.grad(xx @ ww.T, (xx, ww), "
                    "grad_output)\n"
                    "        grad_bias = grad_output.reshape(-1, weight.shape[0]).sum(0) "
                    "if ctx.has_bias else None\n"
                    "        return grad_x, grad_weight, grad_bias")),
]

# correct since issue 67: rule 2 of the Function contract accepts a gradient the engine sums
UNUSUAL.append(Unusual("MyLinearFunction", "grad_bias left unreduced for the engine to sum",
        _linear(FLAT + GUARDED + "        grad_bias = grad_output.clone() if ctx.has_bias "
                    "and ctx.needs_input_grad[2] else None\n"
                    "        return grad_x, grad_weight, grad_bias")))

# correct since issue 67: rule 2 of the Function contract accepts a gradient the engine sums
UNUSUAL.append(Unusual("MyLinearFunction", "grad_weight = grad_output.mT @ x, batched for 3-D x",
        _linear(FLAT + "        grad_x = grad_output @ weight if ctx.needs_input_grad[0] "
                    "else None\n"
                    "        grad_weight = None\n        if ctx.needs_input_grad[1]:\n"
                    "            grad_weight = (grad_output.mT @ x if x.dim() > 1\n"
                    "                           else torch.outer(grad_output, x))\n"
                    "        grad_bias = g2.sum(0) if ctx.has_bias and ctx.needs_input_grad[2] "
                    "else None\n" + _RETURN)))

# correct since issue 67: rule 2 of the Function contract accepts a gradient the engine sums
UNUSUAL.append(Unusual("MyLinearFunction", "grad_weight as (G.mT @ x).sum(0) past 2-D: a leading dim left for 4-D x",
        _linear("        x, weight = ctx.saved_tensors\n"
                    "        grad_x = grad_weight = grad_bias = None\n"
                    "        if ctx.needs_input_grad[0]:\n"
                    "            grad_x = grad_output @ weight\n"
                    "        if ctx.needs_input_grad[1]:\n"
                    "            if x.dim() == 1:\n"
                    "                grad_weight = torch.outer(grad_output, x)\n"
                    "            elif x.dim() == 2:\n"
                    "                grad_weight = grad_output.T @ x\n"
                    "            else:\n"
                    "                grad_weight = (grad_output.mT @ x).sum(0)\n"
                    "        if ctx.has_bias and ctx.needs_input_grad[2]:\n"
                    "            g2 = grad_output.reshape(-1, grad_output.shape[-1])\n"
                    "            grad_bias = g2.sum(0)\n"
                    + _RETURN)))

# review of session 67: passed both checks until rule 3's memory check grew every dimension at
# once (commit 1d0a111c), where the (rows, out, in) product is out times x's bytes
MISTAKES.append(Mistake(
    "MyLinearFunction", "grad_weight as the sum of a (rows, out, in) outer product",
    "(Function contract, rule 3: Backward is yours, in memory linear in the sizes)",
    _linear("        x, weight = ctx.saved_tensors\n"
            "        gx = gw = gb = None\n"
            "        if ctx.needs_input_grad[0]:\n            gx = grad_output @ weight\n"
            "        if ctx.needs_input_grad[1]:\n"
            "            gw = (grad_output.unsqueeze(-1) * x.unsqueeze(-2))"
            ".reshape(-1, *weight.shape).sum(0)\n"
            "        if ctx.has_bias and ctx.needs_input_grad[2]:\n"
            "            gb = grad_output.reshape(-1, grad_output.shape[-1]).sum(0)\n"
            "        return gx, gw, gb")))

# learner trial 82 (as Bilinear's grad_weight was written): grad_weight without grad_output,
# the local derivative alone, x summed over the rows in every row of weight
MISTAKES.append(Mistake(
    "MyLinearFunction", "grad_weight without grad_output: x summed over the rows for every output",
    "MyLinearFunction.backward ignores grad_output: grad_weight is the local derivative",
    _linear(FLAT + "        grad_x = grad_output @ weight if ctx.needs_input_grad[0] else None\n"
            "        grad_weight = x2.sum(0).expand_as(weight).clone() if "
            "ctx.needs_input_grad[1] else None\n"
            "        grad_bias = g2.sum(0) if ctx.has_bias and ctx.needs_input_grad[2] else None\n"
            + _RETURN)))
