"""Lesson 08: answers with known verdicts for softplus, a custom operator (register_fake,
register_autograd, a stable form in both tails).

Every softplus or squared_norm entry defines its operator (``autograd_course::softplus``,
``autograd_course::squared_norm``) again: load one entry and grade it before loading the
next (the dispatcher runs the newest definition)."""

from .. import Mistake, Unusual
from .answers import SOFTPLUS, _edit


_SP_VALUE_SWITCH = ("    return (z.clamp(min=0) + torch.log1p(torch.exp(-z.abs()))) / beta",
          "    exact = z.clamp(min=0) + torch.log1p(torch.exp(-z.abs()))\n"
          "    return torch.where(z < -10, torch.exp(z), exact) / beta")

_SP_SLOPE_SWITCH = ("    return grad_output * torch.sigmoid(ctx.beta * x), None",
          "    z = ctx.beta * x\n"
          "    return grad_output * torch.where(z < -10, torch.exp(z), torch.sigmoid(z)), None")

_SP_VALUE = ("    z = beta * x\n"
             "    return (z.clamp(min=0) + torch.log1p(torch.exp(-z.abs()))) / beta")

_SP_SLOPE_RETURN = "    return grad_output * torch.sigmoid(ctx.beta * x), None"

_SP_SAVE = "    ctx.save_for_backward(x)"

_SP_SLOPE = ("    x, = ctx.saved_tensors\n"
             "    return grad_output * torch.sigmoid(ctx.beta * x), None")


UNUSUAL = [
    Unusual("softplus", "function-call registration with torch.library.register_* by name", '''
def _softplus(x: torch.Tensor, beta: float) -> torch.Tensor:
    return torch.logaddexp(beta * x, torch.zeros_like(x)) / beta


softplus = torch.library.custom_op("autograd_course::softplus", _softplus, mutates_args=())
torch.library.register_fake("autograd_course::softplus", lambda x, beta: torch.empty_like(x))


def _setup(ctx, inputs, output):
    ctx.save_for_backward(inputs[0])
    ctx.beta = inputs[1]


def _backward(ctx, grad):
    x, = ctx.saved_tensors
    return grad / (1 + torch.exp(-ctx.beta * x)), None


torch.library.register_autograd("autograd_course::softplus", _backward, setup_context=_setup)
'''),
    Unusual("softplus", "the torch.ops handle handed in, saving the output",
            _edit(SOFTPLUS,
                  ("def softplus(x", "def _softplus_op(x"),
                  ("@softplus.register_fake", "@_softplus_op.register_fake"),
                  ("    x, beta = inputs\n    ctx.save_for_backward(x)",
                   "    x, beta = inputs\n    ctx.save_for_backward(output)"),
                  ("    x, = ctx.saved_tensors\n    return grad_output * torch.sigmoid(ctx.beta * x)",
                   "    y, = ctx.saved_tensors\n    return grad_output * -torch.expm1(-ctx.beta * y)"),
                  ("softplus.register_autograd", "_softplus_op.register_autograd"))
            + "\n\nsoftplus = torch.ops.autograd_course.softplus\n"),
    Unusual("softplus", "backward checks needs_input_grad",
            _edit(SOFTPLUS, ("    return grad_output * torch.sigmoid(ctx.beta * x), None",
                             "    wanted = ctx.needs_input_grad[0]\n"
                             "    return (grad_output * torch.sigmoid(ctx.beta * x) if wanted "
                             "else None), None"))),
    Unusual("softplus", "torch.where branches; sigmoid(beta x) saved by setup_context", '''
@torch.library.custom_op("autograd_course::softplus", mutates_args=())
def softplus(x: torch.Tensor, beta: float) -> torch.Tensor:
    z = beta * x
    return torch.where(z > 0, z + torch.log1p(torch.exp(-z)), torch.log1p(torch.exp(z))) / beta


@softplus.register_fake
def _(x, beta):
    return torch.empty_like(x)


def setup_context(ctx, inputs, output):
    x, beta = inputs
    ctx.save_for_backward(torch.sigmoid(beta * x))


def backward(ctx, grad_output):
    s, = ctx.saved_tensors
    return grad_output * s, None


softplus.register_autograd(backward, setup_context=setup_context)
'''),
    Unusual("softplus", "a NumPy kernel (np.logaddexp), as an operator around outside code", '''
import numpy as np


@torch.library.custom_op("autograd_course::softplus", mutates_args=())
def softplus(x: torch.Tensor, beta: float) -> torch.Tensor:
    out = np.logaddexp(0.0, beta * x.detach().cpu().numpy()) / beta
    return torch.from_numpy(np.asarray(out)).to(device=x.device, dtype=x.dtype)


@softplus.register_fake
def _(x, beta):
    return torch.empty_like(x)


def setup_context(ctx, inputs, output):
    ctx.save_for_backward(inputs[0])
    ctx.beta = inputs[1]


def backward(ctx, grad_output):
    x, = ctx.saved_tensors
    return grad_output / (1 + torch.exp(-ctx.beta * x)), None


softplus.register_autograd(backward, setup_context=setup_context)
'''),
    Unusual("softplus", "logaddexp forward; backward from the output, 1 - exp(-beta y)", '''
@torch.library.custom_op("autograd_course::softplus", mutates_args=())
def softplus(x: torch.Tensor, beta: float) -> torch.Tensor:
    return torch.logaddexp(beta * x, torch.zeros_like(x)) / beta


@softplus.register_fake
def _(x, beta):
    return torch.empty_like(x)


def setup_context(ctx, inputs, output):
    ctx.save_for_backward(output)
    ctx.beta = inputs[1]


def backward(ctx, grad_output):
    y, = ctx.saved_tensors
    return -grad_output * torch.expm1(-ctx.beta * y), None


softplus.register_autograd(backward, setup_context=setup_context)
'''),
    Unusual("softplus", "beta made a float64 tensor in backward (torch.tensor with dtype=)",
            _edit(SOFTPLUS, ("torch.sigmoid(ctx.beta * x)",
                             "torch.sigmoid(torch.tensor(ctx.beta, dtype=x.dtype) * x)"))),
    Unusual('softplus', 'forward logaddexp(z, 0) / beta, only the output saved, slope -expm1(-beta * s)',
            '# UNUSUAL (correct): forward logaddexp(z, 0)/beta; setup_context saves the OUTPUT only; slope -expm1(-beta*s)\nimport torch\ndef softplus(x: torch.Tensor, beta: float) -> torch.Tensor:\n    return torch.logaddexp(beta * x, torch.zeros((), dtype=x.dtype, device=x.device)) / beta\nsoftplus = torch.library.custom_op("autograd_course::softplus", softplus, mutates_args=())\n@softplus.register_fake\ndef _(x, beta):\n    return torch.empty_like(x)\ndef sc(ctx, inputs, output):\n    _, beta = inputs\n    ctx.save_for_backward(output); ctx.beta = beta\ndef bw(ctx, g):\n    s, = ctx.saved_tensors\n    return g * -torch.expm1(-ctx.beta * s), None\nsoftplus.register_autograd(bw, setup_context=sc)\n'),
    Unusual("softplus", "fake computes beta * x on the fake tensor, slope -expm1(-beta s) from "
            "the saved output",
            _edit(SOFTPLUS, ("    return torch.empty_like(x)", "    return beta * x"),
                  ("    x, beta = inputs\n    ctx.save_for_backward(x)",
                   "    x, beta = inputs\n    ctx.save_for_backward(output)"),
                  ("    return grad_output * torch.sigmoid(ctx.beta * x), None",
                   "    return grad_output * -torch.expm1(-ctx.beta * x), None"))),
    Unusual("softplus", "forward logaddexp in float64, cast back to x's dtype",
            _edit(SOFTPLUS, ("    z = beta * x\n" + _SP_VALUE_SWITCH[0] + "\n",
                             "    z = beta * x.double()\n"
                             "    return (torch.logaddexp(z, torch.zeros_like(z)) / beta)"
                             ".to(x.dtype)\n"))),
    Unusual("softplus", "slope 1 / (1 + exp(-beta x)) by hand",
            _edit(SOFTPLUS, ("torch.sigmoid(ctx.beta * x)",
                             "(1 / (1 + torch.exp(-ctx.beta * x)))"))),
    # (a float64 gradient for a float32 x: a mistake by rule 2's dtype, at the end)
    Unusual("softplus", "forward on x.contiguous(), a contiguous fake x.new_empty(x.shape)",
            _edit(SOFTPLUS, ("    z = beta * x\n", "    z = beta * x.contiguous()\n"),
                  ("    return torch.empty_like(x)", "    return x.new_empty(x.shape)"))),
    # the review's: F.logsigmoid returns a contiguous output whatever x's layout, and the fake
    # says so
    Unusual("softplus", "forward -F.logsigmoid(-beta x) / beta, a contiguous fake",
            _edit(SOFTPLUS, ("    return (z.clamp(min=0) + torch.log1p(torch.exp(-z.abs()))) / beta",
                             "    return -F.logsigmoid(-z) / beta"),
                  ("    return torch.empty_like(x)", "    return x.new_empty(x.shape)"))),
    Unusual("softplus", "value and slope e^z below beta * x = -12 (within the 1e-5 tolerance)",
            _edit(SOFTPLUS,
                  (_SP_VALUE, "    z = beta * x\n"
                   "    exact = z.clamp(min=0) + torch.log1p(torch.exp(-z.abs()))\n"
                   "    return torch.where(z < -12, torch.exp(z), exact) / beta"),
                  (_SP_SLOPE_RETURN, "    z = ctx.beta * x\n    return grad_output * torch.where("
                   "z < -12, torch.exp(z), torch.sigmoid(z)), None"))),
    Unusual("softplus", "x and the output saved, slope exp(beta x - beta s)",
            _edit(SOFTPLUS, (_SP_SAVE, "    ctx.save_for_backward(x, output)"),
                  (_SP_SLOPE, "    x, s = ctx.saved_tensors\n"
                   "    return grad_output * torch.exp(ctx.beta * x - ctx.beta * s), None"))),
    Unusual("softplus", "computed in float64 and cast back, a switch past 40, x and s saved",
            _edit(SOFTPLUS,
                  ("    z = beta * x\n"
                   "    return (z.clamp(min=0) + torch.log1p(torch.exp(-z.abs()))) / beta",
                   "    z = beta * x.double()\n"
                   "    return torch.where(z > 40, z, torch.log1p(torch.exp(z.clamp(max=40))))"
                   ".div(beta).to(x.dtype)"),
                  ("    ctx.save_for_backward(x)", "    ctx.save_for_backward(x, output)"),
                  ("    x, = ctx.saved_tensors\n"
                   "    return grad_output * torch.sigmoid(ctx.beta * x), None",
                   "    x, s = ctx.saved_tensors\n"
                   "    return grad_output * torch.exp(ctx.beta * x - ctx.beta * s), None"))),
]


_SP_SLOPE_ONE_PAST = ("    z = ctx.beta * x\n"
                      "    return grad_output * torch.where(z > {T}, torch.ones_like(z), "
                      "torch.sigmoid(z)), None")


MISTAKES = [
    # review 76 (W2b, W2q): catalogued as correct until the right side's value was graded to
    # the dtype's precision as its slope is: a switch to x past beta * x = 20 (F.softplus's
    # threshold) drops e^-20 / 20, a relative 1e-10, which float64 sees
    Mistake("softplus", "where(z > 20, x, log1p(exp(z.clamp(max=20))) / beta), the reviewer's",
            "softplus returns x itself from beta * x = 20.25 on",
            _edit(SOFTPLUS, (_SP_VALUE, "    z = beta * x\n"
                   "    return torch.where(z > 20, x, torch.log1p(torch.exp(z.clamp(max=20))) / beta)"))),
    Mistake("softplus", "F.softplus(x, beta=beta) as the body, backward by hand",
            "softplus returns x itself from beta * x = 20.25 on",
            "import torch.nn.functional as F\n"
            + _edit(SOFTPLUS, (_SP_VALUE, "    return F.softplus(x, beta=beta)"))),
    Mistake("softplus", "F.softplus inside the operator and an explicit schema",
            "softplus returns x itself from beta * x = 20.25 on",
            _edit(SOFTPLUS,
                  ('mutates_args=())', 'mutates_args=(),\n'
                   '                         schema="(Tensor x, float beta) -> Tensor")'),
                  ("    z = beta * x\n    return (z.clamp(min=0) + torch.log1p(torch.exp(-z.abs()))) "
                   "/ beta", "    return F.softplus(x, beta=beta, threshold=20.0)"),
                  ("torch.sigmoid(ctx.beta * x)", "torch.special.expit(ctx.beta * x)"))),
    Mistake("softplus", "logaddexp, switching to z itself above z = 20 as F.softplus does",
            "softplus returns x itself from beta * x = 20.25 on",
            _edit(SOFTPLUS, ("    return (z.clamp(min=0) + torch.log1p(torch.exp(-z.abs())))"
                             " / beta",
                             "    small = torch.logaddexp(z.clamp(max=20), torch.zeros_like(z))\n"
                             "    return torch.where(z > 20, z, small) / beta"))),
    Mistake("softplus", "forward F.softplus(x, beta), fake x.clone(), slope "
            "torch.special.expit",
            "softplus returns x itself from beta * x = 20.25 on",
            "import torch.nn.functional as F\n"
            + _edit(SOFTPLUS, ("    z = beta * x\n" + _SP_VALUE_SWITCH[0],
                               "    return F.softplus(x, beta=beta)"),
                    ("    return torch.empty_like(x)", "    return x.clone()"),
                    ("torch.sigmoid(ctx.beta * x)", "torch.special.expit(ctx.beta * x)"))),
    Mistake("softplus", "forward F.softplus(x, beta) (its switch at 20), the output saved, "
            "slope -expm1(-beta s)",
            "softplus returns x itself from beta * x = 20.25 on",
            _edit(SOFTPLUS, (_SP_VALUE, "    return F.softplus(x, beta=beta)"),
                  ("    ctx.save_for_backward(x)", "    ctx.save_for_backward(output)"),
                  (_SP_SLOPE_RETURN, "    return grad_output * -torch.expm1(-ctx.beta * x), None"))),
    # review 75 (S11): the slope switched to exactly 1 past a threshold drops e^-z, 6e-6 at 12
    # and 3e-7 at 15, inside the sweep's 1e-5 but far past float64's precision on the right
    Mistake("softplus", "slope exactly 1 past beta * x = 12",
            "softplus's slope is exactly 1 from beta * x = 12.125 on (beta=1.0, float64)",
            _edit(SOFTPLUS, (_SP_SLOPE_RETURN, _SP_SLOPE_ONE_PAST.format(T=12)))),
    Mistake("softplus", "slope exactly 1 past beta * x = 15",
            "softplus's slope is exactly 1 from beta * x = 15.125 on (beta=1.0, float64)",
            _edit(SOFTPLUS, (_SP_SLOPE_RETURN, _SP_SLOPE_ONE_PAST.format(T=15)))),
    # catalogued as correct until review 75 graded the right side's slope to float64's
    # precision: past the switch at 30 the slope exp(beta x - beta s) is exactly 1, e^-30 off;
    # since review 77b grades the value to 4 ulps, the switch to x itself is named first
    Mistake("softplus", "computed in float64 and cast back, a switch past 30, x and s saved",
            "softplus returns x itself from beta * x = 30.25 on",
            _edit(SOFTPLUS,
                  ("    z = beta * x\n"
                   "    return (z.clamp(min=0) + torch.log1p(torch.exp(-z.abs()))) / beta",
                   "    z = beta * x.double()\n"
                   "    return torch.where(z > 30, z, torch.log1p(torch.exp(z.clamp(max=30))))"
                   ".div(beta).to(x.dtype)"),
                  ("    ctx.save_for_backward(x)", "    ctx.save_for_backward(x, output)"),
                  ("    x, = ctx.saved_tensors\n"
                   "    return grad_output * torch.sigmoid(ctx.beta * x), None",
                   "    x, s = ctx.saved_tensors\n"
                   "    return grad_output * torch.exp(ctx.beta * x - ctx.beta * s), None"))),
    # the review's: the slope sigmoid(beta * x) computed in float32 for float64 x, as the
    # forward's float32 mistake: 0 at beta * x = -700, where float64's slope is 9.9e-305
    Mistake("softplus", "backward computes the slope in float32 (sigmoid of beta * x.float())",
            "softplus's backward computes the slope in float32",
            _edit(SOFTPLUS, ("return grad_output * torch.sigmoid(ctx.beta * x), None",
                             "slope = torch.sigmoid(ctx.beta * x.float())\n"
                             "    return grad_output * slope.to(x.dtype), None"))),
    Mistake("softplus", "setup_context keeps x as a ctx attribute",
            "softplus's setup_context keeps a tensor as ctx.x",
            _edit(SOFTPLUS, ("    ctx.save_for_backward(x)\n    ctx.beta = beta",
                             "    ctx.x = x\n    ctx.beta = beta"),
                  ("    x, = ctx.saved_tensors\n    return grad_output * torch.sigmoid",
                   "    x = ctx.x\n    return grad_output * torch.sigmoid")),
            named=True, nbgrader=True),
    Mistake("softplus", "the float beta passed to save_for_backward with x",
            "save_for_backward can only save variables",
            _edit(SOFTPLUS, ("ctx.save_for_backward(x)\n    ctx.beta = beta",
                             "ctx.save_for_backward(x, beta)"),
                  ("x, = ctx.saved_tensors", "x, beta = ctx.saved_tensors"),
                  ("torch.sigmoid(ctx.beta * x)", "torch.sigmoid(beta * x)"))),
    Mistake("softplus", "backward returns only grad_x",
            "softplus's backward returns the wrong number of gradients",
            _edit(SOFTPLUS, ("torch.sigmoid(ctx.beta * x), None", "torch.sigmoid(ctx.beta * x)")),
            named=True),
    Mistake("softplus", "a fake implementation with the wrong shape",
            "softplus's fake implementation returns shape",
            _edit(SOFTPLUS, ("return torch.empty_like(x)", "return x.new_empty(x.shape[:-1])")),
            named=True),
    Mistake("softplus", "a fake implementation with the wrong dtype",
            "softplus's fake implementation returns shape",
            _edit(SOFTPLUS, ("return torch.empty_like(x)",
                             "return torch.empty_like(x, dtype=torch.float32)")), named=True),
    Mistake("softplus", "no register_fake", "softplus has no fake implementation",
            _edit(SOFTPLUS, ("@softplus.register_fake\n", "")), named=True),
    Mistake("softplus", "a backward registered without setup_context",
            "softplus's backward was registered without setup_context",
            _edit(SOFTPLUS, ("softplus.register_autograd(backward, setup_context=setup_context)",
                             "softplus.register_autograd(backward)")),
            named=True),
    Mistake("softplus", "no register_autograd", "softplus has no autograd registration",
            _edit(SOFTPLUS, ("softplus.register_autograd(backward, setup_context=setup_context)",
                             "")), named=True),
    Mistake("softplus", "softplus that overflows for large beta * x",
            "softplus overflows for large beta * x",
            _edit(SOFTPLUS, ("    z = beta * x\n    return (z.clamp(min=0) + "
                             "torch.log1p(torch.exp(-z.abs()))) / beta",
                             "    return torch.log1p(torch.exp(beta * x)) / beta")), named=True),
    Mistake("softplus", "the stable form written with log, not log1p: 0.0 at beta * x = -40",
            "softplus loses the left tail: at x = -40 with beta=1.0 it returns 0",
            _edit(SOFTPLUS, ("torch.log1p(torch.exp(-z.abs()))",
                             "torch.log(1 + torch.exp(-z.abs()))")),
            named=True),
    Mistake("softplus", "the operator's setup_context with parameters named (ctx, inp, out)",
            "softplus's setup_context, setup_context, is called with keyword arguments",
            _edit(SOFTPLUS, ("def setup_context(ctx, inputs, output):\n    x, beta = inputs",
                             "def setup_context(ctx, inp, out):\n    x, beta = inp")),
            named=True),
    Mistake("softplus", "a gradient returned for the float beta",
            "softplus's backward returned a gradient for beta",
            _edit(SOFTPLUS, ("torch.sigmoid(ctx.beta * x), None",
                             "torch.sigmoid(ctx.beta * x), (grad_output * x).sum()")),
            named=True),
    Mistake("softplus", "a plain Python function, not a custom operator",
            "softplus never calls the custom operator autograd_course::softplus", '''
def softplus(x, beta):
    return F.softplus(x, beta)
''', named=True),
    Mistake("softplus", "forward writes into x (x.mul_(beta)) with mutates_args=()",
            "softplus wrote into its input x",
            _edit(SOFTPLUS, ("    z = beta * x\n", "    z = x.mul_(beta)\n")), named=True),
    Mistake("softplus", "backward times beta (the factors beta did not cancel)",
            "softplus's gradient is beta times too large at every x",
            _edit(SOFTPLUS, ("torch.sigmoid(ctx.beta * x)",
                             "ctx.beta * torch.sigmoid(ctx.beta * x)"))),
    Mistake("softplus", "backward over beta (the chain rule's inner beta forgotten)",
            "softplus's gradient is beta times too small at every x",
            _edit(SOFTPLUS, ("torch.sigmoid(ctx.beta * x)",
                             "torch.sigmoid(ctx.beta * x) / ctx.beta"))),
    Mistake("softplus", "forward without its final division by beta",
            "softplus's output with beta=0.5 is beta times the right value at every x",
            _edit(SOFTPLUS, ("torch.log1p(torch.exp(-z.abs()))) / beta",
                             "torch.log1p(torch.exp(-z.abs())))"))),
    Mistake("softplus", "forward divided by beta twice",
            "softplus's output with beta=0.5 is 1/beta times the right value at every x",
            _edit(SOFTPLUS, ("torch.log1p(torch.exp(-z.abs()))) / beta",
                             "torch.log1p(torch.exp(-z.abs()))) / beta / beta"))),
    Mistake("softplus", "backward sigmoid(x): beta forgotten inside the sigmoid",
            "softplus's gradient is the slope for beta = 1 at every x",
            _edit(SOFTPLUS, ("torch.sigmoid(ctx.beta * x)", "torch.sigmoid(x)"))),
    # x.new_empty(x.shape) is contiguous whatever x is; the operator's output, element-wise,
    # keeps a transposed x's strides: opcheck's fake-tensor test (and torch.compile) see it
    Mistake("softplus", "a fake of x.new_empty(x.shape), contiguous for a transposed x",
            "softplus's fake implementation returns strides",
            _edit(SOFTPLUS, ("@softplus.register_fake\ndef _(x, beta):\n"
                             "    return torch.empty_like(x)",
                             "@softplus.register_fake\ndef _(x, beta):\n"
                             "    return x.new_empty(x.shape)"))),
    # the review's: float64's overflow threshold, exact in float64, while float32's exp is
    # inf from about 88.7
    Mistake("softplus", "where(z > 709, z, log1p(exp(z))): float64's threshold, inf in float32",
            "softplus overflows in float32 though not in float64",
            _edit(SOFTPLUS, ("    return (z.clamp(min=0) + torch.log1p(torch.exp(-z.abs()))) / beta",
                             "    return torch.where(z > 709, z, torch.log1p(torch.exp(z))) "
                             "/ beta"))),
    # the review's: right for a dense x (a transposed one included), but a column slice keeps
    # its gaps and an expand its stride 0, where the element-wise output is dense
    Mistake("softplus",
            "a fake of x.new_empty_strided(x.shape, x.stride()): x's gaps for a slice",
            "softplus's fake implementation copies x's strides (5, 1)",
            _edit(SOFTPLUS, ("    return torch.empty_like(x)",
                             "    return x.new_empty_strided(x.shape, x.stride())"))),
    # the review's: sigmoid(z) = 1 - exp(-softplus(z)) is exact on paper, but the subtraction
    # cancels where softplus is tiny (0 for beta * x below about -37, digits lost well before);
    # only a relative comparison in the left tail shows it (-expm1 is the unusual answer above)
    Mistake("softplus", "backward from the saved output, 1 - exp(-beta s): 0 at beta * x = -40",
            "softplus's backward loses the left tail: at x = -40 with beta=1.0 it returns 0",
            _edit(SOFTPLUS, ("    x, beta = inputs\n    ctx.save_for_backward(x)",
                             "    x, beta = inputs\n    ctx.save_for_backward(output)"),
                  ("    x, = ctx.saved_tensors\n"
                   "    return grad_output * torch.sigmoid(ctx.beta * x)",
                   "    s, = ctx.saved_tensors\n"
                   "    return grad_output * (1 - torch.exp(-ctx.beta * s))")),
            named=True),
    # the review's: the fake is right for an element-wise op on x, but the operator copies x
    # first, so the real output is contiguous; the hint names the operator's side
    Mistake("softplus",
            "forward computes on x.contiguous(): a contiguous output, a fake of x's strides",
            "softplus returns contiguous strides (4, 1) for a transposed x",
            _edit(SOFTPLUS, ("    z = beta * x\n",
                             "    z = beta * x.contiguous()  # a kernel wants contiguous memory\n"))),
    # the review's: F.logsigmoid does not keep x's strides (its output is contiguous), so the
    # fake of x's layout describes x, not what forward returns
    Mistake("softplus", "forward -F.logsigmoid(-beta x) / beta, a fake of x's layout",
            "softplus returns contiguous strides (4, 1) for a transposed x",
            _edit(SOFTPLUS, ("    return (z.clamp(min=0) + torch.log1p(torch.exp(-z.abs()))) / beta",
                             "    return -F.logsigmoid(-z) / beta"))),
    # the saved x is the caller's own tensor: in backward, grad mode is off, so PyTorch lets
    # an in-place op change it (a second backward, or the caller, then reads beta * x, sigmoid)
    Mistake("softplus", "backward writes into the saved x (x.mul_(beta).sigmoid_())",
            "softplus's backward wrote into x, the tensor it saved",
            _edit(SOFTPLUS, ("grad_output * torch.sigmoid(ctx.beta * x), None",
                             "grad_output * x.mul_(ctx.beta).sigmoid_(), None"))),
    Mistake("softplus", "a fake that keeps strides only for a 2-D transpose",
            "softplus's fake implementation returns strides (6, 3, 1)",
            _edit(SOFTPLUS, ("    return torch.empty_like(x)",
                             "    if x.dim() == 2 and x.stride() == (1, x.shape[0]):\n"
                             "        return x.new_empty(x.shape[::-1]).t()\n"
                             "    return x.new_empty(x.shape)"))),
    Mistake("softplus", "backward's beta made with torch.tensor(beta): float32",
            "softplus's backward uses beta rounded to float32",
            _edit(SOFTPLUS, ("torch.sigmoid(ctx.beta * x)",
                             "torch.sigmoid(torch.tensor(ctx.beta) * x)"))),
    Mistake("softplus", "forward's beta made with torch.tensor(beta): float32",
            "softplus uses beta rounded to float32",
            _edit(SOFTPLUS, ("    z = beta * x\n", "    z = torch.tensor(beta) * x\n"))),
    Mistake("softplus", "where(z > 15, z, log1p(exp(z))): a switch to z past 15",
            "softplus returns x itself from beta * x = 15.25 on",
            _edit(SOFTPLUS, ("    return (z.clamp(min=0) + torch.log1p(torch.exp(-z.abs()))) / beta",
                             "    return torch.where(z > 15, z, torch.log1p(torch.exp("
                             "z.clamp(max=15)))) / beta"))),
    Mistake("softplus", "value and slope e^z below beta * x = -10 (the reviewer's answer)",
            "softplus's output switches to e^z below a threshold in the left tail",
            _edit(SOFTPLUS, _SP_VALUE_SWITCH, _SP_SLOPE_SWITCH)),
    Mistake("softplus", "slope e^z below beta * x = -10, the value exact",
            "softplus's slope (its backward) switches to e^z below a threshold",
            _edit(SOFTPLUS, _SP_SLOPE_SWITCH)),
    Mistake("softplus", "value e^z below beta * x = -10.5, the slope exact",
            "softplus's output switches to e^z below a threshold in the left tail",
            _edit(SOFTPLUS, (_SP_VALUE_SWITCH[0], _SP_VALUE_SWITCH[1].replace("-10", "-10.5")))),
    Mistake("softplus", "value and slope e^z below beta * x = -5 (the reviewer's, named now)",
            "softplus's output switches to e^z below a threshold in the left tail",
            _edit(SOFTPLUS, (_SP_VALUE_SWITCH[0], _SP_VALUE_SWITCH[1].replace("-10", "-5")),
                  (_SP_SLOPE_SWITCH[0], _SP_SLOPE_SWITCH[1].replace("-10", "-5")))),
    # an uncapped mutant of the unusual 'logaddexp, switching to z itself above z = 20'
    Mistake("softplus", "logaddexp of z clamped at 19 under a switch to z at 20",
            "softplus's output is wrong in float64: at beta * x = 20",
            _edit(SOFTPLUS, (_SP_VALUE_SWITCH[0],
                             "    small = torch.logaddexp(z.clamp(max=19), torch.zeros_like(z))\n"
                             "    return torch.where(z > 20, z, small) / beta"))),
    # review 56b: another namespace was blamed on a re-run that never happened
    Mistake("softplus", "registered as mylib::softplus", "is the custom operator mylib::softplus",
            _edit(SOFTPLUS, ('"autograd_course::softplus"', '"mylib::softplus"'))),
    Mistake("softplus", "beta kept in a module global by setup_context",
            "softplus's backward used another call's beta",
            _edit(SOFTPLUS, ("    ctx.beta = beta", "    global _BETA\n    _BETA = beta"),
                  ("torch.sigmoid(ctx.beta * x)", "torch.sigmoid(_BETA * x)"))),
    Mistake("softplus", "backward differentiates F.softplus with torch.autograd.grad",
            "softplus.backward calls torch.autograd.grad",
            _edit(SOFTPLUS, (_SP_SLOPE_RETURN, "    with torch.enable_grad():\n"
                             "        xx = x.detach().requires_grad_()\n"
                             "        y = F.softplus(xx, beta=ctx.beta)\n"
                             "        g, = torch.autograd.grad(y, xx, grad_output)\n"
                             "    return g, None"))),
    # review 71: autograd through the stable form takes clamp's slope 1 and abs's 0 at z = 0
    # (slope 1 there, not 1/2); the by-hand rule is what the grader proves first
    Mistake("softplus", "backward asks autograd through the stable form (clamp, abs)",
            "softplus.backward calls torch.autograd.grad",
            _edit(SOFTPLUS, (_SP_SLOPE_RETURN, "    with torch.enable_grad():\n"
                             "        xx = x.detach().requires_grad_()\n"
                             "        z = ctx.beta * xx\n"
                             "        y = (z.clamp(min=0) + torch.log1p(torch.exp(-z.abs())))"
                             " / ctx.beta\n"
                             "        g, = torch.autograd.grad(y, xx, grad_output)\n"
                             "    return g, None"))),
    Mistake("softplus", "backward asks autograd through torch.logaddexp",
            "softplus.backward calls torch.autograd.grad",
            _edit(SOFTPLUS, (_SP_SLOPE_RETURN, "    with torch.enable_grad():\n"
                             "        xx = x.detach().requires_grad_()\n"
                             "        z = ctx.beta * xx\n"
                             "        y = torch.logaddexp(z, torch.zeros_like(z)) / ctx.beta\n"
                             "        g, = torch.autograd.grad(y, xx, grad_output)\n"
                             "    return g, None"))),
    # review 71: the stable form differentiated term by term, (z >= 0) - sign(z) e / (1 + e):
    # sign(0) = 0 makes the slope 1 at z = 0 alone (it was named an e^z switch, e^0 = 1)
    Mistake("softplus", "the stable form differentiated by hand, (z >= 0) and sign(0) = 0",
            "softplus's slope at beta * x = 0 (beta=1.0, float64) is 1, where",
            _edit(SOFTPLUS, (_SP_SLOPE_RETURN, "    z = ctx.beta * x\n"
                             "    e = torch.exp(-z.abs())\n"
                             "    return grad_output * ((z >= 0).to(x.dtype) - torch.sign(z) * e"
                             " / (1 + e)), None"))),
    Mistake("softplus", "the stable form differentiated by hand, (z > 0) and sign(0) = 0",
            "softplus's slope at beta * x = 0 (beta=1.0, float64) is 0, where",
            _edit(SOFTPLUS, (_SP_SLOPE_RETURN, "    z = ctx.beta * x\n"
                             "    e = torch.exp(-z.abs())\n"
                             "    return grad_output * ((z > 0).to(x.dtype) - torch.sign(z) * e"
                             " / (1 + e)), None"))),
    Mistake("softplus", "forward F.softplus with threshold=15",
            "softplus returns x itself from beta * x = 15.25 on",
            _edit(SOFTPLUS, (_SP_VALUE, "    return F.softplus(x, beta=beta, threshold=15.0)"))),
    Mistake("softplus", "backward calls aten's softplus_backward",
            "uses the built-in op softplus_backward",
            _edit(SOFTPLUS, (_SP_SLOPE_RETURN, "    return torch.ops.aten.softplus_backward("
                             "grad_output, x, ctx.beta, 20.0), None"))),
    Mistake("softplus", "value 0 below beta * x = -30", "softplus loses the left tail",
            _edit(SOFTPLUS, (_SP_VALUE, "    z = beta * x\n"
                             "    exact = z.clamp(min=0) + torch.log1p(torch.exp(-z.abs()))\n"
                             "    return torch.where(z < -30, torch.zeros_like(z), exact)"
                             " / beta"))),
    # its first line was "softplus's output is wrong in float64" until review 76 graded the
    # right side's value to float64's precision: at beta=1 the switch at 20 is named first
    Mistake("softplus", "switch to x where x > 20, not beta * x",
            "softplus returns x itself from beta * x = 20.25 on",
            _edit(SOFTPLUS, (_SP_VALUE, "    z = beta * x\n"
                             "    return torch.where(x > 20, x, torch.log1p(torch.exp(-z.abs()))"
                             " / beta + x.clamp(min=0))"))),
    Mistake("softplus", "computed in float64 and returned float64, fake float64 too",
            "softplus's output has dtype torch.float64 for torch.float32 inputs",
            _edit(SOFTPLUS, ("    z = beta * x\n", "    z = beta * x.double()\n"),
                  ("    return torch.empty_like(x)",
                   "    return torch.empty_like(x, dtype=torch.float64)"))),
    Mistake("softplus", "slope e / (1 + e), e = expm1(beta s), from the saved output",
            "grad_x contains inf or nan where the true gradient is finite",
            _edit(SOFTPLUS, (_SP_SAVE, "    ctx.save_for_backward(output)"),
                  (_SP_SLOPE, "    s, = ctx.saved_tensors\n"
                   "    e = torch.expm1(ctx.beta * s)\n"
                   "    return grad_output * e / (1 + e), None"))),
    Mistake("softplus", "the operator's body takes max(z, 0) against torch.zeros(z.shape) made "
            "without device=",
            "softplus made a tensor on the default device (torch.zeros",
            _edit(SOFTPLUS, ("z.clamp(min=0)", "torch.maximum(z, torch.zeros(z.shape, dtype=z.dtype))")),
            named=True),
    Mistake("softplus", 'custom_op(..., device_types="cpu") copied from the NumPy example: no '
            "kernel for a CUDA tensor",
            "calls autograd_course::softplus, registered for cpu only",
            _edit(SOFTPLUS, ('mutates_args=())', 'mutates_args=(), device_types="cpu")')),
            named=True),
]

# Rule 2's dtype: the registered backward returns float64 for a float32 x, which autograd casts
# back without a word (the backward is recorded before it does). Catalogued as correct (unusual)
# until that clause was graded for every exercise (autograder.returned_dtypes), and a fresh
# review's S16 (review77): now a mistake.
MISTAKES += [
    Mistake("softplus", "a float64 gradient for a float32 x (the engine casts it back)",
            "the backward registered for softplus returned grad_x in float64 for a float32 x",
            _edit(SOFTPLUS, ("    return grad_output * torch.sigmoid(ctx.beta * x), None",
                             "    return grad_output.double() * torch.sigmoid(ctx.beta * "
                             "x.double()), None"))),
]

# a fresh review (review77b, S1b): a switch to x past beta * x = 28 drops e^-28 / 28, about 100
# ulps of float64 at the switch, which a bound of a few ulps of beta * x let through
MISTAKES += [
    Mistake("softplus", "where(z > 28, x, log1p(exp(z.clamp(max=28))) / beta): x past 28",
            "softplus returns x itself from beta * x = 28.25 on",
            _edit(SOFTPLUS, (_SP_VALUE, "    z = beta * x\n"
                   "    return torch.where(z > 28, x, torch.log1p(torch.exp(z.clamp(max=28))) / beta)"))),
]

# a fresh review (review77b, S9b): the slope switched to exactly 1 past beta * x = 32 drops
# e^-32, about 50 ulps of 1 at 32.125; the catalogued slope exp(beta x - beta s) read back from
# the output is as far off there (it carries the rounding of two numbers near beta * x, up to
# about beta * x ulps, and is exactly 1 itself from beta * x = 33 on), so the slope's bound, 4
# ulps of beta * x, cannot tell the two apart: correct by the contract's bound, which the
# message states
UNUSUAL += [
    Unusual("softplus", "slope exactly 1 past beta * x = 32 (within 4 ulps of beta * x there)",
            _edit(SOFTPLUS, (_SP_SLOPE_RETURN, _SP_SLOPE_ONE_PAST.format(T=32)))),
]
