"""Lesson 03's transfer exercise: answers with known verdicts for StraightThroughSoftmax's
backward, the vector-Jacobian product of softmax(logits / tau), among them a softmax shifted by
the whole tensor's maximum (in forward or in backward)."""

from .. import Mistake, Unusual
from .answers import READ, RIGHT, _sts

UNUSUAL = [
    Unusual("StraightThroughSoftmax", "saves the logits, recomputes the softmax, scatter_ one-hot",
            _sts("        logits, = ctx.saved_tensors\n"
                 "        s = torch.softmax(logits / ctx.tau, dim=-1)\n"
                 "        return (s * grad_output - s * (s * grad_output).sum(-1, True)) / ctx.tau,"
                 " None",
                 "        ctx.save_for_backward(logits)\n        ctx.tau = tau\n"
                 "        index = logits.argmax(-1, keepdim=True)\n"
                 "        return torch.zeros_like(logits).scatter_(-1, index, 1.0)")),
    Unusual("StraightThroughSoftmax", "PyTorch's own softmax-backward decomposition "
            "(torch/_decomp: new_grad_output = grad_output * output)",
            _sts(READ + "        new_grad_output = grad_output * soft\n"
                 "        grad_input = new_grad_output - soft * torch.sum(new_grad_output, dim=-1, "
                 "keepdim=True)\n        return grad_input / ctx.tau, None")),
    Unusual("StraightThroughSoftmax", "softmax by hand in backward, max shifted out (float32 at "
            "tau = 0.1 differs from torch.softmax's rounding)",
            _sts("        logits, = ctx.saved_tensors\n        z = logits / ctx.tau\n"
                 "        e = torch.exp(z - z.amax(-1, keepdim=True))\n"
                 "        s = e / e.sum(-1, keepdim=True)\n"
                 "        return s * (grad_output - (s * grad_output).sum(-1, keepdim=True)) "
                 "/ ctx.tau, None",
                 "        ctx.save_for_backward(logits)\n        ctx.tau = tau\n"
                 "        return F.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)")),
    Unusual("StraightThroughSoftmax", "exp(log_softmax) saved, type_as for the dtype",
            _sts(READ + RIGHT,
                 "        ctx.save_for_backward(torch.exp(torch.log_softmax(logits / tau, -1)))\n"
                 "        ctx.tau = tau\n"
                 "        return F.one_hot(logits.argmax(-1), logits.shape[-1]).type_as(logits)")),
]

MISTAKES = [
    Mistake("StraightThroughSoftmax", "softmax saved widened to float64",
            "forward saved a float64 tensor of shape",
            _sts(READ + RIGHT, "        soft = torch.softmax(logits / tau, dim=-1)\n"
                 "        ctx.save_for_backward(soft.double())\n        ctx.tau = tau\n"
                 "        return F.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)")),
    # the review's W24: every value is float64's own (no float32 holds them), so only the
    # dtype itself shows the widening
    Mistake("StraightThroughSoftmax", "softmax computed and saved in float64 for float32 logits",
            "StraightThroughSoftmax's forward saved a float64 tensor of shape (2, 4) for float32 "
            "logits: the contract saves nothing in a dtype wider than the logits'",
            _sts(READ + RIGHT, "        soft = torch.softmax(logits.double() / tau, dim=-1)\n"
                 "        ctx.save_for_backward(soft)\n        ctx.tau = tau\n"
                 "        return F.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)")),
    Mistake("StraightThroughSoftmax", "saves logits.clone(), recomputes the softmax",
            "forward saved a copy of logits",
            _sts("        logits, = ctx.saved_tensors\n"
                 "        soft = torch.softmax(logits / ctx.tau, dim=-1)\n"
                 "        row = (grad_output * soft).sum(-1, keepdim=True)\n"
                 "        return soft * (grad_output - row) / ctx.tau, None",
                 "        ctx.save_for_backward(logits.clone())\n        ctx.tau = tau\n"
                 "        return F.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)")),
    # at a tau where the softmax is one-hot the gradient is 0 whatever tau divides it: the
    # per-call check's two calls (tau 0.3 and 40) are where each call's own tau shows
    Mistake("StraightThroughSoftmax", "tau kept in a module global",
            "is right for each call alone but not for two calls in one graph",
            _sts("        soft, = ctx.saved_tensors\n"
                 "        row = (grad_output * soft).sum(-1, keepdim=True)\n"
                 "        return soft * (grad_output - row) / TAU, None",
                 "        global TAU\n        TAU = tau\n"
                 "        soft = torch.softmax(logits / tau, dim=-1)\n"
                 "        ctx.save_for_backward(soft)\n"
                 "        return F.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)")),
    Mistake("StraightThroughSoftmax", "identity backward", "it returns grad_output unchanged, "
            "skipping the softmax's Jacobian", _sts("        return grad_output, None"),
            named=True, nbgrader=True),
    Mistake("StraightThroughSoftmax", "no 1 / tau", "it lacks the factor 1 / tau",
            _sts(READ + "        row = (grad_output * soft).sum(-1, keepdim=True)\n"
                 "        return soft * (grad_output - row), None")),
    Mistake("StraightThroughSoftmax", "times tau", "it multiplies by tau",
            _sts(READ + "        row = (grad_output * soft).sum(-1, keepdim=True)\n"
                 "        return soft * (grad_output - row) * ctx.tau, None")),
    # right values, but n x n per row: rule 3 of the Function contract (memory linear in the
    # sizes) rules a Jacobian built as a matrix out
    Mistake("StraightThroughSoftmax", "the full Jacobian per row, applied with einsum",
            "its largest tensor has shape (96, 128, 128), made by diag_embed",
            _sts(READ + "        jacobian = torch.diag_embed(soft) - soft.unsqueeze(-1) * "
                 "soft.unsqueeze(-2)\n"
                 "        return torch.einsum('...ij,...j->...i', jacobian, grad_output) / ctx.tau,"
                 " None")),
    Mistake("StraightThroughSoftmax", "diagonal of the Jacobian only", "it keeps only the "
            "diagonal of the softmax's Jacobian",
            _sts(READ + "        return grad_output * soft * (1 - soft) / ctx.tau, None")),
    Mistake("StraightThroughSoftmax", "autograd inside backward", "StraightThroughSoftmax.backward "
            "calls torch.autograd.grad",
            _sts("        logits, = ctx.saved_tensors\n        with torch.enable_grad():\n"
                 "            leaf = logits.detach().requires_grad_()\n"
                 "            soft = torch.softmax(leaf / ctx.tau, dim=-1)\n"
                 "            return torch.autograd.grad(soft, leaf, grad_output)[0], None",
                 "        ctx.save_for_backward(logits)\n        ctx.tau = tau\n"
                 "        return F.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)"),
            named=True),
    Mistake("StraightThroughSoftmax", "softmax saved as bfloat16",
            "StraightThroughSoftmax's gradient for logits has bfloat16's precision: forward saved "
            "a bfloat16 tensor",
            _sts(READ + "        soft = soft.to(grad_output.dtype)\n" + RIGHT,
                 "        ctx.save_for_backward(torch.softmax(logits / tau, dim=-1)"
                 ".to(torch.bfloat16))\n        ctx.tau = tau\n"
                 "        return F.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)")),
    Mistake("StraightThroughSoftmax", "row sum without keepdim",
            "its row sum <g, s> lost its last dim",
            _sts(READ + "        row = (grad_output * soft).sum(-1)\n"
                 "        return soft * (grad_output - row) / ctx.tau, None")),
    Mistake("StraightThroughSoftmax", "softmax computed in float32 for float64 logits",
            "StraightThroughSoftmax's gradient for float64 logits has float32's precision",
            _sts(READ + RIGHT, "        soft = torch.softmax(logits.float() / tau, dim=-1)\n"
                 "        ctx.save_for_backward(soft.to(logits.dtype))\n        ctx.tau = tau\n"
                 "        return F.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)")),
    Mistake("StraightThroughSoftmax", "softmax rebuilt as exp(z) / sum exp(z)",
            "StraightThroughSoftmax's gradient for logits is not finite where the softmax's is",
            _sts("        logits, = ctx.saved_tensors\n        e = (logits / ctx.tau).exp()\n"
                 "        soft = e / e.sum(-1, keepdim=True)\n" + RIGHT,
                 "        ctx.save_for_backward(logits)\n        ctx.tau = tau\n"
                 "        return F.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)"),
            named=True),
    Mistake("StraightThroughSoftmax", "identity divided by tau", "it returns grad_output / tau",
            _sts("        return grad_output / ctx.tau, None")),
    Mistake("StraightThroughSoftmax", "softmax without the temperature, then 1 / tau",
            "its softmax leaves out the temperature",
            _sts(READ + RIGHT, "        ctx.save_for_backward(torch.softmax(logits, dim=-1))\n"
                 "        ctx.tau = tau\n"
                 "        return F.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)")),
    Mistake("StraightThroughSoftmax", "the saved one-hot used as the softmax", "backward uses the "
            "saved one-hot in place of the softmax",
            _sts("        hard, = ctx.saved_tensors\n"
                 "        row = (grad_output * hard).sum(-1, keepdim=True)\n"
                 "        return hard * (grad_output - row) / ctx.tau, None",
                 "        hard = F.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)\n"
                 "        ctx.save_for_backward(hard)\n        ctx.tau = tau\n        return hard")),
    Mistake("StraightThroughSoftmax", "zero gradient (the one-hot's true derivative)",
            "zero everywhere: that is the true derivative of the one-hot",
            _sts("        return torch.zeros_like(grad_output), None")),
    # grad_output flattened with .view, which a transposed leading dim refuses
    Mistake("StraightThroughSoftmax", ".view(-1, n) on a non-contiguous grad_output",
            "view size is not compatible with input tensor's size and stride",
            _sts(READ + "        n = soft.shape[-1]\n        g, s = grad_output.view(-1, n), "
                 "soft.reshape(-1, n)\n"
                 "        return (s * (g - (g * s).sum(-1, keepdim=True)) / ctx.tau)"
                 ".view(soft.shape), None")),
    Mistake("StraightThroughSoftmax", "softmax shifted by the whole tensor's maximum",
            "StraightThroughSoftmax's gradient for logits is not finite in row [0] (logits 0, 1, "
            "-1, 0.5, tau=0.7), where the softmax's gradient is finite: it is what a softmax "
            "shifted by the whole tensor's maximum gives",
            _sts("        soft, = ctx.saved_tensors\n" + RIGHT,
                 "        z = logits / tau\n        e = torch.exp(z - z.max())\n"
                 "        ctx.save_for_backward(e / e.sum(-1, keepdim=True))\n"
                 "        ctx.tau = tau\n"
                 "        return F.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)")),
    Mistake("StraightThroughSoftmax", "backward recomputes a softmax shifted by z.max() over "
            "the whole tensor (issue 37)",
            "StraightThroughSoftmax's gradient for logits is not finite in row [0] (logits 0, 1, "
            "-1, 0.5, tau=0.7), where the softmax's gradient is finite: it is what a softmax "
            "shifted by the whole tensor's maximum gives",
            _sts("        logits, = ctx.saved_tensors\n"
                 "        z = logits / ctx.tau\n        e = torch.exp(z - z.max())\n"
                 "        soft = e / e.sum(-1, keepdim=True)\n" + RIGHT,
                 "        ctx.save_for_backward(logits)\n        ctx.tau = tau\n"
                 "        return F.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)")),
    Mistake("StraightThroughSoftmax", "backward divides the saved logits in place",
            "modified its input logits in place",
            _sts("        logits, = ctx.saved_tensors\n"
                 "        soft = torch.softmax(logits.div_(ctx.tau), dim=-1)\n" + RIGHT,
                 "        ctx.save_for_backward(logits)\n        ctx.tau = tau\n"
                 "        return F.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)")),
]
