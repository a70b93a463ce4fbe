"""Lesson 02's transfer exercise Bilinear, answered unusually and wrongly."""

from .. import Mistake, Unusual, edit


def _bilinear(backward: str, forward: str | None = None) -> str:
    forward = forward or ("        ctx.save_for_backward(x1, x2, weight)\n"
                          "        ctx.has_bias = bias is not None\n"
                          "        y = torch.einsum('...i,oij,...j->...o', x1, weight, x2)\n"
                          "        return y + bias if bias is not None else y")
    return f"""
class Bilinear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x1, x2, weight, bias=None):
{forward}

    @staticmethod
    def backward(ctx, grad_output):
{backward}
"""


READ_BILINEAR = ("        x1, x2, weight = ctx.saved_tensors\n"
                 "        need = ctx.needs_input_grad\n")


def _bilinear_with(grad_x1: str, grad_x2: str, grad_weight: str,
                   grad_bias: str = "grad_output.reshape(-1, weight.shape[0]).sum(0)") -> str:
    return _bilinear(READ_BILINEAR + f"        grad_x1 = {grad_x1} if need[0] else None\n"
                     f"        grad_x2 = {grad_x2} if need[1] else None\n"
                     f"        grad_weight = {grad_weight} if need[2] else None\n"
                     f"        grad_bias = {grad_bias} if ctx.has_bias and need[3] else None\n"
                     "        return grad_x1, grad_x2, grad_weight, grad_bias")


GX1 = "torch.einsum('...o,oij,...j->...i', grad_output, weight, x2)"
GX2 = "torch.einsum('...o,oij,...i->...j', grad_output, weight, x1)"
GW = "torch.einsum('...o,...i,...j->oij', grad_output, x1, x2)"

# the shared product G W of both input gradients, on the weight flattened to (out, n1 * n2)
FLAT_WEIGHT = ("        x1, x2, weight = ctx.saved_tensors\n"
               "        out, n1, n2 = weight.shape\n"
               "        a, b = x1.reshape(-1, n1), x2.reshape(-1, n2)\n"
               "        g = grad_output.reshape(-1, out)\n"
               "        need = ctx.needs_input_grad\n"
               "        gw = (g @ weight.reshape(out, n1 * n2)).reshape(-1, n1, n2)\n")
FLAT_WEIGHT_RETURN = (
    "        grad_x1 = (gw @ b.unsqueeze(-1)).reshape(x1.shape) if need[0] else None\n"
    "        grad_x2 = (a.unsqueeze(1) @ gw).reshape(x2.shape) if need[1] else None\n"
    "        grad_weight = (g.T @ (a.unsqueeze(2) * b.unsqueeze(1)).reshape(-1, n1 * n2))"
    ".reshape(out, n1, n2) if need[2] else None\n"
    "        grad_bias = g.sum(0) if ctx.has_bias and need[3] else None\n"
    "        return grad_x1, grad_x2, grad_weight, grad_bias")

UNUSUAL = [
    # PyTorch 0.3's torch/nn/_functions/linear.py, class Bilinear: a loop over the output
    # features, one (n1, n2) matrix at a time; here with leading dimensions flattened and each
    # gradient behind its own needs_input_grad entry
    Unusual("Bilinear", "a loop over output features, as PyTorch 0.3's Bilinear",
            _bilinear("        x1, x2, weight = ctx.saved_tensors\n"
                      "        out, n1, n2 = weight.shape\n"
                      "        a, b = x1.reshape(-1, n1), x2.reshape(-1, n2)\n"
                      "        g = grad_output.reshape(-1, out)\n"
                      "        grad_x1 = grad_x2 = grad_weight = grad_bias = None\n"
                      "        if ctx.needs_input_grad[0]:\n"
                      "            grad_x1 = sum(g[:, k:k + 1] * (b @ weight[k].t()) "
                      "for k in range(out)).reshape(x1.shape)\n"
                      "        if ctx.needs_input_grad[1]:\n"
                      "            grad_x2 = sum(g[:, k:k + 1] * (a @ weight[k]) "
                      "for k in range(out)).reshape(x2.shape)\n"
                      "        if ctx.needs_input_grad[2]:\n"
                      "            grad_weight = torch.stack([(a * g[:, k:k + 1]).t() @ b "
                      "for k in range(out)])\n"
                      "        if ctx.has_bias and ctx.needs_input_grad[3]:\n"
                      "            grad_bias = g.sum(0)\n"
                      "        return grad_x1, grad_x2, grad_weight, grad_bias",
                      "        ctx.save_for_backward(x1, x2, weight)\n"
                      "        ctx.has_bias = bias is not None\n"
                      "        a = x1.reshape(-1, weight.shape[1])\n"
                      "        b = x2.reshape(-1, weight.shape[2])\n"
                      "        y = torch.stack([((a @ w) * b).sum(1) for w in weight], dim=1)\n"
                      "        y = y.reshape(*x1.shape[:-1], weight.shape[0])\n"
                      "        return y + bias if bias is not None else y")),
    Unusual("Bilinear", "matrix products on the flattened weight",
            _bilinear(FLAT_WEIGHT.replace("        gw = (", "        gw = None if not (need[0] or "
                                          "need[1]) else (")
                      + FLAT_WEIGHT_RETURN)),
    Unusual("Bilinear", "two-step einsums through an intermediate, only two values without a bias",
            _bilinear("        x1, x2, weight = ctx.saved_tensors\n"
                      "        need = ctx.needs_input_grad\n"
                      "        grads = [None] * len(need)\n"
                      "        if need[0]:\n"
                      "            grads[0] = torch.einsum('...oj,...j->...i'.replace('...oj', "
                      "'...o,oij'), grad_output, weight, x2)\n"
                      "        if need[1]:\n"
                      "            gx = torch.einsum('...o,oij->...ij', grad_output, weight)\n"
                      "            grads[1] = torch.einsum('...ij,...i->...j', gx, x1)\n"
                      "        if need[2]:\n"
                      "            outer = torch.einsum('...i,...j->...ij', x1, x2)\n"
                      "            grads[2] = torch.einsum('...o,...ij->oij', grad_output, outer)\n"
                      "        if len(need) == 4 and need[3]:\n"
                      "            grads[3] = grad_output.reshape(-1, weight.shape[0]).sum(0)\n"
                      "        return tuple(grads)",
                      "        ctx.save_for_backward(x1, x2, weight)\n"
                      "        return F.bilinear(x1, x2, weight, bias)")),
]

MISTAKES = [
    # a mutant (issue 45): the engine sums a (1, out) grad_bias down to bias's (out,)
    Mistake("Bilinear", "ignores needs_input_grad",
            "Bilinear.backward returned a gradient for x2 although only x1 requires grad",
            _bilinear("        x1, x2, weight = ctx.saved_tensors\n"
                      "        grad_bias = grad_output.reshape(-1, weight.shape[0]).sum(0) "
                      "if ctx.has_bias else None\n"
                      f"        return {GX1}, {GX2}, {GW}, grad_bias"), nbgrader=True),
    Mistake("Bilinear", "weight indices read as (out, n2, n1)",
            "your grad_x1 reads the weight as weight[o, j, i] in place of weight[o, i, j]",
            _bilinear_with(GX1.replace("oij", "oji"), GX2, GW)),
    # right for n1 != n2, and for n1 == n2 the weight's last two indices swapped in grad_x2
    # (as the review of lesson 02 wrote it, B2: a slip only a square weight[o] lets run)
    Mistake("Bilinear", "grad_x2 reads weight[o, j, i] where the shapes let it (n1 == n2)",
            "your grad_x2 is right when n1 != n2 and wrong for n1 == n2",
            _bilinear_with(GX1, GX2.replace("weight,", "weight.mT if weight.shape[1] == "
                                            "weight.shape[2] else weight,"), GW)),
    # an empty batch: reshape cannot infer -1 from zero elements
    Mistake("Bilinear", "grad_bias over numel // out rows",
            "Bilinear fails for an empty batch, x1 of shape (0, 3) and x2 of shape (0, 2)",
            _bilinear_with(GX1, GX2, GW, "grad_output.reshape(grad_output.numel() // "
                           "weight.shape[0], -1).sum(0)")),
    Mistake("Bilinear", "grad_x2 sums over the wrong input",
            "your gradient for x2 is wrong",
            _bilinear_with(GX1, GX2.replace("x1)", "x1.flip(-1))"), GW)),
    Mistake("Bilinear", "bias gradient summed over dim 0 only",
            "grad_bias has shape () but bias has shape (4,)",
            _bilinear_with(GX1, GX2, GW, "grad_output.sum(0)")),
    Mistake("Bilinear", "grad_output.view on a non-contiguous grad_output",
            "Bilinear.backward raised RuntimeError",
            _bilinear_with(GX1, GX2, GW, "grad_output.view(-1, weight.shape[0]).sum(0)")),
    Mistake("Bilinear", "grad_x1 gated on needs_input_grad[1]",
            "it decides whether to compute grad_x1 from another input's entry",
            _bilinear(READ_BILINEAR + f"        grad_x1 = {GX1} if need[1] else None\n"
                      f"        grad_x2 = {GX2} if need[1] else None\n"
                      f"        grad_weight = {GW} if need[2] else None\n"
                      "        grad_bias = grad_output.reshape(-1, weight.shape[0]).sum(0) "
                      "if ctx.has_bias and need[3] else None\n"
                      "        return grad_x1, grad_x2, grad_weight, grad_bias")),
]

# Answers from the 2026-11 review: products written as broadcast matmuls, only the needed
# tensors saved, and backwards that compute work nobody asked for yet return None for it.
UNUSUAL += [
    Unusual("Bilinear", "saves only what the wanted gradients read, rows flattened",
            _bilinear("        x1, x2, weight = ctx.saved_tensors\n"
                      "        need = ctx.needs_input_grad\n"
                      "        (n1, n2), out = ctx.features, grad_output.shape[-1]\n"
                      "        g = grad_output.reshape(-1, out)\n"
                      "        grad_x1 = grad_x2 = grad_weight = grad_bias = None\n"
                      "        if need[0]:\n            grad_x1 = torch.einsum('mo,oij,mj->mi', g, "
                      "weight, x2.reshape(-1, n2)).reshape(*grad_output.shape[:-1], n1)\n"
                      "        if need[1]:\n            grad_x2 = torch.einsum('mo,oij,mi->mj', g, "
                      "weight, x1.reshape(-1, n1)).reshape(*grad_output.shape[:-1], n2)\n"
                      "        if need[2]:\n            grad_weight = torch.einsum('mo,mi,mj->oij', "
                      "g, x1.reshape(-1, n1), x2.reshape(-1, n2))\n"
                      "        if ctx.has_bias and need[3]:\n            grad_bias = g.sum(0)\n"
                      "        return grad_x1, grad_x2, grad_weight, grad_bias",
                      "        n = ctx.needs_input_grad\n"
                      "        ctx.save_for_backward(x1 if n[1] or n[2] else None,\n"
                      "                              x2 if n[0] or n[2] else None,\n"
                      "                              weight if n[0] or n[1] else None)\n"
                      "        ctx.features, ctx.has_bias = (x1.shape[-1], x2.shape[-1]), bias is not None\n"
                      "        return F.bilinear(x1, x2, weight, bias)")),
]

MISTAKES += [
    # a mutant (issue 45): the feature sizes in a module global, which two calls of the same
    # sizes share harmlessly
    Mistake("Bilinear", "feature sizes kept in a module global",
            "Bilinear.backward raised RuntimeError",
            "\n_features = None\n" + edit(
                next(answer.code for answer in UNUSUAL if answer.name ==
                     "saves only what the wanted gradients read, rows flattened"),
                ("(n1, n2), out = ctx.features,", "(n1, n2), out = _features,"),
                ("        ctx.features, ctx.has_bias = ",
                 "        global _features\n        _features, ctx.has_bias = "))),
    Mistake("Bilinear", "all four gradients computed, None returned where not needed",
            "Bilinear.backward used the values of x1 (in aten.bmm) when only x1 requires grad",
            _bilinear("        x1, x2, weight = ctx.saved_tensors\n"
                      f"        grads = ({GX1}, {GX2}, {GW},\n"
                      "                 grad_output.reshape(-1, weight.shape[0]).sum(0))\n"
                      "        return tuple(g if need else None for g, need in "
                      "zip(grads, ctx.needs_input_grad))")),
    Mistake("Bilinear", "the shared product G W computed when no input gradient is wanted",
            "Bilinear.backward used the values of weight (in aten.mm) when only weight requires "
            "grad", _bilinear(FLAT_WEIGHT + FLAT_WEIGHT_RETURN)),
    Mistake("Bilinear", "grad_weight summed over the output feature too",
            "your gradient for weight is wrong",
            _bilinear_with(GX1, GX2, "torch.einsum('...o,...i,...j->ij', grad_output, x1, x2)"
                           ".expand_as(weight)")),
]

# Backwards that ask autograd (2026-11 fresh reviews): deriving the three gradients is the
# exercise, so any autograd inside backward is rejected, as in MyLinearFunction, even one that
# asks for the needed inputs only
ASK_AUTOGRAD = ("        x1, x2, weight = ctx.saved_tensors\n"
                "        need = ctx.needs_input_grad\n"
                "        grads = [None, None, None]\n"
                "        if any(need[:3]):\n"
                "{ask}"
                "        grad_bias = grad_output.reshape(-1, weight.shape[0]).sum(0) "
                "if ctx.has_bias and need[3] else None\n"
                "        return (*grads, grad_bias)")
BY_HAND = "write the gradient formula by hand instead of asking autograd"
MISTAKES += [
    Mistake("Bilinear", "asks torch.autograd.grad for the needed inputs only",
            f"Bilinear.backward calls torch.autograd.grad: {BY_HAND}",
            _bilinear(ASK_AUTOGRAD.format(ask=(
                "            ins = [t.detach().requires_grad_(bool(n)) "
                "for t, n in zip((x1, x2, weight), need)]\n"
                "            with torch.enable_grad():\n"
                "                wanted = [t for t in ins if t.requires_grad]\n"
                "                found = iter(torch.autograd.grad(F.bilinear(*ins), wanted, "
                "grad_output))\n"
                "            grads = [next(found) if t.requires_grad else None for t in ins]\n")))),
    Mistake("Bilinear", "torch.func.vjp of the whole forward, unneeded gradients dropped",
            f"Bilinear.backward calls torch.autograd.grad through torch.func: {BY_HAND}",
            _bilinear(ASK_AUTOGRAD.format(ask=(
                "            _, vjp = torch.func.vjp(F.bilinear, x1, x2, weight)\n"
                "            grads = [g if n else None for g, n in zip(vjp(grad_output), need)]\n"
                )))),
    Mistake("Bilinear", "torch.autograd.grad asked for every input",
            f"Bilinear.backward calls torch.autograd.grad: {BY_HAND}",
            _bilinear(ASK_AUTOGRAD.format(ask=(
                "            ins = [t.detach().requires_grad_() for t in (x1, x2, weight)]\n"
                "            with torch.enable_grad():\n"
                "                found = torch.autograd.grad(F.bilinear(*ins), ins, grad_output)\n"
                "            grads = [g if n else None for g, n in zip(found, need)]\n")))),
    Mistake("Bilinear", "the forward rerun and .backward() called on it",
            f"Bilinear.backward calls Tensor.backward: {BY_HAND}",
            _bilinear(ASK_AUTOGRAD.format(ask=(
                "            ins = [t.detach().requires_grad_(bool(n)) "
                "for t, n in zip((x1, x2, weight), need)]\n"
                "            with torch.enable_grad():\n"
                "                F.bilinear(*ins).backward(grad_output)\n"
                "            grads = [t.grad for t in ins]\n")))),
]

# Written by hand with F.bilinear itself (2026-11 round 6): grad_x1 and grad_x2 are bilinear
# forms too, of grad_output and the other input, with the weight's indices permuted
UNUSUAL += [
    Unusual("Bilinear", "F.bilinear with a permuted weight for both input gradients",
            _bilinear_with("F.bilinear(grad_output, x2, weight.permute(1, 0, 2))",
                           "F.bilinear(x1, grad_output, weight.permute(2, 1, 0))", GW)),
]

# Saving selectively, as exercises 1 and 2 teach, then reading a None anyway (2026-11 fresh
# review): a probe with each input alone requiring grad names what forward left out
SELECTIVE = ("        n = ctx.needs_input_grad\n"
             "        ctx.save_for_backward(x1 if n[1] or n[2] else None,\n"
             "                              x2 if n[0] or n[2] else None,\n"
             "                              weight if n[0] or n[1] else None)\n"
             "        ctx.has_bias = bias is not None\n"
             "        return F.bilinear(x1, x2, weight, bias)")
MISTAKES += [
    Mistake("Bilinear", "saves selectively, then reads x1.shape when only x1 needs a gradient",
            "with only x1 requiring grad, your forward saved None in place of x1, as it may "
            "(grad_x1 does not read it), but backward still uses it",
            _bilinear(READ_BILINEAR + "        lead = x1.shape[:-1]\n"
                      + f"        grad_x1 = {GX1} if need[0] else None\n"
                      f"        grad_x2 = {GX2} if need[1] else None\n"
                      f"        grad_weight = {GW} if need[2] else None\n"
                      "        grad_bias = grad_output.reshape(-1, grad_output.shape[-1]).sum(0) "
                      "if ctx.has_bias and need[3] else None\n"
                      "        return grad_x1, grad_x2, grad_weight, grad_bias", SELECTIVE)),
    Mistake("Bilinear", "saves selectively, then sizes grad_bias from weight.shape",
            "with only bias requiring grad, your forward saved None in place of x1, x2 and "
            "weight, as it may (grad_bias does not read them), but backward still uses them",
            _bilinear(READ_BILINEAR + f"        grad_x1 = {GX1} if need[0] else None\n"
                      f"        grad_x2 = {GX2} if need[1] else None\n"
                      f"        grad_weight = {GW} if need[2] else None\n"
                      "        grad_bias = grad_output.reshape(-1, weight.shape[0]).sum(0) "
                      "if ctx.has_bias and need[3] else None\n"
                      "        return grad_x1, grad_x2, grad_weight, grad_bias", SELECTIVE)),
    Mistake("Bilinear", "saves x2 only when weight needs a gradient",
            "with only x1 requiring grad, your forward did not save x2, and grad_x1 reads it",
            _bilinear_with(GX1, GX2, GW, "grad_output.reshape(-1, grad_output.shape[-1]).sum(0)")
            .replace("        ctx.save_for_backward(x1, x2, weight)\n",
                     "        n = ctx.needs_input_grad\n"
                     "        ctx.save_for_backward(x1 if n[1] or n[2] else None,\n"
                     "                              x2 if n[2] else None,\n"
                     "                              weight if n[0] or n[1] else None)\n")),
]

# Called without a bias, ctx.needs_input_grad has three entries: entry 3 read through a local is
# named (a probe finds the local bound to ctx.needs_input_grad on the raising line); another
# IndexError in the same place is not blamed on it
MISTAKES += [
    Mistake("Bilinear", "needs_input_grad[3] read through a local without a bias",
            "Bilinear.backward read ctx.needs_input_grad[3] when called without a bias",
            _bilinear_with(GX1, GX2, GW).replace("if ctx.has_bias and need[3]", "if need[3]")),
    Mistake("Bilinear", "a saved tensor read past the end without a bias, another IndexError",
            "Bilinear.backward raised IndexError",
            _bilinear_with(GX1, GX2, GW).replace(
                "        need = ctx.needs_input_grad\n",
                "        need = ctx.needs_input_grad\n"
                "        bias = None if ctx.has_bias else ctx.saved_tensors[3]\n")),
]

# correct since issue 67: rule 2 of the Function contract accepts a gradient the engine sums
UNUSUAL.append(Unusual("Bilinear", "grad_bias kept as (1, out) by keepdim=True",
        _bilinear("        x1, x2, weight = ctx.saved_tensors\n"
                      "        need, g = ctx.needs_input_grad, grad_output\n"
                      "        grad_x1 = torch.einsum('...o,oij,...j->...i', g, weight, x2) "
                      "if need[0] else None\n"
                      "        grad_x2 = torch.einsum('...o,oij,...i->...j', g, weight, x1) "
                      "if need[1] else None\n"
                      "        grad_weight = torch.einsum('...o,...i,...j->oij', g, x1, x2) "
                      "if need[2] else None\n"
                      "        grad_bias = None\n"
                      "        if ctx.has_bias and need[3]:\n"
                      "            grad_bias = g.reshape(-1, g.shape[-1]).sum(0, keepdim=True)\n"
                      "        return grad_x1, grad_x2, grad_weight, grad_bias")))

# review of session 67: passed both checks once Bilinear's domain opted out of rule 3's generic
# memory check; the contract's memory bullet (one intermediate of positions x two widths) now
# refuses the (positions, out, n1, n2) product
MISTAKES.append(Mistake(
    "Bilinear", "grad_weight as the sum of a (positions, out, n1, n2) outer product",
    "(Function contract, rule 3: Backward is yours, in memory linear in the sizes)",
    _bilinear_with(GX1, GX2, "(grad_output[..., :, None, None] * x1[..., None, :, None] * "
                   "x2[..., None, None, :]).reshape(-1, *weight.shape).sum(0)")))

# unusual until the contract's memory bullet: grad_x1 and grad_x2 sum a (positions, out, n1, n2)
# product of grad_output and the weight over out, an entry for every p, o, i and j
MISTAKES.append(Mistake(
    "Bilinear", "one broadcast product x1 @ W @ x2 per output feature",
    "an entry for every position, output, i and j (Function contract, rule 3",
    _bilinear_with("((grad_output[..., :, None, None] * weight).sum(-3) "
                   "@ x2[..., :, None])[..., 0]",
                   "(x1[..., None, :] @ (grad_output[..., :, None, None] * weight)"
                   ".sum(-3))[..., 0, :]", GW)
    .replace("        y = torch.einsum('...i,oij,...j->...o', x1, weight, x2)",
             "        y = (x1[..., None, None, :] @ weight @ x2[..., None, :, None])"
             "[..., 0, 0]")))

# issue 68: grad_weight left unsummed over the positions, (*leading, out, n1, n2), which the
# engine sums down to weight's shape (rule 2 accepts the shape); named by the returned shape
# first, with the memory it cost, where the first line named only the bytes held
MISTAKES.append(Mistake(
    "Bilinear", "grad_weight not summed over the positions",
    "Bilinear.backward returned grad_weight of shape (4, 32, 16, 24, 20) for weight of shape "
    "(16, 24, 20)",
    _bilinear_with(GX1, GX2, "torch.einsum('...o,...i,...j->...oij', grad_output, x1, x2)")))

# learner trial 82: einsums with a letter for the position, "po,oij,pj->pi": right for 2-D
# inputs alone (the RuntimeError was quoted, where MyLinearFunction's 2-D products are named)
MISTAKES.append(Mistake(
    "Bilinear", "einsums with a letter for the position: 2-D inputs alone",
    "einsums whose subscripts name one letter per dimension of 2-D inputs",
    _bilinear_with("torch.einsum('po,oij,pj->pi', grad_output, weight, x2)",
                   "torch.einsum('po,pi,oij->pj', grad_output, x1, weight)",
                   "torch.einsum('po,pi,pj->oij', grad_output, x1, x2)",
                   "grad_output.sum(0)")))

# learner trial 82: grad_weight without grad_output, the same (n1, n2) sum for every output
MISTAKES.append(Mistake(
    "Bilinear", "grad_weight without the grad_output factor",
    "Bilinear.backward ignores grad_output: grad_weight is the local derivative",
    _bilinear_with(GX1, GX2, "torch.einsum('...i,...j->ij', x1, x2).expand_as(weight).clone()")))
