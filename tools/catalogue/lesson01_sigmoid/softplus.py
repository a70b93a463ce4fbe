"""Lesson 01's transfer exercise: answers with known verdicts for Softplus."""

from .. import Mistake, Unusual
from .answers import _GLOBAL, SAVE_Y, SOFTPLUS_STABLE, _softplus

UNUSUAL = [
    Unusual("Softplus", "logaddexp forward",
            _softplus("        y = torch.logaddexp(x, torch.zeros_like(x))\n" + SAVE_Y)),
    # TensorFlow's softplus kernel (tensorflow/core/kernels/softplus_op.h): threshold =
    # log(eps) + 2; x itself above -threshold, exp(x) below threshold, log1p(exp(x)) between
    Unusual("Softplus", "TensorFlow's thresholds: x, exp(x) or log1p(exp(x))",
            _softplus("        threshold = math.log(torch.finfo(x.dtype).eps) + 2\n"
                      "        features_exp = torch.exp(x.clamp(max=-threshold))\n"
                      "        y = torch.where(x > -threshold, x, torch.where(\n"
                      "            x < threshold, features_exp, torch.log1p(features_exp)))\n"
                      + SAVE_Y)),
    Unusual("Softplus", "two branches with torch.where, gradient 1 - exp(-y) only where y is large",
            _softplus("        y = torch.where(x > 0, x + torch.log1p(torch.exp(-x)),\n"
                      "                        torch.log1p(torch.exp(x)))\n" + SAVE_Y,
                      "        y, = ctx.saved_tensors\n"
                      "        s = torch.where(y > 1, 1 - torch.exp(-y), -torch.expm1(-y))\n"
                      "        return grad_output * s")),
    Unusual("Softplus", "gradient as exp(-y) * expm1(y), the same number written differently",
            _softplus("        y = torch.nn.functional.relu(x) + torch.log1p(torch.exp(-torch.abs(x)))\n"
                      + SAVE_Y,
                      "        y, = ctx.saved_tensors\n"
                      "        return grad_output * torch.where(y < 1, -torch.expm1(-y), "
                      "1 - torch.exp(-y))")),
    Unusual("Softplus", "-logsigmoid(-x); sigmoid(x) recovered as sigmoid(log(expm1(y)))",
            _softplus("        y = -F.logsigmoid(-x)\n" + SAVE_Y,
                      "        y, = ctx.saved_tensors\n"
                      "        return grad_output * torch.sigmoid(torch.log(torch.expm1(y)))")),
    Unusual("Softplus", "F.softplus with threshold=40, past where x + log1p(e^-x) rounds to x",
            _softplus("        y = F.softplus(x, threshold=40.0)\n" + SAVE_Y)),
    Unusual("Softplus", "e^x - e^2x / 2 below x = -14, where the cut is within 1e-12",
            _softplus("        e = torch.exp(x)\n"
                      "        y = torch.where(x < -14, e - e * e / 2, torch.logaddexp(x, 0 * x))\n"
                      + SAVE_Y)),
    Unusual("Softplus", "gradient 1 / (1 + 1 / expm1(y))",
            _softplus("        y = torch.logaddexp(x, torch.zeros_like(x))\n" + SAVE_Y,
                      "        y, = ctx.saved_tensors\n"
                      "        return grad_output / (1 + 1 / torch.expm1(y))")),
    Unusual("Softplus", "x recovered from y: sigmoid(y + log(-expm1(-y)))",
            _softplus("        y = torch.maximum(x, torch.zeros_like(x)) + torch.log1p(torch.exp(-x.abs()))\n"
                      + SAVE_Y,
                      "        y, = ctx.saved_tensors\n"
                      "        return grad_output * torch.sigmoid(y + torch.log(-torch.expm1(-y)))")),
]

MISTAKES = [
    Mistake("Softplus", "log(1 + exp(x)) as written", "Softplus returns inf at x = 750.0",
            _softplus("        y = torch.log(1 + torch.exp(x))\n" + SAVE_Y)),
    # a newcomer's first answer: both tails fail on one probe, and its first line says both
    Mistake("Softplus", "log(1 + exp(x)) as written, gradient 1 - exp(-y): both tails wrong",
            "Softplus returns inf at x = 750.0 where log(1 + e^x) = 750: an exponential past "
            "709.78 overflows float64; which one does your forward form at this x? e^-|x| is at "
            "most 1. The left tail is wrong too: at x = -50.0 it returns 0.0 where log(1 + e^x) "
            "= 1.93e-22: the tiny value is lost to 0",
            _softplus("        y = torch.log(1 + torch.exp(x))\n" + SAVE_Y,
                      "        y, = ctx.saved_tensors\n"
                      "        return grad_output * (1 - torch.exp(-y))"), named=True),
    Mistake("Softplus", "F.softplus forward (threshold=20)",
            "that is x itself, as F.softplus returns above its threshold",
            _softplus("        y = F.softplus(x)\n" + SAVE_Y), named=True),
    Mistake("Softplus", "gradient x - sigmoid(x), as a source text gives it",
            "that is x - sigmoid(x) at every point probed",
            _softplus("        ctx.save_for_backward(x)\n        return " + SOFTPLUS_STABLE.strip()[4:],
                      "        x, = ctx.saved_tensors\n"
                      "        return grad_output * (x - torch.sigmoid(x))"), named=True,
            nbgrader=True),
    Mistake("Softplus", "gradient sigmoid(y), the sigmoid of the output",
            "that is sigmoid(y), the sigmoid of the output",
            _softplus(SOFTPLUS_STABLE + SAVE_Y,
                      "        y, = ctx.saved_tensors\n        return grad_output * torch.sigmoid(y)")),
    # learner trial 82: the mirror image of the derivative, first told only its largest error
    Mistake("Softplus", "gradient exp(-y), which is sigmoid(-x)",
            "that is exp(-y) at every point probed, which is 1 / (1 + e^x) = sigmoid(-x)",
            _softplus(SOFTPLUS_STABLE + SAVE_Y,
                      "        y, = ctx.saved_tensors\n        return grad_output * torch.exp(-y)")),
    Mistake("Softplus", "gradient 1 - exp(-y): cancels in the left tail",
            "1 - exp(-y) subtracts two numbers near 1",
            _softplus(SOFTPLUS_STABLE + SAVE_Y,
                      "        y, = ctx.saved_tensors\n        return grad_output * (1 - torch.exp(-y))")),
    Mistake("Softplus", "log(1 + exp(x)) on the left branch", "1 + e^x rounds to 1",
            _softplus("        y = torch.where(x > 0, x + torch.log(1 + torch.exp(-x)),\n"
                      "                        torch.log(1 + torch.exp(x)))\n" + SAVE_Y)),
    Mistake("Softplus", "saves the input x", "Softplus saved input x",
            _softplus(SOFTPLUS_STABLE + "        ctx.save_for_backward(x)\n        return y",
                      "        x, = ctx.saved_tensors\n        return grad_output * torch.sigmoid(x)"),
            named=True),
    Mistake("Softplus", "F.softplus with threshold=21, just past the point a hint named",
            "Softplus's value at x = 21.01 is 21.01",
            _softplus("        y = F.softplus(x, threshold=21.0)\n" + SAVE_Y)),
    Mistake("Softplus", "e^x itself below x = -25.5", "that is e^x itself",
            _softplus("        y = torch.where(x < -25.5, torch.exp(x),\n"
                      "                        torch.logaddexp(x, torch.zeros_like(x)))\n" + SAVE_Y)),
    Mistake("Softplus", "gradient 1 above y = 25.5", "that is 1; sigmoid(x)",
            _softplus(SOFTPLUS_STABLE + SAVE_Y,
                      "        y, = ctx.saved_tensors\n"
                      "        return grad_output * torch.where(y > 25.5, torch.ones_like(y), "
                      "-torch.expm1(-y))")),
    Mistake("Softplus", "x - logsigmoid(x): cancels in the left tail, no formula named",
            "Softplus's value at x = -708.0 is 0.0 where log(1 + e^x) = 3.3075530036384083e-308 "
            "(relative error 1, the contract allows 1e-12)",
            _softplus("        y = x - F.logsigmoid(x)\n" + SAVE_Y)),
    Mistake("Softplus", "gradient expm1(y) / exp(y): inf / inf past y = 709.78",
            "Softplus's gradient is nan at x = 750.0, where sigmoid(x) is finite; there "
            "y = 750.0, past y = 709.78, where e^y overflows in float64",
            _softplus(SOFTPLUS_STABLE + SAVE_Y,
                      "        y, = ctx.saved_tensors\n"
                      "        return grad_output * torch.expm1(y) / torch.exp(y)")),
    Mistake("Softplus", "two-term series e^x - e^2x / 2 below x = -10",
            "that is the series cut after 2 terms; cut there, it is within 1e-12 (relative) "
            "only below x = -13.3",
            _softplus("        e = torch.exp(x)\n"
                      "        y = torch.where(x < -10, e - e * e / 2, " + SOFTPLUS_STABLE.strip()[4:]
                      + ")\n" + SAVE_Y)),
    Mistake("Softplus", "gradient y - y^2 / 2 below y = 1e-4",
            "sigmoid(x) = y - y^2 / 2 + y^3 / 6 - ..., so that is the series cut after 2 terms",
            _softplus(SOFTPLUS_STABLE + SAVE_Y,
                      "        y, = ctx.saved_tensors\n"
                      "        return grad_output * torch.where(y < 1e-4, y - y * y / 2, "
                      "-torch.expm1(-y))")),
    Mistake("Softplus", "x + e^-x above x = 10", "only above x = 12.3",
            _softplus("        y = torch.where(x > 10, x + torch.exp(-x), "
                      + SOFTPLUS_STABLE.strip()[4:] + ")\n" + SAVE_Y)),
    Mistake("Softplus", "logsumexp over stack([x, 0]): forms 1 + e^x", "1 + e^x rounds to 1",
            _softplus("        y = torch.logsumexp(torch.stack([x, torch.zeros_like(x)]), 0)\n" + SAVE_Y)),
    Mistake("Softplus", "saves y.float(): the derivative from 7 digits of y",
            "Softplus saved y rounded to float32 for float64 x",
            _softplus(SOFTPLUS_STABLE + "        ctx.save_for_backward(y.float())\n        return y")),
    Mistake("Softplus", "backward -expm1(-y.float()): the derivative in float32",
            "every value of the gradient Softplus returns for grad_output = 1 (the derivative "
            "itself) is exactly a float32 number",
            _softplus(SOFTPLUS_STABLE + SAVE_Y, "        y, = ctx.saved_tensors\n"
                      "        return grad_output * -torch.expm1(-y.float())")),
    Mistake("Softplus", "forward rounded through float32",
            "every value of Softplus's output is exactly a float32 number",
            _softplus(SOFTPLUS_STABLE + "        y = y.float().to(x.dtype)\n" + SAVE_Y)),
    Mistake("Softplus", "output kept in a module global",
            "Softplus saved nothing with ctx.save_for_backward: which tensor does your backward read",
            _GLOBAL + _softplus(SOFTPLUS_STABLE + "        _last[:] = [y]\n        return y",
                                "        y = _last[0]\n"
                                "        return grad_output * -torch.expm1(-y)")),
    Mistake("Softplus", "gradient y itself below y = 1e-10",
            "that is y itself; sigmoid(x) = y - y^2 / 2",
            _softplus(SOFTPLUS_STABLE + SAVE_Y,
                      "        y, = ctx.saved_tensors\n"
                      "        return grad_output * torch.where(y < 1e-10, y, -torch.expm1(-y))")),
    Mistake("Softplus", "ignores grad_output", "Softplus.backward ignores grad_output",
            _softplus(SOFTPLUS_STABLE + SAVE_Y,
                      "        y, = ctx.saved_tensors\n        return -torch.expm1(-y)")),
]

# found by reviewers: F.softplus with a threshold far enough out

UNUSUAL += [
    Unusual("Softplus", "F.softplus with threshold=29: x itself above 29, within 1e-12",
            """
class Softplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = F.softplus(x, threshold=29.0)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * -torch.expm1(-y)
"""),
]

# a fresh review (score 8): the first two passed every check before the contract's rules 1 and 3
# were graded generically; x recovered as log(exp(y) - 1) was caught with no cause named
MISTAKES += [
    Mistake("Softplus", "backward through the Jacobian built as a diagonal matrix",
            'a Jacobian built as a matrix? (Function contract, rule 3',
            _softplus(SOFTPLUS_STABLE + SAVE_Y, "        y, = ctx.saved_tensors\n"
                      "        J = torch.diag(-torch.expm1(-y).reshape(-1))\n"
                      "        return (J @ grad_output.reshape(-1)).reshape(grad_output.shape)")),
    Mistake("Softplus", "a branch on x.max() < 700: raises on an empty x",
            '(tried an empty batch: x of shape (0, 4))',
            _softplus("        if x.max() < 700:\n    " + SOFTPLUS_STABLE
                      + "        else:\n    " + SOFTPLUS_STABLE + SAVE_Y)),
    Mistake("Softplus", "x recovered from y as log(exp(y) - 1), then sigmoid",
            "with e^y - 1 formed",
            _softplus(SOFTPLUS_STABLE + SAVE_Y, "        y, = ctx.saved_tensors\n"
                      "        x = torch.log(torch.exp(y) - 1)\n"
                      "        return grad_output * torch.sigmoid(x)")),
]
