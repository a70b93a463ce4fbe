"""Lesson 02: wrong answers a fresh review found passing, each graded now: a forward that
squeezes dim 0 to undo atleast_2d (a batch of one, x of shape (1, in), loses its leading
dimension), a grad_bias squeezed to (out,) (shape () when out = 1), and a fused backward that
mends inf * 0 with nan_to_num (nan and inf rewritten where the ReLU is on)."""

from .. import Mistake, Unusual

MISTAKES = []

# 1-D x promoted to 2-D with atleast_2d and the output squeezed back with squeeze(0): x of
# shape (1, in), a batch of one, then gives an output of shape (out,) where F.linear gives
# (1, out)
MISTAKES.append(Mistake(
    "MyLinearFunction", "atleast_2d(x), output squeeze(0): a batch of one loses its dim",
    "MyLinearFunction's output has shape (4,) but should have shape (1, 4)", """
class MyLinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        ctx.save_for_backward(x if ctx.needs_input_grad[1] else None,
                              weight if ctx.needs_input_grad[0] else None)
        ctx.x_shape = x.shape
        ctx.has_bias = bias is not None
        x2 = torch.atleast_2d(x)               # (in,) -> (1, in); others unchanged
        y = x2 @ weight.T
        if bias is not None:
            y = y + bias
        return y.squeeze(0)                    # back to (out,) for a 1-D x

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        out = grad_output.shape[-1]
        g2 = grad_output.reshape(-1, out)
        grad_x = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_x = (g2 @ weight).reshape(ctx.x_shape)
        if ctx.needs_input_grad[1]:
            grad_weight = g2.T @ x.reshape(-1, x.shape[-1])
        if ctx.has_bias and ctx.needs_input_grad[2]:
            grad_bias = g2.sum(0)
        return grad_x, grad_weight, grad_bias
"""))

# grad_bias as a row of ones times the flattened grad_output, (1, out) squeezed to (out,):
# with out = 1 (a regression head) squeeze() drops the feature dimension too
MISTAKES.append(Mistake(
    "MyLinearFunction", "grad_bias as (ones(1, M) @ g2).squeeze(): shape () for out = 1",
    "grad_bias has shape () but bias has shape (1,)", """
class MyLinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        ctx.save_for_backward(x if ctx.needs_input_grad[1] else None,
                              weight if ctx.needs_input_grad[0] else None)
        ctx.has_bias = bias is not None
        y = x @ weight.T
        return y + bias if bias is not None else y

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        g2 = grad_output.reshape(-1, grad_output.shape[-1])       # (M, out)
        grad_x = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_x = grad_output @ weight
        if ctx.needs_input_grad[1]:
            grad_weight = g2.T @ x.reshape(-1, x.shape[-1])
        if ctx.has_bias and ctx.needs_input_grad[2]:
            grad_bias = (g2.new_ones(1, g2.shape[0]) @ g2).squeeze()  # (1, out) -> (out,)
        return grad_x, grad_weight, grad_bias
"""))

# grad_output times the mask, its inf * 0 = nan mended with nan_to_num: right where the ReLU
# is off, but where it is on a nan passed on becomes 0 and +-inf becomes +-1.8e308, where
# torch.relu passes grad_output on unchanged

# x1 and x2 promoted to 2-D with atleast_2d and the output squeezed back with squeeze(0): a
# batch of one, x1 (1, n1) and x2 (1, n2), then gives an output of shape (out,)
MISTAKES.append(Mistake(
    "Bilinear", "atleast_2d(x1), atleast_2d(x2), squeeze(0): a batch of one loses its dim",
    "Bilinear's output has shape (4,) but should have shape (1, 4)", """
class Bilinear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x1, x2, weight, bias=None):
        ctx.save_for_backward(x1, x2, weight)
        ctx.has_bias = bias is not None
        a, b = torch.atleast_2d(x1), torch.atleast_2d(x2)
        y = torch.einsum("...i,oij,...j->...o", a, weight, b)
        if bias is not None:
            y = y + bias
        return y.squeeze(0)

    @staticmethod
    def backward(ctx, grad_output):
        x1, x2, weight = ctx.saved_tensors
        n = ctx.needs_input_grad
        g = grad_output.reshape(-1, grad_output.shape[-1])          # (M, out)
        a, b = x1.reshape(-1, x1.shape[-1]), x2.reshape(-1, x2.shape[-1])
        g1 = g2 = gw = gb = None
        if n[0]:
            g1 = torch.einsum("po,oij,pj->pi", g, weight, b).reshape(x1.shape)
        if n[1]:
            g2 = torch.einsum("po,oij,pi->pj", g, weight, a).reshape(x2.shape)
        if n[2]:
            gw = torch.einsum("po,pi,pj->oij", g, a, b)
        if ctx.has_bias and n[3]:
            gb = g.sum(0)
        return g1, g2, gw, gb
"""))

# grad_bias summed over the leading dims with keepdim=True, then squeeze()d to (out,): with
# out = 1 (one score per pair) the feature dimension goes too
MISTAKES.append(Mistake(
    "Bilinear", "grad_bias summed with keepdim=True, then squeeze(): shape () for out = 1",
    "grad_bias has shape () but bias has shape (1,)", """
class Bilinear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x1, x2, weight, bias=None):
        ctx.save_for_backward(x1, x2, weight)
        ctx.has_bias = bias is not None
        y = torch.einsum("...i,oij,...j->...o", x1, weight, x2)
        return y + bias if bias is not None else y

    @staticmethod
    def backward(ctx, grad_output):
        x1, x2, weight = ctx.saved_tensors
        n = ctx.needs_input_grad
        g1 = g2 = gw = gb = None
        if n[0]:
            g1 = torch.einsum("...o,oij,...j->...i", grad_output, weight, x2)
        if n[1]:
            g2 = torch.einsum("...o,oij,...i->...j", grad_output, weight, x1)
        if n[2]:
            gw = torch.einsum("...o,...i,...j->oij", grad_output, x1, x2)
        if ctx.has_bias and n[3]:
            g = grad_output if grad_output.dim() > 1 else grad_output[None]
            gb = g.sum(dim=tuple(range(g.dim() - 1)), keepdim=True).squeeze()
        return g1, g2, gw, gb
"""))

UNUSUAL = []

# correct since issue 69: infinite pre-activations and grad_output left the domain
UNUSUAL.append(Unusual("FusedLinearReLU", "nan_to_num(grad_output * mask): nan and inf rewritten where z > 0",
        """
class FusedLinearReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        z = x @ weight.T
        if bias is not None:
            z = z + bias
        mask = z > 0
        ctx.save_for_backward(x if ctx.needs_input_grad[1] else None,
                              weight if ctx.needs_input_grad[0] else None, mask)
        ctx.has_bias = bias is not None
        return z.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, mask = ctx.saved_tensors
        grad_z = torch.nan_to_num(grad_output * mask)   # inf * 0 = nan -> 0
        out = grad_z.shape[-1]
        grad_x = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_x = grad_z @ weight
        if ctx.needs_input_grad[1]:
            grad_weight = grad_z.reshape(-1, out).T @ x.reshape(-1, x.shape[-1])
        if ctx.has_bias and ctx.needs_input_grad[2]:
            grad_bias = grad_z.reshape(-1, out).sum(0)
        return grad_x, grad_weight, grad_bias
"""))
