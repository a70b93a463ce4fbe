"""Lesson 01, review 53: the reviewer's answers that passed (a sigmoid that returns 1 past a
threshold, a backward that zeroes the gradient past one, a series on a stretch of the left
tail) or whose first line missed the mistake (a forward that writes into x only when x is not
a leaf), and the like on the other side of 0; the reviewer's other answers duplicate entries
already here."""

from .. import Mistake, Unusual
from .answers import FROM_Y, SAVE_Y, SCALED_FORWARD, STABLE, _relu, _scaled, _sigmoid

UNUSUAL = [
    Unusual("MySigmoid", "split on x > 0, reciprocal and torch.mul / torch.sub backward",
            _sigmoid("        e = torch.exp(-x.abs())\n"
                     "        r = torch.reciprocal(1 + e)\n"
                     "        y = torch.where(x > 0, r, e * r)\n" + SAVE_Y,
                     "        y, = ctx.saved_tensors\n"
                     "        return torch.mul(grad_output, torch.mul(y, torch.sub(1, y)))")),
]

MISTAKES = [
    Mistake("MySigmoid", "y = 1 exactly past x = 5, a saturation shortcut",
            "it is exactly 1 from x = 5.01 on",
            _sigmoid(STABLE + "        y = torch.where(x > 5, torch.ones_like(y), y)\n" + SAVE_Y,
                     FROM_Y)),
    Mistake("MySigmoid", "y = 1 exactly past x = 30",
            "it is exactly 1 from x = 30.01 on",
            _sigmoid(STABLE + "        y = torch.where(x > 30, torch.ones_like(y), y)\n" + SAVE_Y,
                     FROM_Y)),
    Mistake("MySigmoid", "backward 0 past x = 20, y taken as 1 there",
            "your backward treat sigma(x) as saturated",
            _sigmoid(STABLE + SAVE_Y,
                     "        y, = ctx.saved_tensors\n"
                     "        return torch.where(y > 1 - 2e-9, 0.0, grad_output * y * (1 - y))")),
    Mistake("MySigmoid", "backward 0 below x = -30, where y is tiny",
            "your backward treat sigma(x) as saturated",
            _sigmoid(STABLE + SAVE_Y,
                     "        y, = ctx.saved_tensors\n"
                     "        return torch.where(y < 1e-13, 0.0, grad_output * y * (1 - y))")),
    Mistake("MySigmoid", "a series about x = -150 on (-200, -101)",
            "a formula used on a stretch of the tail only",
            _sigmoid(STABLE + "        mid = (x > -200) & (x < -101)\n"
                     "        u = x + 150\n"
                     "        y = torch.where(mid, math.exp(-150.0) * (1 + u + u * u / 2), y)\n"
                     + SAVE_Y, FROM_Y)),
    Mistake("MyReLU", "clamp_ on x only when x is not a leaf",
            "MyReLU.forward modified its input x in place",
            _relu("        mask = x > 0\n        ctx.save_for_backward(mask)\n"
                  "        if not x.is_leaf:\n            return x.clamp_(min=0)\n"
                  "        return x.clamp(min=0)",
                  "        mask, = ctx.saved_tensors\n"
                  "        return torch.where(mask, grad_output, 0)")),
    # second review 53: returns x as it is when nothing needs zeroing (breaks "return a new
    # tensor": the caller's writes into the output reach x)
    Mistake("MyReLU", "x itself returned when every entry is above 0",
            "MyReLU returned x itself where every entry of x is above 0",
            _relu("        mask = x > 0\n        ctx.save_for_backward(mask)\n"
                  "        if bool(mask.all()):\n            return x\n"
                  "        return x.clamp(min=0)",
                  "        mask, = ctx.saved_tensors\n"
                  "        return torch.where(mask, grad_output, 0)")),
    Mistake("ScaledSigmoid", "backward treats sigma as 1 past x = 6",
            "your backward treat sigma(x) as saturated",
            _scaled(SCALED_FORWARD,
                    "        x, = ctx.saved_tensors\n"
                    "        s = torch.where(x > 6, 1.0, torch.sigmoid(x))\n"
                    "        return grad_output * ctx.scale * s * (1 - s), None")),
    Mistake("ScaledSigmoid", "output scale exactly past x = 10",
            "your forward treat sigma(x) as saturated",
            _scaled("        ctx.save_for_backward(x)\n        ctx.scale = scale\n"
                    "        s = torch.where(x > 10, 1.0, torch.sigmoid(x))\n"
                    "        return scale * s",
                    "        x, = ctx.saved_tensors\n        s = torch.sigmoid(x)\n"
                    "        return grad_output * ctx.scale * s * (1 - s), None")),
]
