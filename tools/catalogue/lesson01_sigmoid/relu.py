"""Lesson 01: answers with known verdicts for MyReLU."""

from .. import Mistake, Unusual
from .answers import RELU_FORWARD, RELU_READ, _relu

UNUSUAL = [
    # "saves the output, masks with grad_output * (y > 0)": among the answers found by reviewers,
    # at the end of this module
    Unusual("MyReLU", "saves a boolean mask, torch.where backward",
            _relu("        mask = x > 0\n        ctx.save_for_backward(mask)\n"
                  "        return torch.where(mask, x, torch.zeros_like(x))",
                  "        mask, = ctx.saved_tensors\n"
                  "        return torch.where(mask, grad_output, torch.zeros_like(grad_output))")),
    Unusual("MyReLU", "F.threshold forward, torch.where(y != 0) backward",
            _relu("        y = F.threshold(x, 0.0, 0.0)\n        ctx.save_for_backward(y)\n        return y",
                  "        y, = ctx.saved_tensors\n        return torch.where(y != 0, grad_output, 0.0)")),
    # a trailing None past the inputs: PyTorch accepts extra gradients when they are all None
    Unusual("MyReLU", "a bool mask, backward returns (gradient, None) as Select's pattern",
            _relu("        mask = x > 0\n        ctx.save_for_backward(mask)\n        return x.clamp(min=0)",
                  "        mask, = ctx.saved_tensors\n"
                  "        return torch.where(mask, grad_output, 0), None")),
]

MISTAKES = [
    # (x + |x|) / 2 is also nan at x = -inf, which the contract does not name; but x + |x|
    # overflows for x above half the dtype's largest number, where x is finite
    Mistake("MyReLU", "(x + |x|) / 2 forward, sign(y) backward",
            "MyReLU's output at x = 65504 (float16) is inf, where torch.relu's is 65504: x + |x| "
            "is twice x",
            _relu("        y = (x + x.abs()) / 2\n        ctx.save_for_backward(y)\n        return y",
                  "        y, = ctx.saved_tensors\n        return grad_output * torch.sign(y)")),
    # a fresh review (score 7): the same identity beside a bool mask
    Mistake("MyReLU", "(x + |x|) / 2 forward, bool mask saved",
            "(x + |x|) / 2 overflows to inf",
            _relu("        positive = x > 0\n        ctx.save_for_backward(positive)\n"
                  "        return (x + x.abs()) / 2",
                  "        positive, = ctx.saved_tensors\n"
                  "        return torch.where(positive, grad_output, 0)")),
    # a fresh review (score 7): saves y and masks with y >= 0, true for every y = max(x, 0)
    Mistake("MyReLU", "saves y, masks with y >= 0: every entry passes",
            "MyReLU's gradient is grad_output itself at x < 0 too",
            _relu("        y = x.clamp(min=0)\n        ctx.save_for_backward(y)\n        return y",
                  "        y, = ctx.saved_tensors\n"
                  "        return torch.where(y >= 0, grad_output, 0)")),
    # a fresh review (score 7): torch.zeros(x.shape) has the default dtype, float32, so a
    # float16 x gets a float32 output (torch.relu keeps x's dtype); the contract names float16
    Mistake("MyReLU", "zeros of the default dtype: float32 for float16 x",
            "MyReLU's output has dtype torch.float32 for torch.float16 inputs",
            _relu("        mask = x > 0\n        ctx.save_for_backward(mask)\n"
                  "        return torch.where(mask, x, torch.zeros(x.shape))",
                  "        mask, = ctx.saved_tensors\n"
                  "        return torch.where(mask, grad_output, torch.zeros(grad_output.shape))")),
    # a fresh review (score 7): a flat mask and grad_output.view(-1), right for every
    # contiguous grad_output, raises for the transposed one y.t() downstream hands backward
    Mistake("MyReLU", "flat mask, grad_output.view(-1) in backward",
            "MyReLU.backward assumes a contiguous grad_output: it raised when grad_output was "
            "transposed",
            _relu("        mask = (x > 0).reshape(-1)\n        ctx.save_for_backward(mask)\n"
                  "        ctx.shape = x.shape\n        return x.clamp(min=0)",
                  "        mask, = ctx.saved_tensors\n"
                  "        return torch.where(mask, grad_output.view(-1), 0).view(ctx.shape)")),
    Mistake("MyReLU", "masks grad_output in place", "backward modified grad_output in place: "
            "compute a new tensor instead",
            _relu(RELU_FORWARD, RELU_READ + "        grad_output[x < 0] = 0\n"
                  "        return grad_output"), named=True, nbgrader=True),
    Mistake("MyReLU", "x.clamp_ in forward", "MyReLU.forward modified its input x in place: "
            "inputs must stay untouched",
            _relu("        mask = x > 0\n        ctx.save_for_backward(mask)\n"
                  "        return x.clamp_(min=0).clone()",
                  "        mask, = ctx.saved_tensors\n        return grad_output * mask"),
            named=True),
    Mistake("MyReLU", "returns x.clamp_ (the input, overwritten)",
            "MyReLU.forward modified its input x in place: inputs must stay untouched",
            _relu("        ctx.save_for_backward(x)\n        return x.clamp_(min=0)",
                  RELU_READ + "        return grad_output * (x > 0)")),
    Mistake("MyReLU", "overwrites the saved input in backward",
            "MyReLU.backward modified its input x in place: inputs must stay untouched",
            _relu(RELU_FORWARD, RELU_READ + "        return grad_output * x.clamp_(min=0)."
                  "sign_()")),
    Mistake("MyReLU", "mask kept as ctx.mask", "MyReLU stores a tensor as ctx.mask: use "
            "ctx.save_for_backward",
            _relu("        ctx.mask = x > 0\n        return x.clamp(min=0)",
                  "        return grad_output * ctx.mask"), named=True),
    Mistake("MyReLU", "mask x >= 0", "MyReLU's gradient at x = 0 is 1.0, where the contract "
            "(and torch.relu) gives 0: x = 0 is on the side the mask passes grad_output through",
            _relu("        mask = x >= 0\n        ctx.save_for_backward(mask)\n"
                  "        return x.clamp(min=0)",
                  "        mask, = ctx.saved_tensors\n        return grad_output * mask"),
            named=True),
    # PyTorch's "Learning PyTorch with Examples" tutorial: grad_input[input < 0] = 0, which
    # passes grad_output at x == 0, where torch.relu (and this contract) gives 0
    Mistake("MyReLU", "the PyTorch tutorial's MyReLU (input < 0 zeroed)",
            "MyReLU's gradient at x = 0 is 1.0",
            _relu(RELU_FORWARD, RELU_READ + "        grad_input = grad_output.clone()\n"
                  "        grad_input[x < 0] = 0\n        return grad_input")),
    Mistake("MyReLU", "leaky threshold x > -10", "your gradient for x is wrong: largest error",
            _relu(RELU_FORWARD, RELU_READ + "        return grad_output * (x > -10)")),
    Mistake("MyReLU", "gradient y / x (0 / 0 at x = 0)",
            "MyReLU's gradient at x = 0 is nan (at -0.0: nan), where the contract (and torch.relu) "
            "gives 0",
            _relu("        y = x.clamp(min=0)\n        ctx.save_for_backward(x, y)\n        return y",
                  "        x, y = ctx.saved_tensors\n        return grad_output * (y / x)")),
    Mistake("MyReLU", "mask kept on the class", "MyReLU.forward sets MyReLU.mask: a class "
            "attribute is shared by every call",
            _relu("        MyReLU.mask = x > 0\n        return x.clamp(min=0)",
                  "        return grad_output * MyReLU.mask"), named=True),
    # (a fresh review's x > 1e-12 is the same mistake)
    Mistake("MyReLU", "mask with a threshold, x > 1e-6",
            "MyReLU's gradient at x = 1e-300 is 0, where torch.relu's is grad_output",
            _relu("        mask = x > 1e-6\n        ctx.save_for_backward(mask)\n"
                  "        return x.clamp(min=0)",
                  "        mask, = ctx.saved_tensors\n        return grad_output * mask")),
    # the lesson's worked example: torch.maximum splits a tie, half to each input
    Mistake("MyReLU", "half the gradient at 0, torch.maximum's tie convention",
            "MyReLU's gradient at x = 0 is 0.5, where the contract (and torch.relu) gives 0",
            _relu(RELU_FORWARD, RELU_READ + "        return grad_output * ((x > 0) + 0.5 * (x == 0))"),
            named=True),
    Mistake("MyReLU", "masked_fill_ on grad_output", "backward modified grad_output in place",
            _relu("        mask = x > 0\n        ctx.save_for_backward(mask)\n        return x.clamp(min=0)",
                  "        mask, = ctx.saved_tensors\n        return grad_output.masked_fill_(~mask, 0)"),
            named=True),
    Mistake("MyReLU", "ignores grad_output", "MyReLU.backward ignores grad_output",
            _relu("        mask = x > 0\n        ctx.save_for_backward(mask)\n"
                  "        return x.clamp(min=0)",
                  "        mask, = ctx.saved_tensors\n        return mask.to(grad_output.dtype)")),
    # the mask taken in float32: 1e-300 rounds to 0 there, so its gradient is lost
    Mistake("MyReLU", "mask on x.float()", "your gradient is the mask x > 0 taken in float32",
            _relu("        mask = x.float() > 0\n        ctx.save_for_backward(mask)\n"
                  "        return x.clamp(min=0)",
                  "        mask, = ctx.saved_tensors\n        return grad_output * mask")),
    # the contract bounds what forward saves (issue 45: nothing checked it)
    Mistake("MyReLU", "masked_fill on a fresh tensor, F.relu forward, saves x",
            "MyReLU saved its input x (8 bytes an element, new wherever nothing else keeps x",
            _relu("        ctx.save_for_backward(x)\n        return F.relu(x)",
                  RELU_READ + "        return grad_output.masked_fill(x <= 0, 0)")),
    Mistake("MyReLU", "writes into grad_output.clone(), saves x",
            "MyReLU saved its input x (8 bytes an element, new wherever nothing else keeps x",
            _relu(RELU_FORWARD, RELU_READ + "        grad = grad_output.clone()\n"
                  "        grad[x <= 0] = 0\n        return grad")),
    # mutants (issue 45): a float mask, a copy of the output
    Mistake("MyReLU", "the mask saved as float",
            "MyReLU saved a float32 tensor of its own (4 bytes an element, all of it new)",
            _relu("        mask = x > 0\n        ctx.save_for_backward(mask.float())\n"
                  "        return x.clamp(min=0)",
                  "        mask, = ctx.saved_tensors\n        return grad_output * mask")),
    Mistake("MyReLU", "saves a clone of the output",
            "MyReLU saved a copy of its output y (y's values in new memory, 8 bytes an element",
            _relu("        y = x.clamp(min=0)\n        ctx.save_for_backward(y.clone())\n"
                  "        return y",
                  "        y, = ctx.saved_tensors\n        return grad_output * (y > 0)")),
]

# found by reviewers: masks made and saved otherwise, the gradient as a product with the mask,
# and thresholds above 0

UNUSUAL += [
    Unusual("MyReLU", "saves y below 4096 entries, a bool mask above; maximum and masked_fill",
            """
class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.maximum(x, torch.zeros((), dtype=x.dtype, device=x.device))
        ctx.save_for_backward(y if x.numel() < 4096 else x > 0)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        s, = ctx.saved_tensors
        m = s if s.dtype == torch.bool else s > 0
        return grad_output.masked_fill(~m, 0)
"""),
    Unusual("MyReLU", "where(x > 0, x, 0.) forward saving y, masked_fill(y == 0) backward",
            """
class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.where(x > 0, x, 0.0)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output.masked_fill(y == 0, 0)
"""),
    Unusual("MyReLU", "bool mask saved only when ctx.needs_input_grad[0]",
            """
class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        m = x > 0
        if ctx.needs_input_grad[0]:
            ctx.save_for_backward(m)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        m, = ctx.saved_tensors
        return torch.where(m, grad_output, 0)
"""),
    Unusual("MyReLU", "forward x * m (-0.0 where x < 0), torch.where backward",
            """
class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        m = x > 0
        ctx.save_for_backward(m)
        return x * m

    @staticmethod
    def backward(ctx, grad_output):
        m, = ctx.saved_tensors
        return torch.where(m, grad_output, 0)
"""),
    # a product grad_output * mask: right for every finite grad_output, nan (inf * 0) only for a
    # grad_output of inf or nan where the ReLU blocks, which lesson 01's domain no longer holds
    # (issue 69): mistakes until then, correct now (a deliberate verdict change)
    Unusual("MyReLU", "bool mask, backward grad_output * mask",
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
        return grad_output * m
"""),
    Unusual("MyReLU", "saves the output, masks with grad_output * (y > 0)",
            """
class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x.clamp(min=0)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * (y > 0)
"""),
    Unusual("MyReLU", "torch.where, but grad_output * mask in float16",
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
        if grad_output.dtype == torch.float16:
            return grad_output * m
        return torch.where(m, grad_output, 0)
"""),
]

MISTAKES += [
    Mistake("MyReLU", "the mask above 4096 entries is x > 1e-6 (mutants' move_threshold)",
            "the mask's threshold lies above 0",
            """
class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.maximum(x, torch.zeros((), dtype=x.dtype, device=x.device))
        ctx.save_for_backward(y if x.numel() < 4096 else x > 1e-06)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        s, = ctx.saved_tensors
        m = s if s.dtype == torch.bool else s > 0
        return grad_output.masked_fill(~m, 0)
"""),
    Mistake("MyReLU", "mask x > finfo(x.dtype).tiny: positive subnormals get gradient 0",
            "the mask's threshold lies above 0",
            """
class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        m = x > torch.finfo(x.dtype).tiny
        ctx.save_for_backward(m)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        m, = ctx.saved_tensors
        return torch.where(m, grad_output, 0)
"""),
]

# a fresh review (score 8): both passed every check before the contract's rules 1 and 3 were
# graded generically; the Jacobian's out-of-memory error at 2^17 entries was passed over
MISTAKES += [
    Mistake("MyReLU", "backward through the Jacobian built as a diagonal matrix",
            "MyReLU.backward ran out of memory with x of shape (256, 512)",
            _relu("        m = x > 0\n        ctx.save_for_backward(m)\n"
                  "        return x.clamp(min=0)",
                  "        m, = ctx.saved_tensors\n"
                  "        J = torch.diag(m.reshape(-1).to(grad_output.dtype))\n"
                  "        return (J @ grad_output.reshape(-1)).reshape(grad_output.shape)")),
    Mistake("MyReLU", "a 'nothing to clip' fast path on x.min() >= 0: raises on an empty x",
            '(tried an empty batch: x of shape (0, 4))',
            _relu("        m = x > 0\n        ctx.save_for_backward(m)\n"
                  "        if x.min() >= 0:\n            return x.clone()\n"
                  "        return x.clamp(min=0)",
                  "        m, = ctx.saved_tensors\n"
                  "        return torch.where(m, grad_output, 0)")),
]

# a fresh review (score 8): the contract bounds what forward saves (at most one byte an element
# of new memory) and no longer names torch.bool, so a uint8 mask (1 byte an element) and bits
# packed eight to a byte (1/8) meet it: mistakes until then ("a mask, in the contract, is
# torch.bool"), correct now (a deliberate verdict change)
UNUSUAL += [
    Unusual("MyReLU", "a uint8 mask from torch.heaviside",
            _relu("        mask = torch.heaviside(x, torch.zeros((), dtype=x.dtype)).to(torch.uint8)\n"
                  "        ctx.save_for_backward(mask)\n        return x * mask",
                  "        mask, = ctx.saved_tensors\n        return grad_output * mask")),
    Unusual("MyReLU", "the mask packed eight to a byte (1/8 byte an element)",
            """
class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        bits = (x > 0).reshape(-1)
        n = bits.numel()
        bits = torch.cat([bits, bits.new_zeros((-n) % 8)]).reshape(-1, 8).to(torch.uint8)
        weights = torch.tensor([1, 2, 4, 8, 16, 32, 64, 128], dtype=torch.uint8,
                               device=x.device)
        packed = (bits * weights).sum(1, dtype=torch.uint8)
        ctx.save_for_backward(packed)
        ctx.shape = x.shape
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        packed, = ctx.saved_tensors
        weights = torch.tensor([1, 2, 4, 8, 16, 32, 64, 128], dtype=torch.uint8,
                               device=grad_output.device)
        bits = (packed.unsqueeze(1) & weights) != 0
        mask = bits.reshape(-1)[:grad_output.numel()].reshape(ctx.shape)
        return torch.where(mask, grad_output, 0)
"""),
]

# a fresh review (score 8): saves y and turns it into its mask in place in backward; it was
# told about thresholds (a probe read the output after backward), now named as a write into a
# saved tensor (rule 5)
MISTAKES += [
    Mistake("MyReLU", "saves y, backward y.sign_() in the saved output",
            "MyReLU.backward changes a tensor that forward saved, in place",
            _relu("        y = x.clamp(min=0)\n        ctx.save_for_backward(y)\n        return y",
                  "        y, = ctx.saved_tensors\n        return grad_output * y.sign_()")),
    Mistake("MyReLU", "a packed mask beside a copy of the output (two tensors saved)",
            "one bit (1/8 byte) an element",
            """
class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        bits = (x > 0).reshape(-1)
        n = bits.numel()
        bits = torch.cat([bits, bits.new_zeros((-n) % 8)]).reshape(-1, 8).to(torch.uint8)
        weights = torch.tensor([1, 2, 4, 8, 16, 32, 64, 128], dtype=torch.uint8,
                               device=x.device)
        y = x.clamp(min=0)
        ctx.save_for_backward((bits * weights).sum(1, dtype=torch.uint8), y.clone())
        return y

    @staticmethod
    def backward(ctx, grad_output):
        packed, y = ctx.saved_tensors
        return torch.where(y > 0, grad_output, 0)
"""),
]
