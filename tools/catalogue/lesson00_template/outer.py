"""Lesson 00: answers with known verdicts for Outer, among them work done for a gradient nobody
needs (returning None for it is not enough, nor is asking autograd for both) and state shared
between calls (issue 37)."""

from .. import Mistake, Unusual
from .answers import READ_UV, _outer

UNUSUAL = [
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
    # review 80: forward saves only what the wanted gradients read; einsum both ways
    Unusual("Outer", "saves v only if u needs a gradient and u only if v does, einsum", _outer(
        "        need_u, need_v = ctx.needs_input_grad\n"
        "        v_kept, u_kept = ctx.saved_tensors\n"
        "        return (torch.einsum('ij,j->i', grad_output, v_kept) if need_u else None,\n"
        "                torch.einsum('ij,i->j', grad_output, u_kept) if need_v else None)",
        "        ctx.save_for_backward(v if ctx.needs_input_grad[0] else None,\n"
        "                              u if ctx.needs_input_grad[1] else None)\n"
        "        return torch.einsum('i,j->ij', u, v)")),
    Unusual("Outer", "saves u.detach() and v.detach(), which autograd still tracks", _outer(
        READ_UV + "        need_u, need_v = ctx.needs_input_grad\n"
        "        return (grad_output @ v if need_u else None, u @ grad_output if need_v else None)",
        "        ctx.save_for_backward(u.detach(), v.detach())\n        return torch.outer(u, v)")),
]

MISTAKES = [
    Mistake("Outer", "ignores needs_input_grad",
            "Outer.backward returned a gradient for v although only u requires grad",
            _outer(READ_UV + "        return grad_output @ v, u @ grad_output"), nbgrader=True),
    Mistake("Outer", "entries of needs_input_grad swapped",
            "it decides whether to compute grad_u from another input's entry of "
            "ctx.needs_input_grad: which entry is u's?",
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
    Mistake("Outer", "saves the output", "Outer saved its output, of shape (4, 3)",
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
    # the right gradients, with None where none is needed: only what backward reads shows that
    # it computed both every time
    Mistake("Outer", "both gradients computed, None returned for the unneeded one",
            "Outer.backward computed grad_v, which nothing asked for: with only u requiring grad it "
            "read u's values",
            _outer(READ_UV + "        grad_u = grad_output @ v\n        grad_v = u @ grad_output\n"
                   "        need_u, need_v = ctx.needs_input_grad\n"
                   "        return grad_u if need_u else None, grad_v if need_v else None")),
    # review 80: work on grad_output alone for the unneeded gradient reads neither input; what it
    # made reaches no gradient returned
    Mistake("Outer", "grad_output's transpose copied before the gates, used by grad_v only",
            "Outer.backward did work nobody needed: with only u requiring grad it ran aten.clone",
            _outer(READ_UV + "        need_u, need_v = ctx.needs_input_grad\n"
                   "        grad_output_t = grad_output.t().contiguous()\n"
                   "        return (grad_output @ v if need_u else None,\n"
                   "                grad_output_t @ u if need_v else None)")),
    # autograd asked for both gradients: None returned where none is needed, the same reads
    # as by hand, yet the derivation, the exercise, is autograd's
    Mistake("Outer", "asks autograd for both gradients inside backward",
            "Outer.backward calls torch.autograd.grad: write the gradient formula by hand",
            _outer(READ_UV + "        with torch.enable_grad():\n"
                   "            uu, vv = u.detach().requires_grad_(), v.detach().requires_grad_()\n"
                   "            grad_u, grad_v = torch.autograd.grad(torch.outer(uu, vv), (uu, vv),"
                   " grad_output)\n"
                   "        need_u, need_v = ctx.needs_input_grad\n"
                   "        return grad_u if need_u else None, grad_v if need_v else None")),
    Mistake("Outer", "u and v kept in a module global", "Outer's backward used another call's inputs",
            "\n_saved = {}\n" + _outer("        u, v = _saved['uv']\n"
                                         "        need_u, need_v = ctx.needs_input_grad\n"
                                         "        return (grad_output @ v if need_u else None,\n"
                                         "                u @ grad_output if need_v else None)",
                                         "        _saved['uv'] = (u, v)\n"
                                         "        return torch.outer(u, v)")),
    # right for m, n >= 1; at m = 0 there is nothing to stack (a review's answer): "for any m
    # and n" includes the empty table
    Mistake("Outer", "rows built in a Python loop and joined by torch.stack",
            "Outer.forward raised RuntimeError with u of shape (0,), v of shape (3,): stack "
            "expects a non-empty TensorList. Every non-empty size passed",
            _outer("        u, v = ctx.saved_tensors\n"
                   "        need_u, need_v = ctx.needs_input_grad\n"
                   "        grad_u = (torch.stack([(grad_output[i] * v).sum() for i in "
                   "range(len(u))])\n"
                   "                  if need_u else None)\n"
                   "        grad_v = sum(grad_output[i] * u[i] for i in range(len(u))) "
                   "if need_v else None\n"
                   "        return grad_u, grad_v",
                   "        ctx.save_for_backward(u, v)\n"
                   "        return torch.stack([u[i] * v for i in range(len(u))])")),
    # a mutant (issue 45): a copy saved, which only a strided u shows
    Mistake("Outer", "saves u.contiguous(), a copy when u is strided",
            "Outer saved an intermediate of shape (4,) (32 bytes): a copy, or anything else "
            "forward computed, is memory forward allocated",
            _outer(READ_UV + "        need_u, need_v = ctx.needs_input_grad\n"
                   "        return (grad_output @ v if need_u else None,\n"
                   "                u @ grad_output if need_v else None)",
                   "        ctx.save_for_backward(u.contiguous(), v)\n"
                   "        return torch.outer(u, v)")),
    # review answers (lesson 00, score 8): grad_output transposed in place for grad_v (the
    # grader's reference, given the same tensor, used to raise and be blamed on Outer), and
    # grad_output scaled in place for grad_u
    Mistake("Outer", "grad_output transposed in place with t_",
            "Outer's backward changed grad_output's shape in place, from (4, 3) to (3, 4)",
            _outer(READ_UV + "        grad_u = grad_output @ v if ctx.needs_input_grad[0] "
                   "else None\n        grad_v = grad_output.t_() @ u if "
                   "ctx.needs_input_grad[1] else None\n        return grad_u, grad_v")),
    Mistake("Outer", "grad_output multiplied in place by v",
            "Outer's backward modified grad_output in place",
            _outer(READ_UV + "        grad_v = u @ grad_output if ctx.needs_input_grad[1] "
                   "else None\n        grad_u = grad_output.mul_(v).sum(1) if "
                   "ctx.needs_input_grad[0] else None\n        return grad_u, grad_v")),
    # a fresh review's answer (o11): "u = [1] multiplies by one"; the caller's output is a
    # view of v, a write into it changes v (rule 1)
    Mistake("Outer", "v.unsqueeze(0) when u is [1.0]",
            "Outer.forward returned a view of its input v",
            _outer(READ_UV + "        return (grad_output @ v if ctx.needs_input_grad[0] else None,\n"
                   "                u @ grad_output if ctx.needs_input_grad[1] else None)",
                   "        ctx.save_for_backward(u, v)\n"
                   "        if u.numel() == 1 and u.item() == 1.0:\n"
                   "            return v.unsqueeze(0)\n"
                   "        return torch.outer(u, v)")),
]

# found by reviewers: saved views, and None saved for an input no gradient reads

UNUSUAL += [
    Unusual("Outer", "saves the views u[:, None] and v[None, :]",
            """
class Outer(torch.autograd.Function):
    @staticmethod
    def forward(ctx, u, v):
        col, row = u[:, None], v[None, :]
        ctx.save_for_backward(col, row)
        return col * row

    @staticmethod
    def backward(ctx, grad_output):
        col, row = ctx.saved_tensors
        grad_u = (grad_output * row).sum(1) if ctx.needs_input_grad[0] else None
        grad_v = (grad_output * col).sum(0) if ctx.needs_input_grad[1] else None
        return grad_u, grad_v
"""),
    Unusual("Outer", "None saved for an input no gradient reads, einsum throughout",
            """
class Outer(torch.autograd.Function):
    @staticmethod
    def forward(ctx, u, v):
        need_u, need_v = ctx.needs_input_grad
        ctx.save_for_backward(v if need_u else None, u if need_v else None)
        return torch.einsum('i,j->ij', u, v)

    @staticmethod
    def backward(ctx, grad_output):
        v, u = ctx.saved_tensors
        need_u, need_v = ctx.needs_input_grad
        return (torch.einsum('ij,j->i', grad_output, v) if need_u else None,
                torch.einsum('ij,i->j', grad_output, u) if need_v else None)
"""),
]
