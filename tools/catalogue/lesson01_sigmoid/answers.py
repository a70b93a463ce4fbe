"""Lesson 01: answers built from their forward and backward bodies, for MySigmoid, MyReLU,
ScaledSigmoid and Softplus, and the bodies and hints several answers share."""


def _function(name: str, forward: str, backward: str, args: str = "x") -> str:
    return f"""
class {name}(torch.autograd.Function):
    @staticmethod
    def forward(ctx, {args}):
{forward}

    @staticmethod
    def backward(ctx, grad_output):
{backward}
"""


def _sigmoid(forward: str, backward: str) -> str:
    return _function("MySigmoid", forward, backward)


def _relu(forward: str, backward: str) -> str:
    return _function("MyReLU", forward, backward)


def _scaled(forward: str, backward: str) -> str:
    return _function("ScaledSigmoid", forward, backward, "x, scale")


STABLE = ("        z = torch.exp(-x.abs())\n"
          "        y = torch.where(x >= 0, 1 / (1 + z), z / (1 + z))\n")
SAVE_Y = "        ctx.save_for_backward(y)\n        return y"
FROM_Y = "        y, = ctx.saved_tensors\n        return grad_output * y * (1 - y)"
RELU_FORWARD = "        ctx.save_for_backward(x)\n        return x.clamp(min=0)"
RELU_READ = "        x, = ctx.saved_tensors\n"
SCALED_FORWARD = ("        ctx.save_for_backward(x)\n        ctx.scale = scale\n"
                  "        return scale * torch.sigmoid(x)")
SCALED_READ = "        x, = ctx.saved_tensors\n        s = torch.sigmoid(x)\n"


def _softplus(forward: str, backward: str = "        y, = ctx.saved_tensors\n"
              "        return grad_output * -torch.expm1(-y)") -> str:
    return _function("Softplus", forward, backward)


SOFTPLUS_STABLE = "        y = x.clamp(min=0) + torch.log1p(torch.exp(-x.abs()))\n"

# y kept in a module-level list instead of ctx: one call at a time cannot tell, but nothing
# was saved with ctx.save_for_backward
_GLOBAL = "_last = []\n\n"

# the dtype check's hint for a float32 output, after the exercise's name
FLOAT32_OUTPUT = ("'s output has dtype torch.float32 but should have dtype torch.float64: keep "
                  "the input's dtype")
