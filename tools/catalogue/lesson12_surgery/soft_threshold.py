"""Lesson 12: answers with known verdicts for SoftThreshold (a kink at |x| == lam, and a
gradient for the tensor lam summed to its shape)."""

from .. import Mistake, Unusual, edit
from .answers import _BROKEN_SOFT, _SOFT_CODE, _ST7, _U3


_SOFT_FORWARD = '''
    @staticmethod
    def forward(ctx, x, lam):
        ctx.save_for_backward(x, lam)
        return torch.sign(x) * torch.relu(x.abs() - lam)
'''


def _soft(backward_body: str, forward: str = _SOFT_FORWARD) -> str:
    return ("class SoftThreshold(torch.autograd.Function):\n" + forward +
            "\n    @staticmethod\n    def backward(ctx, grad_output):\n" + backward_body)


def _soft_saved(body: str) -> str:
    return _soft("        x, lam = ctx.saved_tensors\n" + body)


_Y_SAVED = """class SoftThreshold(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lam):
        y = torch.sign(x) * torch.clamp(x.abs() - lam, min=0)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        passed = grad_output * (y != 0)
        return (passed if ctx.needs_input_grad[0] else None,
                {lam} if ctx.needs_input_grad[1] else None)
"""


UNUSUAL = [
    # rule 2 of the Function contract: a gradient of a shape lam broadcasts to is accepted
    # (autograd sums it to lam's shape); these two were Mistakes ("sum it to lam's shape",
    # "return a 0-d tensor") until the contract decided it, saving x then, y now
    Unusual("SoftThreshold", "lam's gradient not summed", _Y_SAVED.format(
        lam="-passed * torch.sign(y)")),
    Unusual("SoftThreshold", "lam's gradient summed to shape (1,)", _Y_SAVED.format(
        lam="-(passed * torch.sign(y)).sum().reshape(1)")),
    Unusual("SoftThreshold", "saves the output only", _soft('''        y, = ctx.saved_tensors
        outside = y != 0
        grad_x = grad_output * outside
        grad_lam = -(grad_x * torch.sign(y)).sum() if ctx.needs_input_grad[1] else None
        return grad_x if ctx.needs_input_grad[0] else None, grad_lam
''', forward='''
    @staticmethod
    def forward(ctx, x, lam):
        y = torch.sign(x) * torch.clamp(x.abs() - lam, min=0)
        ctx.save_for_backward(y)
        return y
''')),
    Unusual("SoftThreshold", "torch.where pieces", _soft('''        above, below = ctx.saved_tensors
        zero = torch.zeros_like(grad_output)
        grad_x = grad_lam = None
        if ctx.needs_input_grad[0]:
            grad_x = torch.where(above | below, grad_output, zero)
        if ctx.needs_input_grad[1]:
            grad_lam = torch.where(below, grad_output, zero).sum() - \\
                torch.where(above, grad_output, zero).sum()
        return grad_x, grad_lam
''', forward='''
    @staticmethod
    def forward(ctx, x, lam):
        ctx.save_for_backward(x > lam, x < -lam)
        zero = torch.zeros_like(x)
        return torch.where(x > lam, x - lam, torch.where(x < -lam, x + lam, zero))
''')),
    Unusual("SoftThreshold", "a saved signed mask, reshaped to lam", _soft('''        direction, lam = ctx.saved_tensors
        grad_x = grad_output * direction.abs() if ctx.needs_input_grad[0] else None
        grad_lam = None
        if ctx.needs_input_grad[1]:
            grad_lam = -(grad_output * direction).sum().reshape(lam.shape)
        return grad_x, grad_lam
''', forward='''
    @staticmethod
    def forward(ctx, x, lam):
        direction = torch.sign(x) * (x.abs() > lam)
        ctx.save_for_backward(direction, lam)
        return direction * (x.abs() - lam)
''')),
    Unusual("SoftThreshold", "F.softshrink(x, lam.item()) forward, bool mask and int8 sign saved",
            _soft('''        outside, sign = ctx.saved_tensors
        grad_x = grad_output * outside
        grad_lam = -(grad_x * sign).sum() if ctx.needs_input_grad[1] else None
        return grad_x if ctx.needs_input_grad[0] else None, grad_lam
''', forward='''
    @staticmethod
    def forward(ctx, x, lam):
        ctx.save_for_backward(x.abs() > lam, torch.sign(x).to(torch.int8))
        return F.softshrink(x, lam.item())
''')),
    # review of lesson 12 (fifth)
    Unusual('SoftThreshold', 'sign(y) saved as a bfloat16 code',
            '''class SoftThreshold(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lam):
        y = torch.sign(x) * torch.relu(x.abs() - lam)
        ctx.save_for_backward(torch.sign(y).to(torch.bfloat16))
        return y

    @staticmethod
    def backward(ctx, grad_output):
        code, = ctx.saved_tensors
        code = code.to(grad_output.dtype)
        passed = grad_output * code.abs() if ctx.needs_input_grad[0] else None
        return passed, -(grad_output * code).sum() if ctx.needs_input_grad[1] else None
'''),
    # review of lesson 12 (fifth)
    Unusual('SoftThreshold', 'y as x - clamp(x, -lam, lam), an int8 sign code saved',
            '''class SoftThreshold(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lam):
        y = x - torch.clamp(x, min=-lam, max=lam)
        ctx.save_for_backward(torch.sign(y).to(torch.int8))
        return y

    @staticmethod
    def backward(ctx, grad_output):
        code, = ctx.saved_tensors
        grad_x = grad_output * code.abs() if ctx.needs_input_grad[0] else None  # int8 * float
        grad_lam = -(grad_output * code).sum() if ctx.needs_input_grad[1] else None
        return grad_x, grad_lam
'''),
    Unusual('SoftThreshold', 'F.softshrink forward, an int8 sign code, linalg.vecdot for lam',
            'import torch.nn.functional as F\nclass SoftThreshold(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, lam):\n        y = F.softshrink(x, lam.item())                       # the built-in, a Python float threshold\n        ctx.save_for_backward(torch.sign(y).to(torch.int8))   # -1, 0, 1: mask and sign in one byte\n        return y\n    @staticmethod\n    def backward(ctx, grad_output):\n        code, = ctx.saved_tensors\n        grad_x = grad_output * code.abs() if ctx.needs_input_grad[0] else None\n        grad_lam = torch.linalg.vecdot(grad_output.flatten(), -code.flatten().to(grad_output.dtype)) \\\n            if ctx.needs_input_grad[1] else None\n        return grad_x, grad_lam\n'),
    Unusual('SoftThreshold', 'one int8 code sign(x) * [|x| > lam]; forward x - clamp(x, -lam, lam)',
            _SOFT_CODE),
    Unusual('SoftThreshold', 'F.softshrink(x, lam.item()), y saved',
            '''import torch.nn.functional as F
class SoftThreshold(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lam):
        y = F.softshrink(x, lam.item())
        ctx.save_for_backward(y)
        return y
    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        gx = torch.where(y != 0, grad_output, torch.zeros_like(grad_output))
        return (gx if ctx.needs_input_grad[0] else None,
                -(gx * y.sign()).sum() if ctx.needs_input_grad[1] else None)
'''),
    Unusual('SoftThreshold', 'a bool mask and an int8 sign saved, forward by where (review 56)', _U3),
    Unusual('SoftThreshold', 'the int8 sign of y alone saved (review 56)', _ST7),
]


MISTAKES = [
    # review of lesson 12 (fourth): BrokenSoftThreshold with its two lines mended passed, so the
    # exercise was a patch; the contract asks for the one saved tensor of question 4 since
    Mistake("SoftThreshold", "BrokenSoftThreshold with its two lines mended",
            "forward saves x", _soft_saved(
                "        shifted = x.abs() - lam\n"
                "        slope = (shifted > 0).to(x.dtype)\n"
                "        grad_x = grad_output * slope\n"
                "        grad_lam = -(grad_output * slope * torch.sign(x)).sum()\n"
                "        return grad_x, grad_lam\n")),
    # an Unusual answer until the contract asked for the one saved tensor of question 4
    Mistake("SoftThreshold", "the broken version, its sign fixed and nan_to_num over relu(z) / z",
            "forward saves x", _soft_saved(
                "        shifted = x.abs() - lam\n"
                "        slope = torch.nan_to_num(torch.relu(shifted) / shifted)\n"
                "        return grad_output * slope, "
                "-(grad_output * slope * torch.sign(x)).sum()\n")),
    Mistake("SoftThreshold", "x and lam saved, lam's sum only when needed", "forward saves x",
            _soft_saved("        passed = grad_output * (x.abs() > lam)\n"
                        "        grad_lam = None\n        if ctx.needs_input_grad[1]:\n"
                        "            grad_lam = -(passed * torch.sign(x)).sum()\n"
                        "        return passed, grad_lam\n")),
    # review of lesson 12 (fourth): a fast path at lam == 0 passed grad_output through; no
    # battery point had x exactly 0 at lam = 0, sparse_model's own start
    Mistake("SoftThreshold", "grad_output passed through at lam == 0",
            "is not 0 at x = 0 with lam = 0", _soft_saved(
                "        mask = x.abs() > lam\n"
                "        grad_lam = -(grad_output * torch.sign(x) * mask).sum()\n"
                "        if lam.item() == 0:\n"
                "            return grad_output, grad_lam\n"
                "        return grad_output * mask, grad_lam\n")),
    # rule 2 of the Function contract: autograd throws away a gradient returned for an input
    # that needs no gradient; the lesson's solution with both gradients computed always
    Mistake("SoftThreshold", "ignores needs_input_grad: both gradients always",
            "returned a gradient for lam with only x requiring grad",
            edit(_Y_SAVED, ("        return (passed if ctx.needs_input_grad[0] else None,\n"
                            "                {lam} if ctx.needs_input_grad[1] else None)",
                            "        return passed, -(passed * torch.sign(y)).sum()"))),
    Mistake("SoftThreshold", "lam's gradient gated on needs_input_grad[0]",
            "ctx.needs_input_grad: which entry is lam's?", _soft_saved(
                "        passed = grad_output * (x.abs() > lam)\n"
                "        grad_lam = -(passed * torch.sign(x)).sum() if ctx.needs_input_grad[0] "
                "else None\n        return passed, grad_lam\n")),
    Mistake("SoftThreshold", "gradient 1 at |x| == lam", "is not 0 at |x| == lam", _soft_saved(
        "        passed = grad_output * (x.abs() >= lam)\n"
        "        return passed, -(passed * torch.sign(x)).sum()\n"), named=True, nbgrader=True),
    Mistake("SoftThreshold", "lam's gradient alone counts the kink",
            "gradient for lam counts the entries at |x| == lam", _soft_saved(
                "        passed = grad_output * (x.abs() > lam)\n"
                "        return passed, -(grad_output * torch.sign(x) * (x.abs() >= lam)).sum()\n")),
    Mistake("SoftThreshold", "lam's gradient with the wrong sign",
            "gradient for lam has the wrong sign", _soft_saved(
                "        passed = grad_output * (x.abs() > lam)\n"
                "        return passed, (passed * torch.sign(x)).sum()\n"),
            named=True),
    Mistake("SoftThreshold", "lam's gradient averaged", "gradient for lam is 1/", _soft_saved(
        "        passed = grad_output * (x.abs() > lam)\n"
        "        return passed, -(passed * torch.sign(x)).mean()\n")),
    Mistake("SoftThreshold", "relu(z) / z as the slope", "nan at |x| == lam", _soft_saved(
        "        shifted = x.abs() - lam\n        slope = torch.relu(shifted) / shifted\n"
        "        return grad_output * slope, -(grad_output * slope * torch.sign(x)).sum()\n"),
        named=True),
    Mistake("SoftThreshold", "grad_output masked in place", "modified grad_output in place",
            _soft_saved("        passed = grad_output.mul_(x.abs() > lam)\n"
                        "        return passed, -(passed * torch.sign(x)).sum()\n"), named=True),
    Mistake("SoftThreshold", "lam kept on ctx", "stores a tensor as ctx.lam", _soft('''        x, = ctx.saved_tensors
        passed = grad_output * (x.abs() > ctx.lam)
        return passed, -(passed * torch.sign(x)).sum()
''', forward='''
    @staticmethod
    def forward(ctx, x, lam):
        ctx.save_for_backward(x)
        ctx.lam = lam
        return torch.sign(x) * torch.relu(x.abs() - lam)
'''), named=True),
    Mistake("SoftThreshold", "lam's gradient without sign(x) (issue 37)",
            "gradient for lam is -4, -1 for each entry outside the threshold, where the right "
            "value is -2", _soft_saved(
                "        passed = grad_output * (x.abs() > lam)\n"
                "        return passed, -passed.sum()\n")),
    Mistake("SoftThreshold", "lam's gradient without the mask (issue 37)",
            "gradient for lam is -1, -sum(sign(x)) over every entry, where the right value is -2",
            _soft_saved(
                "        passed = grad_output * (x.abs() > lam)\n"
                "        return passed, -(grad_output * torch.sign(x)).sum()\n")),
    Mistake("SoftThreshold", "autograd inside backward", "write the gradient formula by hand",
            _soft_saved('''        with torch.enable_grad():
            x, lam = x.detach().requires_grad_(), lam.detach().requires_grad_()
            y = torch.sign(x) * torch.relu(x.abs() - lam)
            return torch.autograd.grad(y, (x, lam), grad_output)
'''), named=True),
    # review of lesson 12 (fifth): passed while 'never x' was all the saves clause graded
    Mistake('SoftThreshold', '|x| - lam and sign(x) saved, two float tensors',
            'saves two x-shaped tensors (16 bytes per element): the contract\'s budget per entry',
            '''class SoftThreshold(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lam):
        shifted = x.abs() - lam
        sign = torch.sign(x)
        ctx.save_for_backward(shifted, sign)
        return sign * torch.relu(shifted)

    @staticmethod
    def backward(ctx, grad_output):
        shifted, sign = ctx.saved_tensors
        passed = grad_output * (shifted > 0)
        return passed, -(passed * sign).sum()
'''),
    # review of lesson 12 (fifth): its hint named a dtype to save in; now says what is lost and
    # where
    Mistake('SoftThreshold', 'y saved as a float16 code',
            'lose their gradient (the float16 intermediate tensor forward saves holds y there as 0)',
            '''class SoftThreshold(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lam):
        y = torch.sign(x) * torch.relu(x.abs() - lam)
        ctx.save_for_backward(y.to(torch.float16))
        return y

    @staticmethod
    def backward(ctx, grad_output):
        code, = ctx.saved_tensors
        passed = grad_output * (code != 0)
        return passed, -(passed * torch.sign(code)).sum()
'''),
    Mistake('SoftThreshold', 'mask y.abs() > finfo.tiny, which drops a subnormal y',
            'y there is a subnormal number',
            'class SoftThreshold(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, lam):\n        y = torch.sign(x) * torch.clamp(x.abs() - lam, min=0)\n        ctx.save_for_backward(y)\n        return y\n    @staticmethod\n    def backward(ctx, grad_output):\n        y, = ctx.saved_tensors\n        # never compare floats with == 0: anything above the smallest normal counts as non-zero\n        passed = grad_output * (y.abs() > torch.finfo(y.dtype).tiny)\n        grad_lam = None\n        if ctx.needs_input_grad[1]:\n            grad_lam = -(passed * torch.sign(y)).sum()\n        return passed, grad_lam\n'),
    Mistake('SoftThreshold', 'saves x.float(), x in a narrower dtype',
            'saves x (x in float32',
            'class SoftThreshold(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, lam):\n        ctx.save_for_backward(x.float(), lam)     # "half the memory of x"\n        return torch.sign(x) * torch.relu(x.abs() - lam)\n    @staticmethod\n    def backward(ctx, grad_output):\n        x32, lam = ctx.saved_tensors\n        mask = (x32.double().abs() > lam) if x32.dtype != lam.dtype else (x32.abs() > lam)\n        passed = grad_output * mask\n        grad_lam = -(passed * torch.sign(x32)).sum().to(lam.dtype) if ctx.needs_input_grad[1] else None\n        return passed, grad_lam\n'),
    # the code divided by the mask: inf inside the threshold, nan at 0, which x86 CPUs happen
    # to cast to int8 as 0: a mutant of the int8-code answer that passed until forward's casts
    # were probed
    Mistake('SoftThreshold', 'int8 code as sign(x) / [|x| > lam]: inf and nan cast to int8',
            'casts inf or nan to int8', edit(_SOFT_CODE, (
                "torch.sign(x) * (x.abs() > lam)", "torch.sign(x) / (x.abs() > lam)"))),
    Mistake('SoftThreshold', "review 55's node-by-node BrokenSoftThreshold with its two lines mended",
            'forward saves x', edit(_BROKEN_SOFT, (
                "        grad_shifted = grad_output * torch.sign(x) * torch.relu(shifted) / shifted\n",
                "        grad_shifted = grad_output * torch.sign(x) * (shifted > 0)\n"), (
                "            grad_lam = grad_shifted.sum()\n",
                "            grad_lam = -grad_shifted.sum()\n"))),
    Mistake('SoftThreshold', "x < -lam dropped (relu's gradient, y > 0)",
            'gradient for x is wrong only where x < -lam',
            '''class SoftThreshold(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lam):
        y = torch.sign(x) * torch.clamp(x.abs() - lam, min=0)
        ctx.save_for_backward(y)
        return y
    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        passed = grad_output * (y != 0)
        return grad_output * (y > 0), -(passed * torch.sign(y)).sum()
'''),
    # fresh review of lesson 12 at 751adb19 (ST_W5): lam's gradient in a 0-d tensor made without
    # device=. A 0-d CPU tensor meets a CUDA one freely, but an in-place op writing CUDA values
    # into it raises on a GPU; the default-device check sees the write on a CPU too
    Mistake("SoftThreshold", "lam's gradient made on the default device",
            "made a tensor on the default device (torch.zeros without device=)",
            _Y_SAVED.replace("""        return (passed if ctx.needs_input_grad[0] else None,
                {lam} if ctx.needs_input_grad[1] else None)
""", """        grad_lam = None
        if ctx.needs_input_grad[1]:
            grad_lam = torch.zeros((), dtype=grad_output.dtype)  # no device=
            grad_lam -= (passed * torch.sign(y)).sum()
        return (passed if ctx.needs_input_grad[0] else None), grad_lam
""")),
    # its twin on the right device: the same 0-d tensor without dtype= is float32, and its
    # float32 digits show
    Mistake("SoftThreshold", "lam's gradient in a 0-d tensor made without dtype=",
            "every value of grad_lam is exactly a float32 number",
            _Y_SAVED.replace("""        return (passed if ctx.needs_input_grad[0] else None,
                {lam} if ctx.needs_input_grad[1] else None)
""", """        grad_lam = None
        if ctx.needs_input_grad[1]:
            grad_lam = torch.zeros((), device=grad_output.device)
            grad_lam -= (passed * torch.sign(y)).sum()
        return (passed if ctx.needs_input_grad[0] else None), grad_lam
""")),
]
