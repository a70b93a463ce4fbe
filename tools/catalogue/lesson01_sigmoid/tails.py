"""Lesson 01: accuracy in the tails, which the lesson teaches: saturation shortcuts (y = 1,
or a gradient of 0, past a threshold), a series used on a stretch of the tail only, a
sigmoid cut to 0, a difference that cancels, and ScaledSigmoid's y * y, which leaves
float64's range at huge and tiny scales."""

from .. import Mistake

MISTAKES = [
    Mistake("MySigmoid", "y = 1 exactly past x = 5, a saturation shortcut",
            "it is exactly 1 from x = 5.01 on",
            """
class MySigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        z = torch.exp(-x.abs())
        y = torch.where(x >= 0, 1 / (1 + z), z / (1 + z))
        y = torch.where(x > 5, torch.ones_like(y), y)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * y * (1 - y)
"""),
    Mistake("MySigmoid", "y = 1 exactly past x = 30",
            "it is exactly 1 from x = 30.01 on",
            """
class MySigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        z = torch.exp(-x.abs())
        y = torch.where(x >= 0, 1 / (1 + z), z / (1 + z))
        y = torch.where(x > 30, torch.ones_like(y), y)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * y * (1 - y)
"""),
    Mistake("MySigmoid", "backward 0 past x = 20, y taken as 1 there",
            "your backward treat sigma(x) as saturated",
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
        return torch.where(y > 1 - 2e-9, 0.0, grad_output * y * (1 - y))
"""),
    # a fresh review (score 8): the left tail flushed to 0 below a threshold, once reported at
    # x = -708 as a step that rounds to 0; the threshold is named where it starts
    Mistake("MySigmoid", "y = 0 exactly below x = -30",
            "it is exactly 0 from x = -30.01 down, while sigma(x) stays above 0",
            """
class MySigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        z = torch.exp(-x.abs())
        y = torch.where(x >= 0, 1 / (1 + z), z / (1 + z))
        y = torch.where(x < -30, torch.zeros_like(y), y)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * y * (1 - y)
"""),
    Mistake("MySigmoid", "backward 0 below x = -30, where y is tiny",
            "your backward treat sigma(x) as saturated",
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
        return torch.where(y < 1e-13, 0.0, grad_output * y * (1 - y))
"""),
    Mistake("MySigmoid", "a series about x = -150 on (-200, -101)",
            "a formula used on a stretch of the tail only",
            """
class MySigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        z = torch.exp(-x.abs())
        y = torch.where(x >= 0, 1 / (1 + z), z / (1 + z))
        mid = (x > -200) & (x < -101)
        u = x + 150
        y = torch.where(mid, math.exp(-150.0) * (1 + u + u * u / 2), y)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * y * (1 - y)
"""),
    Mistake("ScaledSigmoid", "backward treats sigma as 1 past x = 6",
            "your backward treat sigma(x) as saturated",
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
        s = torch.where(x > 6, 1.0, torch.sigmoid(x))
        return grad_output * ctx.scale * s * (1 - s), None
"""),
    Mistake("ScaledSigmoid", "output scale exactly past x = 10",
            "your forward treat sigma(x) as saturated",
            """
class ScaledSigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        ctx.scale = scale
        s = torch.where(x > 10, 1.0, torch.sigmoid(x))
        return scale * s

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        s = torch.sigmoid(x)
        return grad_output * ctx.scale * s * (1 - s), None
"""),
    Mistake("ScaledSigmoid", "backward 1/4 - (sigma - 1/2)^2: cancels in the tail",
            "cancellation, not a cutoff",
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
        return grad_output * ctx.scale * (0.25 - (s - 0.5) ** 2), None
"""),
    Mistake("ScaledSigmoid", "sigma cut to 0 below x = -41, value and gradient",
            "a cutoff, not lost digits",
            """
class ScaledSigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        ctx.scale = scale
        s = torch.where(x < -41, 0.0, torch.sigmoid(x))
        return scale * s

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        s = torch.where(x < -41, 0.0, torch.sigmoid(x))
        return grad_output * ctx.scale * s * (1 - s), None
"""),
    Mistake("ScaledSigmoid", "keeps y, backward y - y * y / scale: y * y about scale^2",
            "backward multiplies two factors of the scale's size (such as y * y)",
            """
class ScaledSigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        y = scale * torch.sigmoid(x)
        ctx.save_for_backward(y)
        ctx.scale = scale
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        if ctx.scale == 0:
            return torch.zeros_like(grad_output), None
        return grad_output * (y - y * y / ctx.scale), None
"""),
]
