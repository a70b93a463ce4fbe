"""Lesson 01: what forward saves, each exercise's own decision: the input where the output
was asked for (above some size, for some dtype, for a non-leaf x), a tensor more, and
aliases of the output (y.detach(), a view, a reshaped flat y), which are tensors of their
own, cut from the graph."""

from .. import Mistake
from .answers import FROM_Y, SOFTPLUS_STABLE, STABLE, _softplus, _sigmoid

MISTAKES = [
    Mistake("MySigmoid", "saves x instead of y once x has 25 entries or more",
            "MySigmoid saved its input x",
            """
class MySigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        z = torch.exp(-x.abs())
        y = torch.where(x >= 0, 1 / (1 + z), z / (1 + z))
        ctx.big = x.numel() >= 25
        ctx.save_for_backward(x if ctx.big else y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        s, = ctx.saved_tensors
        if ctx.big:
            z = torch.exp(-s.abs())
            s = torch.where(s >= 0, 1 / (1 + z), z / (1 + z))
        return grad_output * s * (1 - s)
"""),
    Mistake("Softplus", "saves x instead of y once x has 25 entries or more",
            "Softplus saved input x: x is new memory wherever nothing else keeps it",
            """
class Softplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x.clamp(min=0) + torch.log1p(torch.exp(-x.abs()))
        ctx.big = x.numel() >= 25
        ctx.save_for_backward(x if ctx.big else y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        s, = ctx.saved_tensors
        if ctx.big:
            z = torch.exp(-s.abs())
            return grad_output * torch.where(s >= 0, 1 / (1 + z), z / (1 + z))
        return grad_output * -torch.expm1(-s)
"""),
    Mistake("MyReLU", "saves y and a mask when x is not a leaf",
            "MyReLU saved 2 tensors, its output y and a bool tensor of its own",
            """
class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x.clamp(min=0)
        if x.grad_fn is not None:
            ctx.save_for_backward(y, x > 0)
        else:
            ctx.save_for_backward(x > 0)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        m = ctx.saved_tensors[-1]
        return torch.where(m, grad_output, 0)
"""),
    Mistake("MyReLU", "saves x itself for float16 x",
            "MyReLU saved its input x (",
            """
class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x if x.dtype == torch.float16 else x > 0)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        s, = ctx.saved_tensors
        return torch.where(s if s.dtype == torch.bool else s > 0, grad_output, 0)
"""),
    Mistake("MyReLU", "saves x itself once x has 25 entries or more",
            "MyReLU saved its input x (",
            """
class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x if x.numel() >= 25 else x > 0)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        s, = ctx.saved_tensors
        return torch.where(s if s.dtype == torch.bool else s > 0, grad_output, 0)
"""),
    Mistake("MyReLU", "saves x instead of y past 65536 entries",
            "MyReLU saved its input x",
            """
class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x.clamp(min=0)
        ctx.save_for_backward(y if x.numel() <= 65536 else x)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        t, = ctx.saved_tensors
        return torch.where(t > 0, grad_output, 0)
"""),
    Mistake("MySigmoid", "saves x instead of y past 65536 entries, sigma again in backward",
            "MySigmoid saved its input x",
            """
class MySigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        z = torch.exp(-x.abs())
        y = torch.where(x >= 0, 1 / (1 + z), z / (1 + z))
        ctx.big = x.numel() > 65536
        ctx.save_for_backward(x if ctx.big else y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        if ctx.big:
            z = torch.exp(-y.abs())
            y = torch.where(y >= 0, 1 / (1 + z), z / (1 + z))
        return grad_output * y * (1 - y)
"""),
    Mistake("Softplus", "saves x instead of y past 65536 entries",
            "Softplus saved",
            """
class Softplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x.clamp(min=0) + torch.log1p(torch.exp(-x.abs()))
        ctx.big = x.numel() > 65536
        ctx.save_for_backward(x if ctx.big else y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        if ctx.big:
            y = y.clamp(min=0) + torch.log1p(torch.exp(-y.abs()))
        return grad_output * -torch.expm1(-y)
"""),
    Mistake("MySigmoid", "saves y.detach()",
            "saved an alias of its output y, not y itself",
            """
class MySigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        z = torch.exp(-x.abs())
        y = torch.where(x >= 0, 1 / (1 + z), z / (1 + z))
        ctx.save_for_backward(y.detach())
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * y * (1 - y)
"""),
    Mistake("Softplus", "saves y.detach()",
            "Softplus saved an alias of its output y, not y itself",
            """
class Softplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x.clamp(min=0) + torch.log1p(torch.exp(-x.abs()))
        ctx.save_for_backward(y.detach())
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * -torch.expm1(-y)
"""),
    Mistake("MySigmoid", "saves the flat y of x.reshape(-1), returns y reshaped",
            "saved an alias of its output y, not y itself",
            """
class MySigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        shape, x = x.shape, x.reshape(-1)
        z = torch.exp(-x.abs())
        y = torch.where(x >= 0, 1 / (1 + z), z / (1 + z))
        ctx.save_for_backward(y)
        return y.reshape(shape)

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * (y * (1 - y)).reshape(grad_output.shape)
"""),
    Mistake("MySigmoid", "saves y, returns y.view_as(x)",
            "saved an alias of its output y, not y itself",
            """
class MySigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        z = torch.exp(-x.abs())
        y = torch.where(x >= 0, 1 / (1 + z), z / (1 + z))
        ctx.save_for_backward(y)
        return y.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * y * (1 - y)
"""),
    Mistake("MySigmoid", "saves y.detach() past 65536 entries, y below",
            "saved an alias of its output y, not y itself",
            """
class MySigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        z = torch.exp(-x.abs())
        y = torch.where(x >= 0, 1 / (1 + z), z / (1 + z))
        ctx.save_for_backward(y.detach() if x.numel() > 65536 else y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * y * (1 - y)
"""),
    Mistake("MyReLU", "saves y.detach(), masks with torch.where(y > 0)",
            "MyReLU saved an alias of its output y, not y itself",
            """
class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x.clamp(min=0)
        ctx.save_for_backward(y.detach())
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return torch.where(y > 0, grad_output, 0)
"""),
]


# a review (score 8, wrong_more.py): a copy of y saved, by clone, .contiguous() of a strided y,
# y computed again or y in float64 for a float32 x: the first line names the copy it saw; and
# the derivative saved instead of y, named as the derivative
_FLOAT64_Y = ("        x64 = x.double()\n        z = torch.exp(-x64.abs())\n"
              "        y = torch.where(x64 >= 0, 1 / (1 + z), z / (1 + z))\n"
              "        ctx.save_for_backward(y)\n        return y.to(x.dtype)")
MISTAKES += [
    Mistake("MySigmoid", "saves y.clone()", "MySigmoid saved a copy of its output y",
            _sigmoid(STABLE + "        ctx.save_for_backward(y.clone())\n        return y",
                     FROM_Y)),
    Mistake("MySigmoid", "saves y.contiguous(), a copy for a strided x",
            "MySigmoid saved a copy of its output y",
            _sigmoid(STABLE + "        ctx.save_for_backward(y.contiguous())\n        return y",
                     FROM_Y)),
    Mistake("MySigmoid", "saves y computed again from x",
            "MySigmoid saved a copy of its output y",
            _sigmoid(STABLE + "        ctx.save_for_backward(torch.where(x >= 0, 1 / (1 + z), "
                     "z / (1 + z)))\n        return y", FROM_Y)),
    Mistake("MySigmoid", "computes y in float64, saves it for a float32 x",
            "MySigmoid saved a float64 copy of its output y", _sigmoid(
                _FLOAT64_Y, "        y, = ctx.saved_tensors\n"
                "        return (grad_output * y * (1 - y)).to(grad_output.dtype)")),
    Mistake("MySigmoid", "saves the derivative y * (1 - y) instead of y",
            "MySigmoid saved the derivative y * (1 - y)", _sigmoid(
                STABLE + "        ctx.save_for_backward(y * (1 - y))\n        return y",
                "        d, = ctx.saved_tensors\n        return grad_output * d")),
    Mistake("Softplus", "saves y.clone()", "Softplus saved a copy of its output y",
            _softplus(SOFTPLUS_STABLE + "        ctx.save_for_backward(y.clone())\n"
                      "        return y")),
    Mistake("Softplus", "computes y in float64, saves it for a float32 x",
            "Softplus saved a float64 copy of its output y", _softplus(
                "        x64 = x.double()\n"
                "        y = x64.clamp(min=0) + torch.log1p(torch.exp(-x64.abs()))\n"
                "        ctx.save_for_backward(y)\n        return y.to(x.dtype)",
                "        y, = ctx.saved_tensors\n"
                "        return (grad_output * -torch.expm1(-y)).to(grad_output.dtype)")),
    Mistake("Softplus", "saves sigmoid(x), the derivative, instead of y",
            "Softplus saved the derivative sigmoid(x)", _softplus(
                SOFTPLUS_STABLE + "        z = torch.exp(-x.abs())\n"
                "        ctx.save_for_backward(torch.where(x >= 0, 1 / (1 + z), z / (1 + z)))\n"
                "        return y", "        s, = ctx.saved_tensors\n        return grad_output * s")),
]
