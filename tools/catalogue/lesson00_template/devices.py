"""Lesson 00: rule 1's device clause at the shapes rule 1 names (review 79). A tensor made without
``device=`` in a branch for an empty, 0-d or size-1 input lands on the default device, which on a
GPU is not the inputs'; the default-device check runs at each such shape the domain has, not
only at the typical inputs, and names the shape it tried. Rule 2's dtype clause the same way
(review 81): ``torch.zeros(shape, device=...)`` in such a branch, or for a weight of 0, is
float32 whatever the inputs' dtype, and autograd casts it without a word; what backward
returns is recorded on those paths too."""

from .. import Mistake
from .answers import READ_UV, READ_X, SAVE_X, _outer, _square, _weighted

_DEFAULT_DEVICE = "on the default device (torch.{made} without device=)"
_SQUARE_BACKWARD = READ_X + "        return 2 * x * grad_output"
_WEIGHTED_BACKWARD = ("        return (grad_output * ctx.w1 if ctx.needs_input_grad[0] else None,\n"
                      "                grad_output * ctx.w2 if ctx.needs_input_grad[1] else None, "
                      "None, None)")
_OUTER_FORWARD = "        ctx.save_for_backward(u, v)\n        return u[:, None] * v[None, :]"
_OUTER_GRADIENTS = READ_UV + "        need_u, need_v = ctx.needs_input_grad\n"

MISTAKES = [
    Mistake("Square", "an empty x answered with torch.empty(x.shape, dtype=x.dtype)",
            "Square returned an output " + _DEFAULT_DEVICE.format(made="empty"),
            _square("        ctx.save_for_backward(x)\n"
                    "        if x.numel() == 0:\n"
                    "            return torch.empty(x.shape, dtype=x.dtype)\n"
                    "        return x ** 2", _SQUARE_BACKWARD)),
    Mistake("Square", "a 0-d x answered with torch.tensor(x.item() ** 2, dtype=x.dtype)",
            "Square returned an output " + _DEFAULT_DEVICE.format(made="tensor"),
            _square("        ctx.save_for_backward(x)\n"
                    "        if x.dim() == 0:\n"
                    "            return torch.tensor(x.item() ** 2, dtype=x.dtype)\n"
                    "        return x ** 2", _SQUARE_BACKWARD)),
    Mistake("WeightedSum", "empty inputs answered with torch.zeros(x1.shape, dtype=x1.dtype)",
            "WeightedSum returned an output " + _DEFAULT_DEVICE.format(made="zeros"),
            _weighted(_WEIGHTED_BACKWARD,
                      "        ctx.w1, ctx.w2 = w1, w2\n"
                      "        if x1.numel() == 0:\n"
                      "            return torch.zeros(x1.shape, dtype=x1.dtype)\n"
                      "        return w1 * x1 + w2 * x2")),
    Mistake("Outer", "an empty table made with torch.zeros(m, n, dtype=u.dtype)",
            "Outer returned an output " + _DEFAULT_DEVICE.format(made="zeros"),
            _outer(READ_UV +
                   "        return (grad_output @ v if ctx.needs_input_grad[0] else None,\n"
                   "                u @ grad_output if ctx.needs_input_grad[1] else None)",
                   "        ctx.save_for_backward(u, v)\n"
                   "        if u.numel() == 0 or v.numel() == 0:\n"
                   "            return torch.zeros(u.shape[0], v.shape[0], dtype=u.dtype)\n"
                   "        return u[:, None] * v[None, :]")),
    Mistake("Outer", "an empty table's gradients made with torch.zeros(u.shape, dtype=u.dtype)",
            "Outer made a tensor " + _DEFAULT_DEVICE.format(made="zeros") + " and used it",
            _outer(_OUTER_GRADIENTS +
                   "        if grad_output.numel() == 0:\n"
                   "            return (torch.zeros(u.shape, dtype=u.dtype) if need_u else None,\n"
                   "                    torch.zeros(v.shape, dtype=v.dtype) if need_v else None)\n"
                   "        return (grad_output @ v if need_u else None, "
                   "u @ grad_output if need_v else None)", _OUTER_FORWARD)),
    Mistake("Outer", "grad_u for m = 1 built with torch.tensor([...], dtype=u.dtype)",
            "Outer made a tensor " + _DEFAULT_DEVICE.format(made="tensor") + " and used it",
            _outer(_OUTER_GRADIENTS +
                   "        if u.shape[0] == 1:  # a single row: its gradient is one number\n"
                   "            grad_u = (torch.tensor([torch.dot(grad_output[0], v).item()], "
                   "dtype=u.dtype)\n"
                   "                      if need_u else None)\n"
                   "        else:\n"
                   "            grad_u = grad_output @ v if need_u else None\n"
                   "        return grad_u, (u @ grad_output if need_v else None)", _OUTER_FORWARD)),
    # review 81 (S11, W10, O9): the device right, the dtype the default one
    Mistake("Square", "an empty x's gradient made with torch.zeros(x.shape, device=x.device)",
            "returned grad_x in float32 for a float64 x",
            _square(SAVE_X, READ_X + "        if x.numel() == 0:\n"
                    "            return torch.zeros(x.shape, device=x.device)\n"
                    "        return 2 * x * grad_output")),
    Mistake("WeightedSum", "a weight of 0 answered with torch.zeros(g.shape, device=g.device)",
            "returned grad_x2 in float32 for a float64 x2",
            _weighted("        def one(w):\n"
                      "            if w == 0:\n"
                      "                return torch.zeros(grad_output.shape, "
                      "device=grad_output.device)\n"
                      "            return grad_output * w\n"
                      "        return (one(ctx.w1) if ctx.needs_input_grad[0] else None,\n"
                      "                one(ctx.w2) if ctx.needs_input_grad[1] else None, "
                      "None, None)")),
    Mistake("Outer", "an empty table's gradients made with torch.zeros(u.shape, device=u.device)",
            "returned grad_u in float32 for a float64 u",
            _outer(_OUTER_GRADIENTS +
                   "        if grad_output.numel() == 0:\n"
                   "            return (torch.zeros(u.shape, device=u.device) if need_u else None,\n"
                   "                    torch.zeros(v.shape, device=v.device) if need_v else None)\n"
                   "        return (grad_output @ v if need_u else None, "
                   "u @ grad_output if need_v else None)", _OUTER_FORWARD)),
]
