"""Lesson 01: answers with known verdicts for MySigmoid, among them a float32 output (which the
battery's dtype check names: no probe may crash comparing it with float64) and the output kept
on the class, where one call at a time cannot tell it from ctx (issue 37)."""

from .. import Mistake, Unusual
from .answers import _GLOBAL, FLOAT32_OUTPUT, FROM_Y, SAVE_Y, STABLE, _sigmoid

SIGMOID_ON_THE_CLASS = """
class MySigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        z = torch.exp(-x.abs())
        y = torch.where(x >= 0, 1 / (1 + z), z / (1 + z))
        MySigmoid.last_output = y
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y = MySigmoid.last_output
        return grad_output * y * (1 - y)
"""

UNUSUAL = [
    # (The tanh form (1 + tanh(x / 2)) / 2 is not here: it gives 0 for sigma(-40) = 4.2e-18.)
    Unusual("MySigmoid", "1 / (1 + exp(-x)) inside a Function: 1 / inf = 0, never nan",
            _sigmoid("        y = torch.reciprocal(1 + torch.exp(-x))\n"
                     "        ctx.save_for_backward(y)\n        return y", FROM_Y)),
    Unusual("MySigmoid", "torch.where on the sign with expm1-free branches, y - y * y backward",
            _sigmoid("        e = torch.exp(torch.where(x >= 0, -x, x))\n"
                     "        y = torch.where(x >= 0, 1 / (1 + e), e / (1 + e))\n" + SAVE_Y,
                     "        y, = ctx.saved_tensors\n        return grad_output * (y - y * y)")),
    Unusual("MySigmoid", "needs_input_grad checked, addcmul backward",
            _sigmoid(STABLE + SAVE_Y,
                     "        if not ctx.needs_input_grad[0]:\n            return None\n"
                     "        y, = ctx.saved_tensors\n"
                     "        return torch.addcmul(torch.zeros_like(y), grad_output, y * (1 - y))")),
    # (PyTorch's own sigmoid in forward, torch.sigmoid or F.logsigmoid: the mistakes at the end)
    Unusual("MySigmoid", "torch.where over both textbook formulas (inf and nan in the branch not taken)",
            _sigmoid("        y = torch.where(x >= 0, 1 / (1 + torch.exp(-x)),\n"
                     "                        torch.exp(x) / (1 + torch.exp(x)))\n" + SAVE_Y, FROM_Y)),
    Unusual("MySigmoid", "exp(-log1p(exp(-x))): infinite intermediates, exact results",
            _sigmoid("        y = torch.exp(-torch.log1p(torch.exp(-x)))\n" + SAVE_Y, FROM_Y)),
    # a view of the Function's own intermediate as its output: autograd forbids writing into
    # it, which protects the saved output as the version counter would
    Unusual("MySigmoid", "flattened, then reshaped back: the output is a view",
            _sigmoid("        flat = x.reshape(-1)\n        z = torch.exp(-flat.abs())\n"
                     "        y = torch.where(flat >= 0, 1 / (1 + z), z / (1 + z)).reshape(x.shape)\n"
                     + SAVE_Y, FROM_Y)),
    # "saves the flat y, returns it reshaped" is among saving.py's mistakes: the saved flat y is
    # not the output, but a tensor of its own cut from the graph
    Unusual("MySigmoid", "softmax over stack([x, 0]), a view into the stack",
            _sigmoid("        y = torch.softmax(torch.stack([x, torch.zeros_like(x)]), 0)[0]\n" + SAVE_Y,
                     FROM_Y)),
    Unusual("MySigmoid", "1 - z / (1 + z) on the right, backward exp(log y + log1p(-y))",
            _sigmoid("        z = torch.exp(-x.abs())\n"
                     "        y = torch.where(x >= 0, 1 - z / (1 + z), z / (1 + z))\n" + SAVE_Y,
                     "        y, = ctx.saved_tensors\n"
                     "        return grad_output * torch.exp(torch.log(y) + torch.log1p(-y))")),
    Unusual("MySigmoid", "backward 1 / (1 / y + 1 / (1 - y)), a harmonic form of y (1 - y)",
            _sigmoid(STABLE + SAVE_Y, "        y, = ctx.saved_tensors\n"
                     "        return grad_output / (1 / y + 1 / (1 - y))")),
]

MISTAKES = [
    # a fresh review (score 7): x clamped to [-30, 30] "to stay finite", the textbook formula
    Mistake("MySigmoid", "x clamped to [-30, 30], then 1 / (1 + exp(-x))",
            "x is clamped (or cut off at a threshold) before the formula",
            _sigmoid("        y = 1 / (1 + torch.exp(-x.clamp(-30, 30)))\n" + SAVE_Y, FROM_Y)),
    # a fresh review (score 7): every contiguous grad_output lets .view(-1) pass; autograd hands
    # a transposed one when y.t() is used downstream (the domain's grad_output layout property)
    Mistake("MySigmoid", "grad_output.view(-1) in backward",
            "MySigmoid.backward assumes a contiguous grad_output: it raised when grad_output was "
            "transposed",
            _sigmoid(STABLE + SAVE_Y, "        y, = ctx.saved_tensors\n"
                     "        flat = y.reshape(-1)\n"
                     "        return (grad_output.view(-1) * flat * (1 - flat)).view(y.shape)")),
    # a fresh review's log-space form: F.softplus returns its input above its threshold of 20,
    # so below x = -20 this is e^x itself, 2e-9 off at x = -20.01 (issue 45: between the old
    # tail points -40 and -20)
    Mistake("MySigmoid", "exp(-F.softplus(-x)): e^x itself below x = -20",
            "that is e^x itself",
            _sigmoid("        y = torch.exp(-F.softplus(-x))\n" + SAVE_Y, FROM_Y)),
    Mistake("MySigmoid", "exp(x) below x = -20, the stable formula above",
            "MySigmoid loses the left tail: at x = -20.01",
            _sigmoid(STABLE + "        y = torch.where(x < -20, torch.exp(x), y)\n" + SAVE_Y,
                     FROM_Y)),
    # a mutant (issue 45): the branch test moved off 0, which only x within 1e-6 of 0 shows
    Mistake("MySigmoid", "exp's branch test at x >= -1e-6, the output's at x >= 0",
            "MySigmoid's output agrees with the truth to five digits or more",
            _sigmoid("        e = torch.exp(torch.where(x >= -1e-6, -x, x))\n"
                     "        y = torch.where(x >= 0, 1 / (1 + e), e / (1 + e))\n" + SAVE_Y,
                     "        y, = ctx.saved_tensors\n        return grad_output * (y - y * y)")),
    # asinh's odd-symmetry trick carried over: sigma(x) = 1/2 + copysign(tanh(|x| / 2) / 2, x)
    Mistake("MySigmoid", "1/2 + copysign(h, x), the worked example's odd trick",
            "as does any 1/2 plus a term that rounds to -1/2",
            _sigmoid("        z = torch.exp(-x.abs())\n        h = (1 - z) / (2 * (1 + z))\n"
                     "        y = 0.5 + torch.copysign(h, x)\n" + SAVE_Y, FROM_Y)),
    Mistake("MySigmoid", "saves the input x", "MySigmoid saved its input x: its backward then "
            "computes an exponential again",
            _sigmoid("        ctx.save_for_backward(x)\n        return torch.sigmoid(x)",
                     "        x, = ctx.saved_tensors\n        y = torch.sigmoid(x)\n"
                     "        return grad_output * y * (1 - y)"), named=True, nbgrader=True),
    Mistake("MySigmoid", "exp(x) / (1 + exp(x))", "MySigmoid returns inf or nan for large |x|: "
            "exp(x) overflows for x > 709; use exp(-|x|)",
            _sigmoid("        e = torch.exp(x)\n        y = e / (1 + e)\n" + SAVE_Y, FROM_Y),
            named=True),
    Mistake("MySigmoid", "0 in the left tail (1 - 1 / (1 + z))", "MySigmoid loses the left tail",
            _sigmoid("        z = torch.exp(-x.abs())\n"
                     "        y = torch.where(x >= 0, 1 / (1 + z), 1 - 1 / (1 + z))\n" + SAVE_Y,
                     FROM_Y)),
    Mistake("MySigmoid", "output kept as ctx.y", "MySigmoid stores a tensor as ctx.y: use "
            "ctx.save_for_backward",
            _sigmoid(STABLE + "        ctx.y = y\n        return y",
                     "        return grad_output * ctx.y * (1 - ctx.y)"), named=True),
    Mistake("MySigmoid", "output hidden in a list on ctx",
            "MySigmoid stores a tensor as ctx.cache['saved'][0]",
            _sigmoid(STABLE + "        ctx.cache = {'saved': [y]}\n        return y",
                     "        y = ctx.cache['saved'][0]\n        return grad_output * y * (1 - y)")),
    Mistake("MySigmoid", "asks autograd inside backward", "MySigmoid.backward calls "
            "torch.autograd.grad: write the gradient formula by hand",
            _sigmoid(STABLE + SAVE_Y,
                     "        y, = ctx.saved_tensors\n        with torch.enable_grad():\n"
                     "            x = torch.logit(y).detach().requires_grad_()\n"
                     "            grad_x, = torch.autograd.grad(torch.sigmoid(x), x, grad_output)\n"
                     "        return grad_x")),
    Mistake("MySigmoid", "built-in sigmoid_backward", "MySigmoid.backward uses the built-in op "
            "sigmoid_backward: write the gradient formula by hand",
            _sigmoid(STABLE + SAVE_Y, "        y, = ctx.saved_tensors\n"
                     "        return torch.ops.aten.sigmoid_backward(grad_output, y)"),
            named=True),
    Mistake("MySigmoid", "the stable formula, its values rounded through float32",
            "every value there is exactly a float32 number",
            _sigmoid(STABLE + "        y = y.float().to(x.dtype)\n" + SAVE_Y, FROM_Y)),
    Mistake("MySigmoid", "1 - e / (1 + e) with e = exp(-x): inf / inf on the left",
            "MySigmoid returns inf or nan for large |x|: exp(-x) overflows for x < -709",
            _sigmoid("        e = torch.exp(-x)\n        y = 1 - e / (1 + e)\n" + SAVE_Y, FROM_Y)),
    Mistake("MySigmoid", "backward through logit(y): inf / inf where y is 0",
            "MySigmoid's gradient is nan at x = -800.0, where your output is finite (0.0)",
            _sigmoid(STABLE + SAVE_Y, "        y, = ctx.saved_tensors\n"
                     "        e = torch.exp(-torch.logit(y))\n"
                     "        return grad_output * e / (1 + e) ** 2")),
    Mistake("MySigmoid", "(1 + tanh(x / 2)) / 2", "(1 + tanh(x / 2)) / 2 cancels to 0 there",
            _sigmoid("        y = (1 + torch.tanh(x / 2)) / 2\n" + SAVE_Y, FROM_Y), named=True),
    Mistake("MySigmoid", "1 - sigmoid(-x)", "(or 1 - sigmoid(-x), the same subtraction)",
            _sigmoid("        y = 1 - torch.sigmoid(-x)\n" + SAVE_Y, FROM_Y)),
    Mistake("MySigmoid", "sigmoid computed in float32", "your values are sigmoid computed in float32",
            _sigmoid("        y = torch.sigmoid(x.float()).to(x.dtype)\n" + SAVE_Y, FROM_Y)),
    Mistake("MySigmoid", "exp of x clamped to [-700, 700]",
            "MySigmoid loses the left tail: at x = -708.0 it gives 9.85967654375977e-305",
            _sigmoid("        e = torch.exp(x.clamp(-700, 700))\n        y = e / (1 + e)\n" + SAVE_Y,
                     FROM_Y)),
    Mistake("MySigmoid", "ignores grad_output", "MySigmoid.backward ignores grad_output",
            _sigmoid(STABLE + SAVE_Y, "        y, = ctx.saved_tensors\n        return y * (1 - y)")),
    Mistake("MySigmoid", "output kept in a module global",
            "MySigmoid saved nothing with ctx.save_for_backward: which tensor does your backward read",
            _GLOBAL + _sigmoid(STABLE + "        _last[:] = [y]\n        return y",
                               "        y = _last[0]\n        return grad_output * y * (1 - y)")),
    Mistake("MySigmoid", "saves y and the intermediate z",
            "MySigmoid saved 2 tensors (output, ",
            _sigmoid(STABLE + "        ctx.save_for_backward(y, z)\n        return y",
                     "        y, z = ctx.saved_tensors\n        return grad_output * y * (1 - y)")),
    # each sign given the other side's formula: sigma(-x), with a right gradient y (1 - y)
    Mistake("MySigmoid", "branches swapped: sigma(-x)", "at every x probed it is sigma(-x)",
            _sigmoid("        z = torch.exp(-x.abs())\n"
                     "        y = torch.where(x >= 0, z / (1 + z), 1 / (1 + z))\n" + SAVE_Y,
                     "        y, = ctx.saved_tensors\n        return grad_output * y * (1 - y)")),
    # z = exp(-x) with no abs: z / (1 + z) is sigma(|x|) = 1 - sigma(x) on the left (and
    # inf / inf = nan below x = -709.78, which this probe names first)
    Mistake("MySigmoid", "z = exp(-x), no abs: the left side gives 1 - sigma(x)",
            "at every x < 0 it is sigma(-x) = 1 - sigma(x)",
            _sigmoid("        z = torch.exp(-x)\n"
                     "        y = torch.where(x >= 0, 1 / (1 + z), z / (1 + z))\n" + SAVE_Y,
                     "        y, = ctx.saved_tensors\n        return grad_output * y * (1 - y)")),
    Mistake("MySigmoid", "x = x.float() first: a float32 output", "MySigmoid" + FLOAT32_OUTPUT,
            _sigmoid("        x = x.float()\n" + STABLE + SAVE_Y, FROM_Y)),
    Mistake("MySigmoid", "the output kept on the class (MySigmoid.last_output = y)",
            "MySigmoid.forward sets MySigmoid.last_output: a class attribute is shared by every call",
            SIGMOID_ON_THE_CLASS),
]

# found by reviewers: forwards of one's own written otherwise, and PyTorch's sigmoid run inside
# another op (F.glu, F.silu, logsigmoid)

UNUSUAL += [
    Unusual("MySigmoid", "split on x > 0, reciprocal and torch.mul / torch.sub backward",
            """
class MySigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        e = torch.exp(-x.abs())
        r = torch.reciprocal(1 + e)
        y = torch.where(x > 0, r, e * r)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return torch.mul(grad_output, torch.mul(y, torch.sub(1, y)))
"""),
    Unusual("MySigmoid", "exp(-logaddexp(0, -x)), backward y - y * y",
            """
class MySigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.exp(-torch.logaddexp(torch.zeros_like(x), -x))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * (y - y * y)
"""),
    Unusual("MySigmoid", "the textbook 1 / (1 + exp(-x)) forward, backward y - y * y",
            """
class MySigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = 1 / (1 + torch.exp(-x))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * (y - y * y)
"""),
    Unusual("MySigmoid", "per-sign forward, backward marked once_differentiable",
            """
class MySigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        z = torch.exp(-x.abs())
        y = torch.where(x >= 0, 1 / (1 + z), z / (1 + z))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * y * (1 - y)
"""),
]

MISTAKES += [
    Mistake("MySigmoid", "torch.sigmoid forward, ATen's sigmoid_backward formula by hand",
            "MySigmoid.forward runs PyTorch's own sigmoid (aten.sigmoid",
            """
class MySigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.sigmoid(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * (1 - y) * y
"""),
    Mistake("MySigmoid", "exp(logsigmoid(x)), a log-space form exact in the tail",
            "MySigmoid.forward runs PyTorch's own sigmoid (aten.log_sigmoid_forward",
            """
class MySigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.exp(F.logsigmoid(x))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * y * (1 - y)
"""),
    Mistake("MySigmoid", "F.glu of [1, x]: PyTorch's sigmoid kernel",
            "(aten.glu",
            """
class MySigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.nn.functional.glu(torch.stack([torch.ones_like(x), x]), dim=0)[0]
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * y * (1 - y)
"""),
    Mistake("MySigmoid", "F.silu(x) / x, 0.5 at x = 0",
            "(aten.silu",
            """
class MySigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.where(x == 0, 0.5, torch.nn.functional.silu(x) / x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * y * (1 - y)
"""),
]

# a fresh review (score 8): both passed every check before the contract's rules 1 and 3 were
# graded generically (the only empty x was ScaledSigmoid's)
MISTAKES += [
    Mistake("MySigmoid", "backward through the Jacobian built as a diagonal matrix",
            'a Jacobian built as a matrix? (Function contract, rule 3',
            _sigmoid(STABLE + SAVE_Y, "        y, = ctx.saved_tensors\n"
                     "        J = torch.diag((y * (1 - y)).reshape(-1))\n"
                     "        return (J @ grad_output.reshape(-1)).reshape(grad_output.shape)")),
    Mistake("MySigmoid", "formula picked by x.abs().max(): raises on an empty x",
            '(tried an empty batch: x of shape (0, 4))',
            _sigmoid("        if x.abs().max() < 30:\n            y = 1 / (1 + torch.exp(-x))\n"
                     "        else:\n" + STABLE.replace("        ", "            ") + SAVE_Y,
                     FROM_Y)),
]

# a fresh review (review77): the derivative computed and returned in float64 for a float32 x,
# which autograd casts back without a word; only what backward returns shows it (rule 2's dtype)
MISTAKES += [
    Mistake("MySigmoid", "derivative computed and returned in float64 for a float32 x",
            "MySigmoid.backward returned grad_x in float64 for a float32 x: autograd casts it "
            "back without a word",
            _sigmoid(STABLE + SAVE_Y, "        y, = ctx.saved_tensors\n        y = y.double()\n"
                     "        return grad_output.double() * y * (1 - y)")),
]
