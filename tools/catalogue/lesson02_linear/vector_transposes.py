"""Lesson 02: the answers of review 54 and of learner trial 53 that the grading misnamed or
that the catalogue lacked. Bilinear's grad_weight computed in float32 was blamed on the layout of
a non-contiguous grad_output (the layout is blamed now only when the same grad_output, made
contiguous, passes). MyLinearFunction's grad_weight as grad_output.mT @ x, a .mT of a 1-D
tensor with no leading dimension, was blamed on flattening and said to work for 3-D x, where its
grad_weight comes back (2, out, in); with a .sum(0) for 3-D x it is right there, and said so. A
.T of a 1-D tensor (a no-op, then a dot product) is only said to fail without a leading
dimension. And a FusedLinearReLU whose mask is saved flattened to (rows, out), which the
contract allows."""

from .. import Mistake, Unusual

MISTAKES = []
UNUSUAL = []


MISTAKES.append(Mistake(
    'Bilinear', "grad_weight's einsum in float32, cast back",
    'every value of grad_weight is exactly a float32 number', '''
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
        needs = ctx.needs_input_grad
        grad_x1 = grad_x2 = grad_weight = grad_bias = None
        if needs[0]:
            grad_x1 = torch.einsum("...o,oij,...j->...i", grad_output, weight, x2)
        if needs[1]:
            grad_x2 = torch.einsum("...i,oij,...o->...j", x1, weight, grad_output)
        if needs[2]:
            grad_weight = torch.einsum("...i,...o,...j->oij", x1.float(), grad_output.float(),
                                       x2.float()).to(x1.dtype)
        if ctx.has_bias and needs[3]:
            grad_bias = grad_output.reshape(-1, weight.shape[0]).sum(dim=0)
        return grad_x1, grad_x2, grad_weight, grad_bias
'''))


MISTAKES.append(Mistake(
    'MyLinearFunction', 'grad_weight = grad_output.mT @ x (learner trial 53)',
    'MyLinearFunction.backward takes .mT of a 1-D tensor for x of shape (3,)', '''
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
        grad_x = grad_w = grad_b = None
        if ctx.needs_input_grad[0]:
            grad_x = grad_output @ weight
        if ctx.needs_input_grad[1]:
            grad_w = grad_output.mT @ x
        if ctx.has_bias and ctx.needs_input_grad[2]:
            grad_b = grad_output.reshape(-1, grad_output.shape[-1]).sum(0)
        return grad_x, grad_w, grad_b
'''))


MISTAKES.append(Mistake(
    'MyLinearFunction', 'grad_weight = grad_output.mT @ x, summed over dim 0 past 2-D',
    'takes .mT of a 1-D tensor for x of shape (3,)', '''
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
        grad_x = grad_w = grad_b = None
        if ctx.needs_input_grad[0]:
            grad_x = grad_output @ weight
        if ctx.needs_input_grad[1]:
            grad_w = grad_output.mT @ x
            if grad_w.dim() > 2: grad_w = grad_w.sum(0)
        if ctx.has_bias and ctx.needs_input_grad[2]:
            grad_b = grad_output.reshape(-1, grad_output.shape[-1]).sum(0)
        return grad_x, grad_w, grad_b
'''))


MISTAKES.append(Mistake(
    'MyLinearFunction', 'grad_weight = g.T @ x, flattened past 2-D: a dot product for 1-D x',
    'fails only with no leading dimension, for x of shape (3,), and is right for 2-D and 3-D x', '''
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
        grad_x = grad_w = grad_b = None
        g2 = grad_output.flatten(0, -2) if grad_output.dim() > 2 else grad_output
        x2 = x.flatten(0, -2) if x.dim() > 2 else x
        if ctx.needs_input_grad[0]:
            grad_x = grad_output @ weight
        if ctx.needs_input_grad[1]:
            grad_w = g2.T @ x2
        if ctx.has_bias and ctx.needs_input_grad[2]:
            grad_b = grad_output.reshape(-1, grad_output.shape[-1]).sum(0)
        return grad_x, grad_w, grad_b
'''))


UNUSUAL.append(Unusual(
    'FusedLinearReLU', 'mask saved flattened to (rows, out)', '''
class FusedLinearReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        z = x @ weight.T
        if bias is not None:
            z = z + bias
        positive = (z > 0).reshape(-1, z.shape[-1])
        needs_x, needs_weight = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        ctx.save_for_backward(x if needs_weight else None, weight if needs_x else None, positive)
        ctx.has_bias = bias is not None
        return z.clamp(min=0)
    @staticmethod
    def backward(ctx, grad_output):
        x, weight, positive = ctx.saved_tensors
        out_features = grad_output.shape[-1]
        grad_z = torch.where(positive.reshape(grad_output.shape), grad_output, 0)
        grad_x = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_x = grad_z @ weight
        if ctx.needs_input_grad[1]:
            grad_weight = grad_z.reshape(-1, out_features).T @ x.reshape(-1, x.shape[-1])
        if ctx.has_bias and ctx.needs_input_grad[2]:
            grad_bias = grad_z.reshape(-1, out_features).sum(dim=0)
        return grad_x, grad_weight, grad_bias
'''))
