"""Lesson 03: answers with known verdicts for SignSTE, among them hand-made signs that patch
only one failure of x / x.abs() and are wrong at ±inf or at a subnormal x (the contract puts no
limit on x), and signs that keep -0.0 where torch.sign gives +0."""

from .. import Mistake, Unusual
from .answers import READ_X, SIGN, _sign

UNUSUAL = [
    Unusual("SignSTE", "x.sgn() and a cloned grad_output",
            _sign("        return x.sgn()", "        return grad_output.clone()")),
    Unusual("SignSTE", "nested torch.where, sign(0) = 0 kept",
            _sign("        return torch.where(x > 0, 1.0, torch.where(x < 0, -1.0, 0.0))"
                  ".to(x.dtype)", "        return grad_output * 1")),
    Unusual("SignSTE", "(x > 0) - (x < 0) as a float",
            _sign("        return ((x > 0).to(x.dtype) - (x < 0).to(x.dtype))",
                  "        return grad_output if ctx.needs_input_grad[0] else None")),
    Unusual("SignSTE", "(x > 0) - (x < 0), right at ±inf, subnormals and -0.0",
            _sign("        return (x > 0).to(x.dtype) - (x < 0).to(x.dtype)")),
]

MISTAKES = [
    Mistake("SignSTE", "sign computed in place on x", "SignSTE.forward modified its input x in "
            "place", _sign("        return x.sign_()")),
    Mistake("SignSTE", "saves a copy of x it never reads", "forward saved a copy of x",
            _sign("        ctx.save_for_backward(x.clone())\n" + SIGN)),
    Mistake("SignSTE", "zero gradient (the true derivative)", "SignSTE's gradient is zero "
            "everywhere: that is the true derivative of sign",
            _sign(SIGN, "        return torch.zeros_like(grad_output)"), named=True, nbgrader=True),
    Mistake("SignSTE", "ones instead of grad_output", "SignSTE's backward ignores grad_output",
            _sign(SIGN, "        return torch.ones_like(grad_output)"), named=True),
    Mistake("SignSTE", "clips: the other exercise's estimator", "SignSTE zeroes the gradient "
            "where |x| > 1",
            _sign("        ctx.save_for_backward(x)\n" + SIGN,
                  READ_X + "        return grad_output * (x.abs() <= 1)")),
    Mistake("SignSTE", "where(x >= 0, 1, -1) sends 0 to 1", "SignSTE.apply(0) gives 1 but "
            "sign(0) = 0", _sign("        return torch.where(x >= 0, 1.0, -1.0).to(x.dtype)"),
            named=True),
    Mistake("SignSTE", "x / x.abs(), nan at 0", "SignSTE.apply(0) gives nan but sign(0) = 0",
            _sign("        return x / x.abs()")),
    Mistake("SignSTE", "tanh(100 x) in forward", "SignSTE's output is not all -1, 0 or 1",
            _sign("        return torch.tanh(100 * x)"), named=True),
    Mistake("SignSTE", "detach trick inside forward", "SignSTE's output is sign(x) only up to "
            "rounding",
            _sign("        y_soft = x\n        y_hard = torch.sign(x)\n"
                  "        return y_hard - y_soft.detach() + y_soft"), named=True),
    Mistake("SignSTE", "integer output", "SignSTE's output has dtype torch.int64",
            _sign("        return torch.sign(x).long()")),
    Mistake("SignSTE", "x kept on ctx", "SignSTE stores a tensor as ctx.x",
            _sign("        ctx.x = x\n" + SIGN)),
    Mistake("SignSTE", "sign of a float32 copy of x", "SignSTE's output is sign of x rounded "
            "to float32 (at x = 1e-300 it gives 0, expected 1)",
            _sign("        return torch.sign(x.float()).to(x.dtype)")),
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
    Mistake("SignSTE", "where(x == 0, x, sign(x)) keeps -0.0",
            "SignSTE's output is -0 at x = -0, where sign(x) is 0: equal values, but not the "
            "same zero", _sign("        return torch.where(x == 0, x, torch.sign(x))")),
    Mistake("SignSTE", "copysign(1, x) with 0 kept: ±1 at NaN",
            "SignSTE.apply(nan) gives 1 but sign(nan) = 0",
            _sign("        return torch.where(x == 0, torch.zeros_like(x), "
                  "torch.copysign(torch.ones_like(x), x))")),
    # an unusual answer until -0.0 joined the edges: copysign(1, -0.0) is -1, times 0 is -0
    Mistake("SignSTE", "copysign(1, x) times (x != 0) gives -0 at -0.0",
            "SignSTE's output is -0 at x = -0, where sign(x) is 0",
            _sign("        return torch.copysign(torch.ones_like(x), x) * (x != 0)")),
]
