"""Lesson 02: wrong answers of review 53 that passed, each with one vector as input (x, or x1
and x2, 1-D): unsqueezed, and the result and the gradients squeeze()d, which drops a feature
dimension of size 1 as well (out = 1, in = 1, n1 = 1), for MyLinearFunction, FusedLinearReLU and
Bilinear."""

from .. import Mistake

MISTAKES = []

MISTAKES.append(Mistake(
    'MyLinearFunction', '1-D x unsqueezed, output and grad_x squeeze()d: shape () for out = 1',
    'drops a dimension of size 1 for inputs with no leading dimension and out = 1', '''
class MyLinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        one = x.dim() == 1
        if one: x = x.unsqueeze(0)
        ctx.save_for_backward(x if ctx.needs_input_grad[1] else None,
                              weight if ctx.needs_input_grad[0] else None)
        ctx.one, ctx.has_bias = one, bias is not None
        y = x.reshape(-1, x.shape[-1]) @ weight.T
        y = y.reshape(*x.shape[:-1], weight.shape[0])
        if bias is not None: y = y + bias
        return y.squeeze() if one else y
    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        if ctx.one: grad_output = grad_output.reshape(1, -1)
        g2 = grad_output.reshape(-1, grad_output.shape[-1])
        gx = gw = gb = None
        if ctx.needs_input_grad[0]:
            gx = grad_output @ weight
            if ctx.one: gx = gx.squeeze()
        if ctx.needs_input_grad[1]:
            gw = g2.T @ x.reshape(-1, x.shape[-1])
        if ctx.has_bias and ctx.needs_input_grad[2]:
            gb = g2.sum(0)
        return gx, gw, gb
'''))

MISTAKES.append(Mistake(
    'MyLinearFunction', '1-D x unsqueezed, grad_x squeeze()d: shape () for in = 1',
    'drops a dimension of size 1 for inputs with no leading dimension and in = 1: '
    'grad_x has shape ()', '''
class MyLinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        one = x.dim() == 1
        if one: x = x.unsqueeze(0)
        ctx.save_for_backward(x if ctx.needs_input_grad[1] else None,
                              weight if ctx.needs_input_grad[0] else None)
        ctx.one, ctx.has_bias = one, bias is not None
        y = x.reshape(-1, x.shape[-1]) @ weight.T
        y = y.reshape(*x.shape[:-1], weight.shape[0])
        if bias is not None: y = y + bias
        return y.squeeze(0) if one else y
    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        if ctx.one: grad_output = grad_output.reshape(1, -1)
        g2 = grad_output.reshape(-1, grad_output.shape[-1])
        gx = gw = gb = None
        if ctx.needs_input_grad[0]:
            gx = grad_output @ weight
            if ctx.one: gx = gx.squeeze()
        if ctx.needs_input_grad[1]:
            gw = g2.T @ x.reshape(-1, x.shape[-1])
        if ctx.has_bias and ctx.needs_input_grad[2]:
            gb = g2.sum(0)
        return gx, gw, gb
'''))

MISTAKES.append(Mistake(
    'FusedLinearReLU', '1-D x unsqueezed, output and grad_x squeeze()d: shape () for out = 1',
    'drops a dimension of size 1 for inputs with no leading dimension and out = 1', '''
class FusedLinearReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        one = x.dim() == 1
        if one:
            x = x.unsqueeze(0)
        z = x @ weight.T
        if bias is not None:
            z = z + bias
        n = ctx.needs_input_grad
        ctx.save_for_backward(x if n[1] else None, weight if n[0] else None, z > 0)
        ctx.one, ctx.has_bias = one, bias is not None
        y = z.clamp(min=0)
        return y.squeeze() if one else y

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, positive = ctx.saved_tensors
        if ctx.one:
            grad_output = grad_output.reshape(1, -1)
        gz = torch.where(positive, grad_output, 0)
        out = gz.shape[-1]
        gx = gw = gb = None
        if ctx.needs_input_grad[0]:
            gx = gz @ weight
            if ctx.one:
                gx = gx.squeeze()
        if ctx.needs_input_grad[1]:
            gw = gz.reshape(-1, out).T @ x.reshape(-1, x.shape[-1])
        if ctx.has_bias and ctx.needs_input_grad[2]:
            gb = gz.reshape(-1, out).sum(0)
        return gx, gw, gb
'''))

MISTAKES.append(Mistake(
    'Bilinear', '1-D x1, x2 unsqueezed, output and grads squeeze()d: shape () for out = 1',
    'drops a dimension of size 1 for inputs with no leading dimension and out = 1', '''
class Bilinear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x1, x2, weight, bias=None):
        one = x1.dim() == 1
        if one: x1, x2 = x1.unsqueeze(0), x2.unsqueeze(0)
        ctx.save_for_backward(x1, x2, weight)
        ctx.one, ctx.has_bias = one, bias is not None
        y = torch.einsum("...i,oij,...j->...o", x1, weight, x2)
        if bias is not None: y = y + bias
        return y.squeeze() if one else y
    @staticmethod
    def backward(ctx, grad_output):
        x1, x2, weight = ctx.saved_tensors
        if ctx.one: grad_output = grad_output.reshape(1, -1)
        n = ctx.needs_input_grad
        g1 = g2 = gw = gb = None
        if n[0]: g1 = torch.einsum("...o,oij,...j->...i", grad_output, weight, x2)
        if n[1]: g2 = torch.einsum("...i,oij,...o->...j", x1, weight, grad_output)
        if n[2]: gw = torch.einsum("...i,...o,...j->oij", x1, grad_output, x2)
        if ctx.has_bias and n[3]: gb = grad_output.reshape(-1, weight.shape[0]).sum(0)
        if ctx.one:
            g1 = g1.squeeze() if g1 is not None else None
            g2 = g2.squeeze() if g2 is not None else None
        return g1, g2, gw, gb
'''))

MISTAKES.append(Mistake(
    'Bilinear', '1-D x1, x2 unsqueezed, grad_x1 squeeze()d: shape () for n1 = 1',
    'drops a dimension of size 1 for inputs with no leading dimension and n1 = 1: '
    'grad_x1 has shape ()', '''
class Bilinear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x1, x2, weight, bias=None):
        one = x1.dim() == 1
        if one: x1, x2 = x1.unsqueeze(0), x2.unsqueeze(0)
        ctx.save_for_backward(x1, x2, weight)
        ctx.one, ctx.has_bias = one, bias is not None
        y = torch.einsum("...i,oij,...j->...o", x1, weight, x2)
        if bias is not None: y = y + bias
        return y.squeeze(0) if one else y
    @staticmethod
    def backward(ctx, grad_output):
        x1, x2, weight = ctx.saved_tensors
        if ctx.one: grad_output = grad_output.reshape(1, -1)
        n = ctx.needs_input_grad
        g1 = g2 = gw = gb = None
        if n[0]: g1 = torch.einsum("...o,oij,...j->...i", grad_output, weight, x2)
        if n[1]: g2 = torch.einsum("...i,oij,...o->...j", x1, weight, grad_output)
        if n[2]: gw = torch.einsum("...i,...o,...j->oij", x1, grad_output, x2)
        if ctx.has_bias and n[3]: gb = grad_output.reshape(-1, weight.shape[0]).sum(0)
        if ctx.one:
            g1 = g1.squeeze() if g1 is not None else None
            g2 = g2.squeeze() if g2 is not None else None
        return g1, g2, gw, gb
'''))
