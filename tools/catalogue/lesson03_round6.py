"""Lesson 03 answers from its round-6 review: hand-made signs that patch only one failure of
x / x.abs() and are wrong at ±inf or at a subnormal x (the contract puts no limit on x), and a
sign that keeps -0.0 where torch.sign gives +0; a FakeQuantize that saves scale.float() for
float64 x."""

from tools.catalogue import Mistake, Unusual
from tools.catalogue.lesson03 import FQ_LSQ, FQ_READ, _clipped, _fake_quantize, _sign

UNUSUAL = [
    Unusual("SignSTE", "(x > 0) - (x < 0), right at ±inf, subnormals and -0.0",
            _sign("        return (x > 0).to(x.dtype) - (x < 0).to(x.dtype)")),
]

MISTAKES = [
    Mistake("SignSTE", "where(x == 0, x, x / x.abs()): nan at ±inf",
            "SignSTE.apply(inf) gives nan but sign(inf) = 1: x / x.abs() is inf / inf = nan "
            "there, so patching its 0 / 0 at 0 alone leaves it",
            _sign("        return torch.where(x == 0, x, x / x.abs())")),
    Mistake("SignSTE", "nan_to_num(x / x.abs()): 0 at ±inf",
            "SignSTE.apply(inf) gives 0 but sign(inf) = 1: 0 where sign is ±1, as nan_to_num "
            "gives for x / x.abs()'s inf / inf = nan",
            _sign("        return torch.nan_to_num(x / x.abs())")),
    Mistake("SignSTE", "x / x.abs().clamp(min=tiny): not 1 at a subnormal x",
            "SignSTE.apply(5e-324) gives 2.220446049250313e-16 but sign(5e-324) = 1: 5e-324 is "
            "subnormal, below torch.finfo(float64).tiny, and x / x.abs().clamp(min=tiny) "
            "divides it by tiny",
            _sign("        return x / x.abs().clamp(min=torch.finfo(x.dtype).tiny)")),
    Mistake("SignClippedSTE", "where(x == 0, x, x / x.abs()): nan at ±inf",
            "SignClippedSTE.apply(inf) gives nan but sign(inf) = 1",
            _clipped("        x, = ctx.saved_tensors\n"
                     "        return grad_output * (x.abs() <= 1)",
                     "        ctx.save_for_backward(x)\n"
                     "        return torch.where(x == 0, x, x / x.abs())")),
    Mistake("SignSTE", "where(x == 0, x, sign(x)) keeps -0.0",
            "SignSTE's output is -0 at x = -0, where sign(x) is 0: equal values, but not the "
            "same zero", _sign("        return torch.where(x == 0, x, torch.sign(x))")),
    # an unusual answer until -0.0 joined the edges: copysign(1, -0.0) is -1, times 0 is -0
    Mistake("SignSTE", "copysign(1, x) times (x != 0) gives -0 at -0.0",
            "SignSTE's output is -0 at x = -0, where sign(x) is 0",
            _sign("        return torch.copysign(torch.ones_like(x), x) * (x != 0)")),
    Mistake("FakeQuantize", "scale saved as float32 for float64 x",
            "FakeQuantize's gradient for scale is what scale rounded to float32 gives",
            _fake_quantize(FQ_READ + f"        return grad_output * inside, (grad_output * "
                           f"{FQ_LSQ}).sum(), None, None",
                           "        ctx.save_for_backward(x, scale.float())\n"
                           "        ctx.qmin, ctx.qmax = qmin, qmax\n"
                           "        return torch.clamp(torch.round(x / scale), qmin, qmax) "
                           "* scale")),
]
