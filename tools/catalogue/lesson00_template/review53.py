"""Lesson 00, review 53: state kept beside save_for_backward (a copy of x, or of u and v, in a
module dict keyed by id(ctx), read by backward; a flag there that backward pops), entries
joined by torch.stack in a loop (an empty input has nothing to stack), autograd asked through
a grad imported before grading, and a call counter on Outer's class (the lesson now states that
no exercise sets anything on its class). The review's other answers are catalogued already."""

from .. import Mistake, Unusual
from .answers import READ_UV, READ_X, SAVE_X, _outer, _square, _weighted

_BOTH = ("        return (grad_output @ v if ctx.needs_input_grad[0] else None,\n"
         "                u @ grad_output if ctx.needs_input_grad[1] else None)")

UNUSUAL = [
    Unusual("Outer", "saves the views u[:, None] and v[None, :]", _outer(
        "        col, row = ctx.saved_tensors\n"
        "        grad_u = (grad_output * row).sum(1) if ctx.needs_input_grad[0] else None\n"
        "        grad_v = (grad_output * col).sum(0) if ctx.needs_input_grad[1] else None\n"
        "        return grad_u, grad_v",
        forward="        col, row = u[:, None], v[None, :]\n"
                "        ctx.save_for_backward(col, row)\n        return col * row")),
]

MISTAKES = [
    Mistake("Square", "a copy of x in a module dict keyed by id(ctx)",
            "Square's backward reads x from somewhere other than ctx.saved_tensors",
            "_kept = {}\n" + _square(
                "        _kept[id(ctx)] = x.detach().clone()\n        return x ** 2",
                "        return grad_output * 2 * _kept[id(ctx)]")),
    Mistake("Square", "a copy of x popped from a module dict keyed by id(ctx)",
            "Square's backward reads x from somewhere other than ctx.saved_tensors",
            "_kept = {}\n" + _square(
                "        _kept[id(ctx)] = x.detach().clone()\n        return x ** 2",
                "        return grad_output * 2 * _kept.pop(id(ctx))")),
    Mistake("Square", "a flag in a module dict keyed by id(ctx), popped by backward",
            "Square.backward raised KeyError when run a second time on one graph",
            "_pending = {}\n" + _square(
                "        _pending[id(ctx)] = True\n" + SAVE_X,
                "        _pending.pop(id(ctx))\n" + READ_X
                + "        return grad_output * 2 * x")),
    Mistake("Square", "entries multiplied in a Python loop, torch.stack",
            "with x of shape (0,): stack expects a non-empty TensorList. Every non-empty shape "
            "passed", _square(SAVE_X, READ_X
                              + "        parts = [2 * xi * gi for xi, gi in zip(x.reshape(-1), "
                              "grad_output.reshape(-1))]\n"
                              "        return torch.stack(parts).reshape(x.shape)")),
    Mistake("WeightedSum", "entries weighted in a Python loop, torch.stack",
            "x2 of shape (0,), w1=0.5, w2=-2.0: stack expects a non-empty TensorList. Every "
            "non-empty shape passed", _weighted(
                "        flat = grad_output.reshape(-1)\n"
                "        grad_x1 = torch.stack([ctx.w1 * g for g in flat])\n"
                "        grad_x2 = torch.stack([ctx.w2 * g for g in flat])\n"
                "        return (grad_x1.reshape(grad_output.shape), "
                "grad_x2.reshape(grad_output.shape), None, None)")),
    Mistake("Outer", "copies of u and v in a module dict keyed by id(ctx)",
            "Outer's backward reads u and v from somewhere other than ctx.saved_tensors",
            "_inputs = {}\n" + _outer(
                "        u, v = _inputs[id(ctx)]\n" + _BOTH,
                forward="        _inputs[id(ctx)] = (u.detach().clone(), v.detach().clone())\n"
                        "        return torch.outer(u, v)")),
    Mistake("Outer", "autograd through an imported grad, the output recomputed",
            "Outer.backward calls torch.autograd.grad: write the gradient formula by hand",
            "from torch.autograd import grad\n" + _outer(
                READ_UV + "        with torch.enable_grad():\n"
                "            uu = u.detach().requires_grad_(ctx.needs_input_grad[0])\n"
                "            vv = v.detach().requires_grad_(ctx.needs_input_grad[1])\n"
                "            wanted = [t for t in (uu, vv) if t.requires_grad]\n"
                "            got = iter(grad(torch.outer(uu, vv), wanted, grad_output))\n"
                "        return tuple(next(got) if n else None for n in ctx.needs_input_grad)")),
    Mistake("Outer", "autograd through an imported grad, at zeros (outer is linear)",
            "Outer.backward calls torch.autograd.grad: write the gradient formula by hand",
            "from torch.autograd import grad\n" + _outer(
                READ_UV + "        gu = gv = None\n        with torch.enable_grad():\n"
                "            if ctx.needs_input_grad[0]:\n"
                "                z = torch.zeros_like(u, requires_grad=True)\n"
                "                gu, = grad(torch.outer(z, v), z, grad_output)\n"
                "            if ctx.needs_input_grad[1]:\n"
                "                z = torch.zeros_like(v, requires_grad=True)\n"
                "                gv, = grad(torch.outer(u, z), z, grad_output)\n"
                "        return gu, gv")),
    Mistake("Outer", "a call counter on the class",
            "Outer.forward sets Outer.calls: a class attribute is shared by every call",
            _outer(READ_UV + _BOTH, forward="        Outer.calls = getattr(Outer, 'calls', 0) + 1\n"
                   "        ctx.save_for_backward(u, v)\n        return torch.outer(u, v)")),
]
