"""Lesson 01: tensors written that the Function did not create, and outputs that are x itself
(Function contract, rule 5): grad_output multiplied or filled in place (above some size
too), x clamped in place, x's memory used when x needs no gradient, x returned where every
entry is positive, so a write into the output writes into x."""

from .. import Mistake

MISTAKES = [
    Mistake("MyReLU", "clamp_ on x only when x is not a leaf",
            "MyReLU.forward modified its input x in place",
            """
class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        mask = x > 0
        ctx.save_for_backward(mask)
        if not x.is_leaf:
            return x.clamp_(min=0)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        mask, = ctx.saved_tensors
        return torch.where(mask, grad_output, 0)
"""),
    Mistake("MyReLU", "x itself returned when every entry is above 0",
            "MyReLU returned x itself where every entry of x is above 0",
            """
class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        mask = x > 0
        ctx.save_for_backward(mask)
        if bool(mask.all()):
            return x
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        mask, = ctx.saved_tensors
        return torch.where(mask, grad_output, 0)
"""),
    Mistake("Softplus", "x itself returned when every entry is above 37",
            "Softplus returned x itself where every entry of x is above 37",
            """
class Softplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        if bool((x > 37).all()):
            y = x
        else:
            y = x.clamp(min=0) + torch.log1p(torch.exp(-x.abs()))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * -torch.expm1(-y)
"""),
    Mistake("Softplus", "x itself returned when every entry is above 40",
            "Softplus returned x itself",
            """
class Softplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        if x.numel() and bool((x > 40).all()):
            y = x
        else:
            y = x.clamp(min=0) + torch.log1p(torch.exp(-x.abs()))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * -torch.expm1(-y)
"""),
    Mistake("Softplus", "x itself returned when every entry is above 750",
            "Softplus returned x itself",
            """
class Softplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        if x.numel() and bool((x > 750).all()):
            y = x
        else:
            y = x.clamp(min=0) + torch.log1p(torch.exp(-x.abs()))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * -torch.expm1(-y)
"""),
    Mistake("MySigmoid", "works in x's memory when x needs no gradient",
            "MySigmoid.forward modified its input x in place: inputs must stay untouched",
            """
class MySigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        pos = x >= 0
        work = x if not x.requires_grad else x.clone()
        z = work.abs_().neg_().exp_()
        y = torch.where(pos, 1 / (1 + z), z / (1 + z))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * y * (1 - y)
"""),
    Mistake("ScaledSigmoid", "works in x's memory when x needs no gradient",
            "ScaledSigmoid.forward modified its input x in place: inputs must stay untouched",
            """
class ScaledSigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(torch.sigmoid(x))
        ctx.scale = scale
        work = x if not x.requires_grad else x.clone()
        return work.sigmoid_().mul_(scale)

    @staticmethod
    def backward(ctx, grad_output):
        s, = ctx.saved_tensors
        return grad_output * ctx.scale * s * (1 - s), None
"""),
    Mistake("MySigmoid", "grad_output.mul_ in backward above 1024 entries",
            "backward modified grad_output in place",
            """
class MySigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        z = torch.exp(-x.abs())
        y = torch.where(x >= 0, 1 / (1 + z), z / (1 + z))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        if grad_output.numel() > 1024 and grad_output.is_contiguous():
            return grad_output.mul_(y * (1 - y))
        return grad_output * y * (1 - y)
"""),
    Mistake("ScaledSigmoid", "grad_output.mul_ in backward above 1024 entries",
            "backward modified grad_output in place",
            """
class ScaledSigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        ctx.scale = scale
        return scale * torch.sigmoid(x)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        s = torch.sigmoid(x)
        if grad_output.numel() > 1024 and grad_output.is_contiguous():
            return grad_output.mul_(ctx.scale * s * (1 - s)), None
        return grad_output * ctx.scale * s * (1 - s), None
"""),
    Mistake("Softplus", "grad_output.mul_ in backward above 1024 entries",
            "backward modified grad_output in place",
            """
class Softplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x.clamp(min=0) + torch.log1p(torch.exp(-x.abs()))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        if grad_output.numel() > 1024 and grad_output.is_contiguous():
            return grad_output.mul_(-torch.expm1(-y))
        return grad_output * -torch.expm1(-y)
"""),
    Mistake("MyReLU", "grad_output.masked_fill_ in backward above 1024 entries",
            "backward modified grad_output in place",
            """
class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        m = x > 0
        ctx.save_for_backward(m)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        m, = ctx.saved_tensors
        if grad_output.numel() > 1024 and grad_output.is_contiguous():
            return grad_output.masked_fill_(~m, 0)
        return torch.where(m, grad_output, 0)
"""),
    Mistake("MyReLU", "x.clamp_ in forward above 1024 entries, when x needs no gradient",
            "MyReLU.forward modified its input x in place",
            """
class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        m = x > 0
        ctx.save_for_backward(m)
        if x.numel() > 1024 and not x.requires_grad:
            return x.clamp_(min=0)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        m, = ctx.saved_tensors
        return torch.where(m, grad_output, 0)
"""),
]
