"""Lesson 00, review 54: backwards that build the Jacobian as a matrix (Square's flattened
torch.diag, WeightedSum's w * torch.eye, Outer's two Jacobians summed over the outputs), which
pass every value check and are named by backward's peak memory; WeightedSum's grad_output
scaled in place (its contract now states the rule); and the review's other answers not yet
catalogued: a float32 copy of x saved, float32 arithmetic in backward, the saved x doubled in
place, the last weights in a module dict, float64 copies of u and v, a call counter in a list
on the class; None saved for an input nobody needs with einsum, and x1 returned itself."""

from .. import Mistake, Unusual
from .answers import READ_UV, READ_X, SAVE_X, _outer, _square, _weighted

_BOTH = ("        return (grad_output @ v if ctx.needs_input_grad[0] else None,\n"
         "                u @ grad_output if ctx.needs_input_grad[1] else None)")

UNUSUAL = [
    Unusual("Outer", "None saved for an input no gradient reads, einsum throughout", _outer(
        "        v, u = ctx.saved_tensors\n"
        "        need_u, need_v = ctx.needs_input_grad\n"
        "        return (torch.einsum('ij,j->i', grad_output, v) if need_u else None,\n"
        "                torch.einsum('ij,i->j', grad_output, u) if need_v else None)",
        forward="        need_u, need_v = ctx.needs_input_grad\n"
                "        ctx.save_for_backward(v if need_u else None, u if need_v else None)\n"
                "        return torch.einsum('i,j->ij', u, v)")),
    Unusual("WeightedSum", "x1 itself returned when w1 = 1 and w2 = 0", _weighted(
        "        return grad_output * ctx.w1, grad_output * ctx.w2, None, None",
        forward="        ctx.w1, ctx.w2 = w1, w2\n"
                "        if w1 == 1 and w2 == 0:\n            return x1\n"
                "        return w1 * x1 + w2 * x2")),
]

MISTAKES = [
    Mistake("Square", "the Jacobian of the flattened x: grad_output @ torch.diag(2 * x)",
            "Square's backward builds a Jacobian as a matrix", _square(
                SAVE_X, READ_X + "        jacobian = torch.diag(2 * x.reshape(-1))\n"
                "        return (grad_output.reshape(-1) @ jacobian).reshape(x.shape)")),
    Mistake("Square", "a float32 copy of x saved, half the bytes",
            "Square saved x as a float32 copy", _square(
                "        ctx.save_for_backward(x.float())\n        return x ** 2",
                READ_X + "        return grad_output * 2 * x")),
    Mistake("Square", "backward's arithmetic in float32",
            "every value of grad_x is exactly a float32 number", _square(
                SAVE_X, READ_X + "        return 2 * x.float() * grad_output.float()")),
    Mistake("Square", "the saved x doubled in place",
            "Square.backward modified its input x in place", _square(
                SAVE_X, READ_X + "        return grad_output * x.mul_(2)")),
    Mistake("WeightedSum", "each Jacobian built as w * torch.eye",
            "WeightedSum's backward builds a Jacobian as a matrix", _weighted(
                "        g = grad_output.reshape(-1)\n"
                "        eye = torch.eye(g.numel(), dtype=g.dtype, device=g.device)\n"
                "        grad_x1 = (g @ (ctx.w1 * eye)).reshape(grad_output.shape)\n"
                "        grad_x2 = (g @ (ctx.w2 * eye)).reshape(grad_output.shape)\n"
                "        return grad_x1, grad_x2, None, None")),
    Mistake("WeightedSum", "grad_output scaled in place for grad_x2",
            "WeightedSum's backward modified grad_output in place", _weighted(
                "        grad_x1 = grad_output * ctx.w1\n"
                "        grad_x2 = grad_output\n        grad_x2 *= ctx.w2\n"
                "        return grad_x1, grad_x2, None, None")),
    Mistake("WeightedSum", "the last call's weights in a module dict",
            "WeightedSum's backward used another call's weights",
            "_last = {}\n" + _weighted(
                "        w1, w2 = _last['w']\n"
                "        return grad_output * w1, grad_output * w2, None, None",
                forward="        _last['w'] = (w1, w2)\n        return w1 * x1 + w2 * x2")),
    Mistake("Outer", "both Jacobians built and summed over the outputs",
            "Outer's backward builds a Jacobian as a matrix", _outer(
                READ_UV + "        m, n = u.shape[0], v.shape[0]\n"
                "        grad_u = grad_v = None\n"
                "        if ctx.needs_input_grad[0]:  # J_u[i, j, k] = v[j] if i == k\n"
                "            eye = torch.eye(m, dtype=u.dtype, device=u.device)\n"
                "            jacobian = eye[:, None, :] * v[None, :, None]\n"
                "            grad_u = (grad_output[:, :, None] * jacobian).sum((0, 1))\n"
                "        if ctx.needs_input_grad[1]:  # J_v[i, j, k] = u[i] if j == k\n"
                "            eye = torch.eye(n, dtype=u.dtype, device=u.device)\n"
                "            jacobian = u[:, None, None] * eye[None, :, :]\n"
                "            grad_v = (grad_output[:, :, None] * jacobian).sum((0, 1))\n"
                "        return grad_u, grad_v")),
    Mistake("Outer", "float64 copies of u and v saved",
            "Outer saved u as a float64 copy", _outer(
                "        u, v = ctx.saved_tensors\n        g = grad_output.double()\n" + _BOTH.replace(
                    "grad_output", "g"),
                forward="        u64, v64 = u.double(), v.double()\n"
                        "        ctx.save_for_backward(u64, v64)\n"
                        "        return (u64[:, None] * v64[None, :]).to(u.dtype)")),
    Mistake("Outer", "a call counter in a list on the class",
            "Outer.forward changes what is in Outer.calls", """
class Outer(torch.autograd.Function):
    calls = [0]

    @staticmethod
    def forward(ctx, u, v):
        Outer.calls[0] += 1
        ctx.save_for_backward(u, v)
        return torch.outer(u, v)

    @staticmethod
    def backward(ctx, grad_output):
""" + READ_UV + _BOTH + "\n"),
]
