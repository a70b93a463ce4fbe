"""Lesson 02: wrong FusedLinearReLU answers at the mask's edges: grad_output times the mask
(inf * 0 is nan where z <= 0), a mask with a threshold (z > finfo.eps, z > finfo.tiny), a mask
computed in float32 for float64 inputs, a mask made from the activation truncated to an
integer (relu(z).to(torch.uint8)), and a bias gradient summed from the unmasked grad_output."""

from .. import Mistake, Unusual, edit
from .answers import FUSED_FORWARD, FUSED_READ, FUSED_RETURN, _fused

_FUSED = _fused(FUSED_READ + FUSED_RETURN)

MISTAKES = []

# grad_output times the mask: an infinite grad_output where z <= 0 gives inf * 0 = nan there,
# where torch.relu's backward gives 0 (the lesson's "Compare with yours" names it)

# a "safe" threshold: for 0 < z <= eps torch.relu passes grad_output on, this passes 0
MISTAKES.append(Mistake(
    "FusedLinearReLU", "mask z > finfo.eps",
    "where the pre-activation x @ weight.T + bias is positive but tiny (1e-20", """
class FusedLinearReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        z = x @ weight.T
        if bias is not None:
            z = z + bias
        mask = z > torch.finfo(z.dtype).eps
        n = ctx.needs_input_grad
        ctx.save_for_backward(x if n[1] else None, weight if n[0] else None, mask)
        ctx.has_bias = bias is not None
        return torch.relu(z)

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, mask = ctx.saved_tensors
        gz = torch.where(mask, grad_output, 0)
        out = gz.shape[-1]
        gx = gw = gb = None
        if ctx.needs_input_grad[0]:
            gx = gz @ weight
        if ctx.needs_input_grad[1]:
            gw = gz.reshape(-1, out).T @ x.reshape(-1, x.shape[-1])
        if ctx.has_bias and ctx.needs_input_grad[2]:
            gb = gz.reshape(-1, out).sum(0)
        return gx, gw, gb
"""))

# the mask computed in float32 whatever z's dtype (rule 1: never narrower): a float64
# pre-activation of 1e-50 rounds to 0 there
MISTAKES.append(Mistake(
    "FusedLinearReLU", "mask computed in float32",
    "where the pre-activation x @ weight.T + bias is positive but tiny (1e-50", """
class FusedLinearReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        z = x @ weight.T
        if bias is not None:
            z = z + bias
        mask = z.float() > 0
        ctx.save_for_backward(x, weight, mask)
        ctx.has_bias = bias is not None
        return torch.relu(z)

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, mask = ctx.saved_tensors
        gz = torch.where(mask, grad_output, 0)
        out = gz.shape[-1]
        gx = gw = gb = None
        if ctx.needs_input_grad[0]:
            gx = gz @ weight
        if ctx.needs_input_grad[1]:
            gw = gz.reshape(-1, out).T @ x.reshape(-1, x.shape[-1])
        if ctx.has_bias and ctx.needs_input_grad[2]:
            gb = gz.reshape(-1, out).sum(0)
        return gx, gw, gb
"""))

# the smallest normal number as the threshold: subnormal pre-activations get no gradient
MISTAKES.append(Mistake(
    "FusedLinearReLU", "mask z > finfo.tiny",
    "where the pre-activation x @ weight.T + bias is positive but tiny (1e-50 and the "
    "subnormal", """
class FusedLinearReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        z = x @ weight.T
        if bias is not None:
            z = z + bias
        mask = z > torch.finfo(z.dtype).tiny
        ctx.save_for_backward(x, weight, mask)
        ctx.has_bias = bias is not None
        return torch.relu(z)

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, mask = ctx.saved_tensors
        gz = torch.where(mask, grad_output, 0)
        out = gz.shape[-1]
        gx = gw = gb = None
        if ctx.needs_input_grad[0]:
            gx = gz @ weight
        if ctx.needs_input_grad[1]:
            gw = gz.reshape(-1, out).T @ x.reshape(-1, x.shape[-1])
        if ctx.has_bias and ctx.needs_input_grad[2]:
            gb = gz.reshape(-1, out).sum(0)
        return gx, gw, gb
"""))

# the mask made from the activation's value converted to an integer: relu(z).to(torch.uint8)
# truncates every pre-activation between 0 and 1 to 0, so no gradient passes there (1 byte per
# element, as the memory clause allows); read as a bool, or multiplied in
MISTAKES.append(Mistake(
    "FusedLinearReLU", "mask relu(z).to(torch.uint8), read with mask.bool()",
    "your mask is the activation's value converted to an integer",
    edit(_FUSED, ("mask = z > 0", "mask = torch.relu(z).to(torch.uint8)"),
         ("torch.where(mask, grad_output", "torch.where(mask.bool(), grad_output"))))
MISTAKES.append(Mistake(
    "FusedLinearReLU", "mask relu(z).to(torch.uint8), grad_output times the mask",
    "your mask is the activation's value converted to an integer",
    edit(_FUSED, ("mask = z > 0", "mask = torch.relu(z).to(torch.uint8)"),
         ("torch.where(mask, grad_output, 0.0)", "grad_output * mask"))))

# grad_x and grad_weight masked, grad_bias summed from the raw grad_output ("the bias is
# outside the ReLU")
MISTAKES.append(Mistake(
    "FusedLinearReLU", "grad_bias from the unmasked grad_output",
    "grad_bias sums grad_output where the pre-activation is <= 0 too", """
class FusedLinearReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        z = x @ weight.T
        if bias is not None:
            z = z + bias
        mask = z > 0
        n = ctx.needs_input_grad
        ctx.save_for_backward(x if n[1] else None, weight if n[0] else None, mask)
        ctx.has_bias = bias is not None
        return torch.relu(z)

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, mask = ctx.saved_tensors
        gz = torch.where(mask, grad_output, 0)
        out = gz.shape[-1]
        gx = gw = gb = None
        if ctx.needs_input_grad[0]:
            gx = gz @ weight
        if ctx.needs_input_grad[1]:
            gw = gz.reshape(-1, out).T @ x.reshape(-1, x.shape[-1])
        if ctx.has_bias and ctx.needs_input_grad[2]:
            gb = grad_output.reshape(-1, out).sum(0)  # the bias is "outside" the ReLU
        return gx, gw, gb
"""))

UNUSUAL = []

# correct since issue 69: infinite pre-activations and grad_output left the domain
UNUSUAL.append(Unusual("FusedLinearReLU", "grad_output times the mask: inf * 0 is nan where z <= 0",
        """
class FusedLinearReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        z = x @ weight.T
        if bias is not None:
            z = z + bias
        mask = z > 0
        n = ctx.needs_input_grad
        ctx.save_for_backward(x if n[1] else None, weight if n[0] else None, mask)
        ctx.has_bias = bias is not None
        return torch.relu(z)

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, mask = ctx.saved_tensors
        gz = grad_output * mask
        out = gz.shape[-1]
        gx = gw = gb = None
        if ctx.needs_input_grad[0]:
            gx = gz @ weight
        if ctx.needs_input_grad[1]:
            gw = gz.reshape(-1, out).T @ x.reshape(-1, x.shape[-1])
        if ctx.has_bias and ctx.needs_input_grad[2]:
            gb = gz.reshape(-1, out).sum(0)
        return gx, gw, gb
"""))

# learner trial 82: the ReLU applied to grad_output, not masked by the pre-activation's sign
# (all three gradients wrong; it was told grad_bias alone sums the unmasked grad_output)
MISTAKES.append(Mistake(
    "FusedLinearReLU", "backward's mask from grad_output: torch.relu(grad_output)",
    "your backward's gradients are those of torch.relu(grad_output)",
    _fused(FUSED_READ.replace("torch.where(mask, grad_output, 0.0)", "torch.relu(grad_output)")
           + FUSED_RETURN, FUSED_FORWARD.replace("return z.clamp(min=0)",
                                                 "return torch.relu(z)"))))

# learner trial 82: a threshold mask (z > 1e-6), the output torch.relu(z) itself: first caught
# at pre-activations 1e-9 above 0, where it read as a wrong gradient at x = 0
MISTAKES.append(Mistake(
    "FusedLinearReLU", "mask z > 1e-6, output torch.relu(z)",
    "positive but tiny (1e-9), your backward passes no gradient, as a mask with a threshold",
    _fused(FUSED_READ + FUSED_RETURN,
           edit(FUSED_FORWARD, ("z > 0", "z > 1e-6"), ("return z.clamp(min=0)",
                                                        "return torch.relu(z)")))))
