"""Lesson 02: whole answer cells, among them forms the builders in ``answers`` do not write
(a module global, ``setup_context``), from the second review of the lesson: a bias
gradient summed for a frozen bias, x's shape kept between calls, F.linear in backward,
a flattening that needs a leading dimension."""

from .. import Mistake, Unusual

UNUSUAL = []
MISTAKES = []

# the FLOP count sees matmuls only: a sum for a frozen bias shows in backward's ops
MISTAKES.append(Mistake(
    "MyLinearFunction",
    "grad_bias summed whenever there is a bias, then None when it is frozen",
    "MyLinearFunction.backward reduced a tensor to the bias's shape (4,)", """
class MyLinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        ctx.save_for_backward(x, weight)
        ctx.has_bias = bias is not None
        y = x @ weight.T
        return y + bias if bias is not None else y

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        g2 = grad_output.reshape(-1, grad_output.shape[-1])
        grad_x = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_x = grad_output @ weight
        if ctx.needs_input_grad[1]:
            grad_weight = g2.T @ x.reshape(-1, x.shape[-1])
        if ctx.has_bias:
            grad_bias = g2.sum(dim=0)          # always computed ...
            if not ctx.needs_input_grad[2]:
                grad_bias = None               # ... and thrown away when not wanted
        return grad_x, grad_weight, grad_bias
"""))

# the per-call check's two calls differ in x's leading shape, so the global is the wrong one
MISTAKES.append(Mistake(
    "MyLinearFunction",
    "x's shape in a module global, for grad_x's reshape",
    "MyLinearFunction is right for each call alone but not for two calls in one graph", """
_X_SHAPE = None

class MyLinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        global _X_SHAPE
        _X_SHAPE = x.shape
        x2 = x.reshape(-1, x.shape[-1])
        ctx.save_for_backward(x2, weight)
        ctx.has_bias = bias is not None
        y = x2 @ weight.T
        if bias is not None:
            y = y + bias
        return y.reshape(*x.shape[:-1], weight.shape[0])

    @staticmethod
    def backward(ctx, grad_output):
        x2, weight = ctx.saved_tensors
        g2 = grad_output.reshape(-1, weight.shape[0])
        grad_x = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_x = (g2 @ weight).reshape(_X_SHAPE)
        if ctx.needs_input_grad[1]:
            grad_weight = g2.T @ x2
        if ctx.has_bias and ctx.needs_input_grad[2]:
            grad_bias = g2.sum(0)
        return grad_x, grad_weight, grad_bias
"""))

# F.linear decomposes to a matrix product: only the Python call shows it
MISTAKES.append(Mistake(
    "MyLinearFunction",
    "F.linear for the products in backward",
    "MyLinearFunction.backward calls F.linear", """
class MyLinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        ctx.save_for_backward(x, weight)
        ctx.has_bias = bias is not None
        y = x @ weight.T
        return y + bias if bias is not None else y

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        g2 = grad_output.reshape(-1, grad_output.shape[-1])
        grad_x = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_x = F.linear(grad_output, weight.T)
        if ctx.needs_input_grad[1]:
            grad_weight = F.linear(g2.T, x.reshape(-1, x.shape[-1]).T)
        if ctx.has_bias and ctx.needs_input_grad[2]:
            grad_bias = g2.sum(0)
        return grad_x, grad_weight, grad_bias
"""))

# right for 2-D and 3-D x: not the 2-D-only mistake
MISTAKES.append(Mistake(
    "MyLinearFunction",
    "leading dims flattened with flatten(0, -2): no dim -2 for 1-D x",
    "MyLinearFunction.backward fails only with no leading dimension, for x of shape (3,)", """
class MyLinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        ctx.save_for_backward(x, weight)
        ctx.has_bias = bias is not None
        y = x @ weight.T
        return y + bias if bias is not None else y

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        g2 = grad_output.flatten(0, -2)
        grad_x = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_x = grad_output @ weight
        if ctx.needs_input_grad[1]:
            grad_weight = g2.T @ x.flatten(0, -2)
        if ctx.has_bias and ctx.needs_input_grad[2]:
            grad_bias = g2.sum(0)
        return grad_x, grad_weight, grad_bias
"""))

MISTAKES.append(Mistake(
    "FusedLinearReLU",
    "grad_bias summed whenever there is a bias, then None when it is frozen",
    "FusedLinearReLU.backward reduced a tensor to the bias's shape (4,)", """
class FusedLinearReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        z = x @ weight.T
        if bias is not None:
            z = z + bias
        ctx.save_for_backward(x, weight, z > 0)
        ctx.has_bias = bias is not None
        return z.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, mask = ctx.saved_tensors
        grad_z = grad_output * mask
        g2 = grad_z.reshape(-1, grad_z.shape[-1])
        grad_bias = g2.sum(0) if ctx.has_bias else None
        grad_x = grad_weight = None
        if ctx.needs_input_grad[0]:
            grad_x = grad_z @ weight
        if ctx.needs_input_grad[1]:
            grad_weight = g2.T @ x.reshape(-1, x.shape[-1])
        return grad_x, grad_weight, (grad_bias if ctx.has_bias and ctx.needs_input_grad[2]
                                     else None)
"""))

MISTAKES.append(Mistake(
    "FusedLinearReLU",
    "x's shape in a module global, for grad_x's reshape",
    "FusedLinearReLU is right for each call alone but not for two calls in one graph", """
_X_SHAPE = None

class FusedLinearReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        global _X_SHAPE
        _X_SHAPE = x.shape
        x2 = x.reshape(-1, x.shape[-1])
        z = x2 @ weight.T
        if bias is not None:
            z = z + bias
        ctx.save_for_backward(x2, weight, z > 0)
        ctx.has_bias = bias is not None
        return z.clamp(min=0).reshape(*x.shape[:-1], weight.shape[0])

    @staticmethod
    def backward(ctx, grad_output):
        x2, weight, mask = ctx.saved_tensors
        gz = torch.where(mask, grad_output.reshape(mask.shape), 0.0)
        grad_x = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_x = (gz @ weight).reshape(_X_SHAPE)
        if ctx.needs_input_grad[1]:
            grad_weight = gz.T @ x2
        if ctx.has_bias and ctx.needs_input_grad[2]:
            grad_bias = gz.sum(0)
        return grad_x, grad_weight, grad_bias
"""))

MISTAKES.append(Mistake(
    "Bilinear",
    "grad_bias summed whenever there is a bias, then None when it is frozen",
    "Bilinear.backward reduced a tensor to the bias's shape (4,)", """
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
            g2 = torch.einsum("...i,oij,...o->...j", x1, weight, grad_output)
        if n[2]:
            gw = torch.einsum("...i,...o,...j->oij", x1, grad_output, x2)
        if ctx.has_bias:
            gb = grad_output.reshape(-1, weight.shape[0]).sum(0)
            if not n[3]:
                gb = None
        return g1, g2, gw, gb
"""))


UNUSUAL.append(Unusual(
    "MyLinearFunction",
    "setup_context form, einsum gradients, saves what is read", """
class MyLinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(x, weight, bias=None):
        y = torch.einsum("...i,oi->...o", x, weight)
        return y if bias is None else y + bias

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, weight = inputs[0], inputs[1]
        need = ctx.needs_input_grad
        ctx.save_for_backward(x if need[1] else None, weight if need[0] else None)
        ctx.bias_given = len(inputs) > 2 and inputs[2] is not None

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        need = ctx.needs_input_grad
        gx = gw = gb = None
        if need[0]:
            gx = torch.einsum("...o,oi->...i", grad_output, weight)
        if need[1]:
            gw = torch.einsum("...o,...i->oi", grad_output, x)
        if ctx.bias_given and need[2]:
            gb = torch.einsum("...o->o", grad_output)  # grad_output itself for 1-D x
        return (gx, gw, gb) if len(need) == 3 else (gx, gw)
"""))

UNUSUAL.append(Unusual(
    "FusedLinearReLU",
    "setup_context form, a dead mask read off the output", """
class FusedLinearReLU(torch.autograd.Function):
    @staticmethod
    def forward(x, weight, bias=None):
        return torch.relu(torch.addmm(bias, x.reshape(-1, x.shape[-1]), weight.T)
                          if bias is not None else x.reshape(-1, x.shape[-1]) @ weight.T
                          ).reshape(*x.shape[:-1], weight.shape[0])

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, weight = inputs[0], inputs[1]
        need = ctx.needs_input_grad
        dead = (output <= 0).reshape(-1, weight.shape[0])
        ctx.save_for_backward(x if need[1] else None, weight if need[0] else None, dead)
        ctx.bias_given = len(inputs) > 2 and inputs[2] is not None

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, dead = ctx.saved_tensors
        need = ctx.needs_input_grad
        gz = grad_output.reshape(dead.shape).masked_fill(dead, 0)   # (rows, out), a new tensor
        gx = gw = gb = None
        if need[0]:
            gx = (gz @ weight).reshape(*grad_output.shape[:-1], weight.shape[1])
        if need[1]:
            gw = gz.T @ x.reshape(-1, x.shape[-1])
        if ctx.bias_given and need[2]:
            gb = gz.sum(0)
        return gx, gw, gb
"""))

UNUSUAL.append(Unusual(
    "Bilinear",
    "input gradients as F.bilinear on a permuted weight", """
class Bilinear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x1, x2, weight, bias=None):
        n = ctx.needs_input_grad
        ctx.save_for_backward(x1 if (n[1] or n[2]) else None,
                              x2 if (n[0] or n[2]) else None,
                              weight if (n[0] or n[1]) else None)
        ctx.has_bias = bias is not None
        ctx.sizes = (x1.shape[-1], x2.shape[-1])
        return F.bilinear(x1, x2, weight, bias)

    @staticmethod
    def backward(ctx, grad_output):
        x1, x2, weight = ctx.saved_tensors
        n = ctx.needs_input_grad
        n1, n2 = ctx.sizes
        out = grad_output.shape[-1]
        g1 = g2 = gw = gb = None
        if n[0]:
            g1 = F.bilinear(grad_output, x2, weight.permute(1, 0, 2))
        if n[1]:
            g2 = F.bilinear(x1, grad_output, weight.permute(2, 1, 0))
        if n[2]:
            a = x1.reshape(-1, n1)
            b = x2.reshape(-1, n2)
            G = grad_output.reshape(-1, out)
            gw = (G.T @ (a[:, :, None] * b[:, None, :]).reshape(-1, n1 * n2)).reshape(out, n1, n2)
        if ctx.has_bias and n[3]:
            gb = grad_output.reshape(-1, out).sum(0)
        return g1, g2, gw, gb
"""))
