"""Lesson 00's dtype and layout slips, which only the later checks separate: WeightedSum's
weights rounded through a float32 tensor (right to float32's precision) or kept on ctx as
tensors, and backwards that need a contiguous grad_output."""

from .. import Mistake, Unusual
from .answers import READ_UV, READ_X, SAVE_X, _outer, _square, _weighted

MISTAKES = [
    # torch.tensor(w) is float32: a float64 result right to float32's precision only (the
    # battery's weights 0.5, -2.0, 1.0, 0.0 and 3.0 are float32 numbers, which hide it)
    Mistake("WeightedSum", "torch.tensor(ctx.w1) in backward, a float32 constant",
            "grad_x1 is what w1 = 0.10000000149011612 would give (0.1 rounded to float32)",
            _weighted("        w1, w2 = torch.tensor(ctx.w1), torch.tensor(ctx.w2)\n"
                      "        return grad_output * w1, grad_output * w2, None, None")),
    Mistake("WeightedSum", "torch.tensor(w1) in forward, a float32 constant",
            "WeightedSum's output is what w1 = 0.10000000149011612 and w2 = "
            "-0.3333333432674408 would give",
            _weighted("        return grad_output * ctx.w1, grad_output * ctx.w2, None, None",
                      "        ctx.w1, ctx.w2 = w1, w2\n"
                      "        return torch.tensor(w1) * x1 + torch.tensor(w2) * x2")),
    # a review's answer (lesson 00, score 8, W12): "every digit of each weight" broken by
    # round(w, 12), off by up to 4e-12 of the weight, inside the old 1e-9 tolerance
    Mistake("WeightedSum", "weights rounded to 12 decimals",
            "with w1=0.1234567890123456, w2=-0.3333333333333333 in float64",
            _weighted("        n = ctx.needs_input_grad\n"
                      "        return (grad_output * ctx.w1 if n[0] else None,\n"
                      "                grad_output * ctx.w2 if n[1] else None, None, None)",
                      "        w1, w2 = round(w1, 12), round(w2, 12)\n"
                      "        ctx.w1, ctx.w2 = w1, w2\n"
                      "        return w1 * x1 + w2 * x2")),
    # the weights as 0-d tensors on ctx: told to keep the floats, not to save_for_backward
    # them (which would keep the float32 tensors the probe above then finds)
    Mistake("WeightedSum", "weights made into tensors on ctx",
            "WeightedSum keeps w1 on ctx as a 0-d torch.float32 tensor, ctx.w1: w1 is a Python "
            "float: keep it as one",
            _weighted("        return grad_output * ctx.w1, grad_output * ctx.w2, None, None",
                      "        ctx.w1, ctx.w2 = torch.tensor(w1), torch.tensor(w2)\n"
                      "        return w1 * x1 + w2 * x2")),
    # .view needs strides it can flatten: a transposed grad_output has none
    Mistake("Square", "grad_output flattened with .view(-1)",
            "(with a transposed grad_output of shape (3, 4), strides (1, 3))",
            _square(SAVE_X, READ_X + "        flat = grad_output.view(-1) * 2 * x.reshape(-1)\n"
                    "        return flat.reshape(x.shape)")),
    Mistake("Outer", "grad_output flattened with .view(-1)",
            "(with a transposed grad_output of shape (4, 3), strides (1, 4))",
            _outer(READ_UV + "        flat = grad_output.view(-1)\n"
                   "        need_u, need_v = ctx.needs_input_grad\n"
                   "        grad_u = grad_v = None\n"
                   "        if need_u:\n"
                   "            grad_u = (flat * v.repeat(len(u))).view(len(u), -1).sum(1)\n"
                   "        if need_v:\n"
                   "            grad_v = (flat * u.repeat_interleave(len(v))).view(len(u), -1).sum(0)\n"
                   "        return grad_u, grad_v")),
]

# found by reviewers: dtype slips (a narrower copy saved, narrower arithmetic, above some size
# too), layouts .view cannot take, and correct answers with a size switch or a wider sum

UNUSUAL = [
    Unusual("Square", "a contiguous copy of x saved, flattened with view",
            """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        flat = x.contiguous().view(-1)
        ctx.save_for_backward(flat)
        return (flat * flat).view(x.shape)

    @staticmethod
    def backward(ctx, grad_output):
        flat, = ctx.saved_tensors
        return (2 * flat * grad_output.reshape(-1)).view(grad_output.shape)
"""),
    Unusual("Square", "in place on a clone of grad_output above 4096 entries",
            """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        if x.numel() > 4096:
            g = grad_output.clone()
            g.mul_(x).mul_(2)
            return g
        return 2 * x * grad_output
"""),
    Unusual("WeightedSum", "float32 inputs weighted and summed in float64, cast back once",
            """
class WeightedSum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x1, x2, w1, w2):
        ctx.w1, ctx.w2 = w1, w2
        return (w1 * x1.double() + w2 * x2.double()).to(x1.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        need_x1, need_x2 = ctx.needs_input_grad[:2]
        return (grad_output * ctx.w1 if need_x1 else None,
                grad_output * ctx.w2 if need_x2 else None, None, None)
"""),
]

MISTAKES += [
    Mistake("Square", "a float32 copy of x saved, half the bytes",
            "Square saved x as a float32 copy",
            """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x.float())
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * 2 * x
"""),
    Mistake("Square", "backward's arithmetic in float32",
            "every value of grad_x is exactly a float32 number",
            """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return 2 * x.float() * grad_output.float()
"""),
    Mistake("Square", "float32 arithmetic when x has 10,000 entries or more",
            "above some size",
            """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        if x.numel() >= 10_000:
            return (grad_output.float() * 2 * x.float()).to(x.dtype)
        return grad_output * 2 * x
"""),
    Mistake("Square", "float16 arithmetic for float32 x of 10,000 entries or more",
            "at x of shape (256, 512) (float32)",
            """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        if x.numel() >= 10_000 and x.dtype == torch.float32:
            return (grad_output.half() * 2 * x.half()).float()
        return grad_output * 2 * x
"""),
    Mistake("WeightedSum", "weights through a bfloat16 tensor in backward",
            "rounded to bfloat16",
            """
class WeightedSum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x1, x2, w1, w2):
        ctx.w1, ctx.w2 = w1, w2
        return w1 * x1 + w2 * x2

    @staticmethod
    def backward(ctx, grad_output):
        w = torch.tensor([ctx.w1, ctx.w2], dtype=torch.bfloat16).to(grad_output.dtype)
        return grad_output * w[0], grad_output * w[1], None, None
"""),
    Mistake("WeightedSum", "float32 arithmetic in backward, tiny weights graded after it",
            "every value of grad_x1 is exactly a float32 number",
            """
class WeightedSum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x1, x2, w1, w2):
        ctx.w1, ctx.w2 = w1, w2
        return w1 * x1 + w2 * x2

    @staticmethod
    def backward(ctx, grad_output):
        g = grad_output.float()
        need_x1, need_x2 = ctx.needs_input_grad[:2]
        return g * ctx.w1 if need_x1 else None, g * ctx.w2 if need_x2 else None, None, None
"""),
    Mistake("Outer", "float64 copies of u and v saved",
            "Outer saved u as a float64 copy",
            """
class Outer(torch.autograd.Function):
    @staticmethod
    def forward(ctx, u, v):
        u64, v64 = u.double(), v.double()
        ctx.save_for_backward(u64, v64)
        return (u64[:, None] * v64[None, :]).to(u.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        u, v = ctx.saved_tensors
        g = grad_output.double()
        return (g @ v if ctx.needs_input_grad[0] else None,
                u @ g if ctx.needs_input_grad[1] else None)
"""),
    Mistake("Outer", "grad_v rounded through float32 when m > 64",
            "above some size",
            """
class Outer(torch.autograd.Function):
    @staticmethod
    def forward(ctx, u, v):
        ctx.save_for_backward(u, v)
        return torch.outer(u, v)

    @staticmethod
    def backward(ctx, grad_output):
        u, v = ctx.saved_tensors
        need_u, need_v = ctx.needs_input_grad[:2]
        return (grad_output @ v if need_u else None,
                (u @ grad_output).float().to(u.dtype) if u.numel() > 64 and need_v else u @ grad_output if need_v else None)
"""),
    Mistake("Square", "x flattened with .view(-1) in forward",
            "view size is not compatible",
            """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        flat = x.view(-1)
        return (flat * flat).view(x.shape)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * 2 * x
"""),
    Mistake("WeightedSum", "x1 and x2 flattened with .view(-1) in forward",
            "view size is not compatible",
            """
class WeightedSum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x1, x2, w1, w2):
        ctx.w1, ctx.w2 = w1, w2
        return (w1 * x1.view(-1) + w2 * x2.view(-1)).view(x1.shape)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.w1, grad_output * ctx.w2, None, None
"""),
    Mistake("Outer", "u spread down the rows with as_strided, stride 1",
            "with column slice inputs",
            """
class Outer(torch.autograd.Function):
    @staticmethod
    def forward(ctx, u, v):
        ctx.save_for_backward(u, v)
        return torch.as_strided(u, (len(u), len(v)), (1, 0)) * v

    @staticmethod
    def backward(ctx, grad_output):
        u, v = ctx.saved_tensors
        need_u, need_v = ctx.needs_input_grad
        return (grad_output @ v if need_u else None,
                u @ grad_output if need_v else None)
"""),
]
