"""Lesson 02: answers built from their forward and backward bodies, for MyLinearFunction and
FusedLinearReLU, and the bodies and hints both exercises share."""


def _linear(backward: str, forward: str | None = None, name: str = "MyLinearFunction") -> str:
    forward = forward or ("        ctx.save_for_backward(x, weight)\n"
                          "        ctx.has_bias = bias is not None\n"
                          "        y = x @ weight.T\n"
                          "        return y + bias if bias is not None else y")
    return f"""
class {name}(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
{forward}

    @staticmethod
    def backward(ctx, grad_output):
{backward}
"""


FLAT = ("        x, weight = ctx.saved_tensors\n"
        "        g2 = grad_output.reshape(-1, weight.shape[0])\n"
        "        x2 = x.reshape(-1, weight.shape[1])\n")
GUARDED = ("        grad_x = grad_output @ weight if ctx.needs_input_grad[0] else None\n"
           "        grad_weight = g2.T @ x2 if ctx.needs_input_grad[1] else None\n")

FUSED_FORWARD = ("        z = x @ weight.T\n        if bias is not None:\n            z = z + bias\n"
                 "        mask = z > 0\n        ctx.save_for_backward(x, weight, mask)\n"
                 "        ctx.has_bias = bias is not None\n        return z.clamp(min=0)")
FUSED_READ = ("        x, weight, mask = ctx.saved_tensors\n"
              "        g = torch.where(mask, grad_output, 0.0)\n"
              "        g2 = g.reshape(-1, weight.shape[0])\n"
              "        x2 = x.reshape(-1, weight.shape[1])\n")


def _fused(backward: str, forward: str = FUSED_FORWARD) -> str:
    return _linear(backward, forward, name="FusedLinearReLU")


FUSED_RETURN = ("        grad_x = g @ weight if ctx.needs_input_grad[0] else None\n"
                "        grad_weight = g2.T @ x2 if ctx.needs_input_grad[1] else None\n"
                "        grad_bias = g2.sum(0) if ctx.has_bias and ctx.needs_input_grad[2] "
                "else None\n        return grad_x, grad_weight, grad_bias")

_BROADCAST = ("        gx = (grad_output.unsqueeze(-1) * weight).sum(-2)\n"
              "        gw = (grad_output.unsqueeze(-1) * x.unsqueeze(-2)).reshape(-1, *weight.shape)"
              ".sum(0)\n")
_RETURN = "        return grad_x, grad_weight, grad_bias"
_ONE_D = ("with no leading dimension, your sum over the leading dimensions summed the output "
          "features")
_LEADING = "dim=tuple(range(grad_output.dim() - 1))"  # every dimension but the features
