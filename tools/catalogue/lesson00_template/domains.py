"""Lesson 00's dtype and layout slips, which only the later checks separate: WeightedSum's
weights rounded through a float32 tensor (right to float32's precision) or kept on ctx as
tensors, and backwards that need a contiguous grad_output."""

from .. import Mistake
from .answers import READ_UV, READ_X, SAVE_X, _outer, _square, _weighted

MISTAKES = [
    # torch.tensor(w) is float32: a float64 result right to float32's precision only (the
    # battery's weights 0.5, -2.0, 1.0, 0.0 and 3.0 are float32 numbers, which hide it)
    Mistake("WeightedSum", "torch.tensor(ctx.w1) in backward, a float32 constant",
            "grad_x1 is what w1 = 0.10000000149011612 would give (0.1 rounded to float32)",
            _weighted("        w1, w2 = torch.tensor(ctx.w1), torch.tensor(ctx.w2)\n"
                      "        return grad_output * w1, grad_output * w2, None, None")),
    Mistake("WeightedSum", "torch.tensor(w1) in forward, a float32 constant",
            "WeightedSum's output is what w1 = 0.10000000149011612 and w2 = "
            "-0.3333333432674408 would give",
            _weighted("        return grad_output * ctx.w1, grad_output * ctx.w2, None, None",
                      "        ctx.w1, ctx.w2 = w1, w2\n"
                      "        return torch.tensor(w1) * x1 + torch.tensor(w2) * x2")),
    # the weights as 0-d tensors on ctx: told to keep the floats, not to save_for_backward
    # them (which would keep the float32 tensors the probe above then finds)
    Mistake("WeightedSum", "weights made into tensors on ctx",
            "WeightedSum keeps w1 on ctx as a 0-d torch.float32 tensor, ctx.w1: w1 is a Python "
            "float: keep it as one",
            _weighted("        return grad_output * ctx.w1, grad_output * ctx.w2, None, None",
                      "        ctx.w1, ctx.w2 = torch.tensor(w1), torch.tensor(w2)\n"
                      "        return w1 * x1 + w2 * x2")),
    # .view needs strides it can flatten: a transposed grad_output has none
    Mistake("Square", "grad_output flattened with .view(-1)",
            "(with a transposed grad_output of shape (3, 4), strides (1, 3))",
            _square(SAVE_X, READ_X + "        flat = grad_output.view(-1) * 2 * x.reshape(-1)\n"
                    "        return flat.reshape(x.shape)")),
    Mistake("Outer", "grad_output flattened with .view(-1)",
            "(with a transposed grad_output of shape (4, 3), strides (1, 4))",
            _outer(READ_UV + "        flat = grad_output.view(-1)\n"
                   "        need_u, need_v = ctx.needs_input_grad\n"
                   "        grad_u = grad_v = None\n"
                   "        if need_u:\n"
                   "            grad_u = (flat * v.repeat(len(u))).view(len(u), -1).sum(1)\n"
                   "        if need_v:\n"
                   "            grad_v = (flat * u.repeat_interleave(len(v))).view(len(u), -1).sum(0)\n"
                   "        return grad_u, grad_v")),
]
