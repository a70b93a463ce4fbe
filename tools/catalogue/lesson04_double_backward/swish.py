"""Lesson 04: answers with known verdicts for SwishFunction, whose backward must itself be
differentiable: its builders, then its unusual answers and mistakes by what they get wrong or
right: second derivatives (a saved intermediate, a detach, beta.item(), once_differentiable, a
kink or a where at 0), beta = 0 and small betas, the sigmoid's saturated tail in both dtypes,
state kept outside ctx or shared between calls (a beta kept on the class is right for one call
at a time and wrong for two in one graph, issue 37), and gradients the engine sums (rule 2)."""

from .. import Mistake, Unusual, edit


def _swish(backward: str, forward: str = "        ctx.save_for_backward(x, beta)\n"
           "        return x * torch.sigmoid(beta * x)", decorator: str = "") -> str:
    return f"""
class SwishFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, beta):
{forward}

    @staticmethod{decorator}
    def backward(ctx, grad_output):
{backward}
"""


READ = ("        x, beta = ctx.saved_tensors\n        s = torch.sigmoid(beta * x)\n"
        "        ds = s * (1 - s)\n")
RETURN = ("        return grad_output * (s + beta * x * ds), (grad_output * x * x * ds).sum()")
# RETURN with x multiplied last (x * x overflowed at huge x, once graded): for mistakes whose
# own flaw the battery names after the huge-x check would
SCALED = RETURN.replace("x * x * ds", "x * ds * x")
# RETURN with each gradient gated on its ctx.needs_input_grad entry (rule 2), for the unusual
# answers: a careful learner's form, which the generic rule-2 check accepts
GATED = ("        grad_x = grad_output * (s + beta * x * ds) if ctx.needs_input_grad[0] else None\n"
         "        grad_beta = (grad_output * x * x * ds).sum() if ctx.needs_input_grad[1] "
         "else None\n        return grad_x, grad_beta")
ONCE = "\n    @once_differentiable"

# Once unusual; wrong in the sigmoid's saturated tail since the tail is graded relatively (listed
# below).
TANH_SIGMOID_DOT = _swish("        x, beta = ctx.saved_tensors\n"
                          "        s = 0.5 * (1 + torch.tanh(0.5 * beta * x))\n"
                          "        grad_x = grad_output * s * (1 + beta * x * (1 - s))\n"
                          "        grad_beta = torch.dot((grad_output * x * x).reshape(-1), "
                          "(s - s * s).reshape(-1))\n        return grad_x, grad_beta")

UNUSUAL = [
    Unusual("SwishFunction", "also saves the output y, factored derivative",
            _swish("        x, beta, y = ctx.saved_tensors\n        s = torch.sigmoid(beta * x)\n"
                   "        grad_x = grad_output * s * (1 + beta * x * (1 - s)) if "
                   "ctx.needs_input_grad[0] else None\n"
                   "        grad_beta = (grad_output * x * (y - y * s)).sum() if "
                   "ctx.needs_input_grad[1] else None\n        return grad_x, grad_beta",
                   "        y = x * torch.sigmoid(beta * x)\n"
                   "        ctx.save_for_backward(x, beta, y)\n        return y")),
    Unusual("SwishFunction", "the sigmoid returned as a second output and wrapped",
            """
class _SwishAndSigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, beta):
        s = torch.sigmoid(beta * x)
        ctx.save_for_backward(x, beta, s)  # s is an output: its graph link is kept
        return x * s, s

    @staticmethod
    def backward(ctx, grad_y, grad_s):
        x, beta, s = ctx.saved_tensors
        ds = s * (1 - s)
        grad_x = grad_y * (s + beta * x * ds) + grad_s * beta * ds
        grad_beta = (grad_y * x * ds * x).sum() + (grad_s * x * ds).sum()
        return grad_x, grad_beta


class SwishFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, beta):
        raise AssertionError("use SwishFunction.apply")

    @staticmethod
    def backward(ctx, grad_output):
        raise AssertionError("use SwishFunction.apply")

    @staticmethod
    def apply(x, beta):
        return _SwishAndSigmoid.apply(x, beta)[0]
"""),
    Unusual("SwishFunction", "F.silu(beta * x) / beta forward, einsum beta gradient",
            _swish(READ + "        grad_x = grad_output * (s + beta * x * ds) if "
                   "ctx.needs_input_grad[0] else None\n"
                   "        grad_beta = torch.einsum('...,...->', grad_output * x * ds, x) if "
                   "ctx.needs_input_grad[1] else None\n"
                   "        return grad_x, grad_beta",
                   "        ctx.save_for_backward(x, beta)\n"
                   "        return F.silu(beta * x) / beta if bool(beta != 0) else x / 2")),
]

MISTAKES = [
    # reads t.requires_grad in backward, where the Function contract's rule 2 asks for
    # ctx.needs_input_grad: once unusual, wrong since rule 2 is graded for every exercise (a
    # requires_grad_() between forward and backward changes what it returns); rule 3 (asking
    # autograd inside backward), checked first, now names it
    Mistake("SwishFunction", "autograd inside backward, create_graph=torch.is_grad_enabled()",
            "SwishFunction.backward calls torch.autograd.grad",
            _swish("        x, beta = ctx.saved_tensors\n        with torch.enable_grad():\n"
                   "            wanted = [t for t in (x, beta) if t.requires_grad]\n"
                   "            y = x * torch.sigmoid(beta * x)\n"
                   "            grads = iter(torch.autograd.grad(y, wanted, grad_output, "
                   "create_graph=torch.is_grad_enabled()))\n"
                   "        return tuple(next(grads) if t.requires_grad else None "
                   "for t in (x, beta))")),
    # a series switch between beta = 0 and the smallest beta tried before (1e-4): at beta = 0
    # its beta is a constant to autograd, caught by the second derivatives there (review 53)
    Mistake("SwishFunction", "beta below 1e-5 taken as 0",
            "right at beta = 1.3 and -0.7 but wrong at beta = 0",
            _swish("        x, beta = ctx.saved_tensors\n"
                   "        b = torch.where(beta.abs() < 1e-5, torch.zeros_like(beta), beta)\n"
                   "        s = torch.sigmoid(b * x)\n        ds = s * (1 - s)\n"
                   "        return grad_output * (s + b * x * ds), (grad_output * x * x * ds).sum()",
                   "        ctx.save_for_backward(x, beta)\n"
                   "        b = torch.where(beta.abs() < 1e-5, torch.zeros_like(beta), beta)\n"
                   "        return x * torch.sigmoid(b * x)")),
    Mistake("SwishFunction", "saves x.contiguous(): a copy of a transposed x",
            "forward saved a contiguous copy of x",
            _swish(READ + RETURN, "        ctx.save_for_backward(x.contiguous(), beta)\n"
                   "        return x * torch.sigmoid(beta * x)")),
    Mistake("SwishFunction", "sigmoid as 1 / (1 + exp(-beta x)) in backward: NaN second "
            "derivatives once exp overflows", "is nan at x = -615, where beta x = -799.5 (float64), "
            "while the first derivatives there are finite: your backward's exp returned inf "
            "there from finite arguments",
            _swish("        x, beta = ctx.saved_tensors\n        s = 1 / (1 + torch.exp(-beta * x))\n"
                   "        ds = s * (1 - s)\n" + RETURN)),
    # right in float64 everywhere: exp(700) is finite there; in float32 it is inf past 88.7,
    # and sigma' = e / (1 + e)^2 is inf / inf
    Mistake("SwishFunction", "sigma' as e / (1 + e)^2 with z clamped to +-700: NaN in float32 "
            "past |beta x| = 88.7", "in float32, your gradient for x is nan at x = -615 and -77",
            _swish("        x, beta = ctx.saved_tensors\n"
                   "        z = (beta * x).clamp(-700.0, 700.0)\n        e = torch.exp(-z)\n"
                   "        s = 1 / (1 + e)\n        ds = e / (1 + e) ** 2\n" + RETURN)),
    # a view made in forward shares beta's memory (its role reads "input beta") but has no
    # graph link back to it
    Mistake("SwishFunction", "saves beta.expand_as(x), a view made in forward",
            "SwishFunction's forward saved a view of beta of shape",
            _swish("        x, beta = ctx.saved_tensors\n        s = torch.sigmoid(beta * x)\n"
                   "        ds = s * (1 - s)\n" + RETURN,
                   "        b = beta.expand_as(x)\n        ctx.save_for_backward(x, b)\n"
                   "        return x * torch.sigmoid(b * x)")),
    Mistake("SwishFunction", "saves the intermediate sigmoid", "SwishFunction saved an "
            "intermediate",
            _swish("        x, beta, s = ctx.saved_tensors\n        ds = s * (1 - s)\n" + RETURN,
                   "        s = torch.sigmoid(beta * x)\n"
                   "        ctx.save_for_backward(x, beta, s)\n        return x * s"),
            named=True),
    Mistake("SwishFunction", "detaches in backward", "is cut off from autograd",
            _swish("        x, beta = (t.detach() for t in ctx.saved_tensors)\n"
                   "        s = torch.sigmoid(beta * x)\n        ds = s * (1 - s)\n" + RETURN),
            named=True, nbgrader=True),
    Mistake("SwishFunction", "backward under torch.no_grad()", "is cut off from autograd",
            _swish("        with torch.no_grad():\n" + "\n".join(
                "    " + line for line in (READ + RETURN).splitlines())), named=True),
    # right whenever x requires grad: only the beta-alone case has no graph (review 52)
    Mistake("SwishFunction", "beta's gradient under torch.no_grad() when x needs none",
            "with beta alone requiring grad (x not), your gradient for beta has no graph",
            _swish("        x, beta = ctx.saved_tensors\n"
                   "        if not ctx.needs_input_grad[0]:\n"
                   "            with torch.no_grad():  # only beta: one number, nothing to record\n"
                   "                s = torch.sigmoid(beta * x)\n"
                   "                return None, (grad_output * x * x * s * (1 - s)).sum()\n"
                   "        s = torch.sigmoid(beta * x)\n        ds = s * (1 - s)\n"
                   "        grad_beta = (grad_output * x * x * ds).sum() if ctx.needs_input_grad[1] "
                   "else None\n"
                   "        return grad_output * (s + beta * x * ds), grad_beta")),
    Mistake("SwishFunction", "@once_differentiable on a differentiable backward",
            "SwishFunction's backward is marked @once_differentiable, so it cannot be "
            "differentiated again: a second backward through it raised the mark's error, where "
            "the contract asks for second derivatives; which op of your backward could autograd "
            "not record",
            _swish(READ + RETURN, decorator=ONCE), named=True),
    Mistake("SwishFunction", "beta.item()", "SwishFunction keeps beta as a Python number",
            _swish("        x, = ctx.saved_tensors\n        beta = ctx.beta\n"
                   "        s = torch.sigmoid(beta * x)\n        ds = s * (1 - s)\n" + RETURN,
                   "        ctx.save_for_backward(x)\n        ctx.beta = beta.item()\n"
                   "        return x * torch.sigmoid(beta * x)"), named=True),
    Mistake("SwishFunction", "beta.item() inside backward", "SwishFunction's backward turns a "
            "tensor into a Python number (.item() or float())",
            _swish("        x, beta = ctx.saved_tensors\n        beta = beta.item()\n"
                   "        s = torch.sigmoid(beta * x)\n        ds = s * (1 - s)\n" + RETURN)),
    Mistake("SwishFunction", "in-place op in backward", "overwrote a tensor",
            _swish("        x, beta = ctx.saved_tensors\n        s = torch.sigmoid(beta * x)\n"
                   "        ds = s * (1 - s)\n        grad_x = grad_output * (s + beta * x * ds)\n"
                   "        grad_beta = (grad_output * x * x * s.mul_(1 - s)).sum()\n"
                   "        return grad_x, grad_beta"), named=True),
    Mistake("SwishFunction", "None for beta", "backward returned None for beta",
            _swish(READ + "        return grad_output * (s + beta * x * ds), None")),
    Mistake("SwishFunction", "tensors on ctx", "SwishFunction stores a tensor as ctx.x",
            _swish("        x, beta = ctx.x, ctx.beta\n        s = torch.sigmoid(beta * x)\n"
                   "        ds = s * (1 - s)\n" + RETURN,
                   "        ctx.x, ctx.beta = x, beta\n        return x * torch.sigmoid(beta * x)")),
    Mistake("SwishFunction", "grad_beta misses a factor x", "your gradient for beta is wrong",
            _swish(READ + "        return grad_output * (s + beta * x * ds), "
                   "(grad_output * x * ds).sum()")),
    Mistake("SwishFunction", "s = y / x: NaN where x = 0", "NaN exactly where x = 0, and finite "
            "elsewhere: backward divides by x there (0 / 0, as s = y / x does), and x = 0 is a "
            "value the contract allows (a ReLU's output, padding); what can backward recompute s "
            "from that never divides by x?",
            _swish("        x, beta, y = ctx.saved_tensors\n        s = y / x\n"
                   "        return grad_output * (s + beta * y * (1 - s)), "
                   "(grad_output * x * y * (1 - s)).sum()",
                   "        y = x * torch.sigmoid(beta * x)\n"
                   "        ctx.save_for_backward(x, beta, y)\n        return y")),
    Mistake("SwishFunction", "sigmoid recomputed from exp(-|z|) with torch.where: wrong second "
            "derivative at x = 0", "right everywhere but at x = 0: there its second derivatives "
            "are wrong: its backward uses abs, with a kink at 0, whose derivative autograd takes "
            "as 0 there, so double backward misses part of the second derivative; the sigmoid "
            "itself is smooth at 0: which op can build s with no kink and no branch there?",
            _swish("        x, beta = ctx.saved_tensors\n        z = beta * x\n"
                   "        e = torch.exp(-z.abs())\n"
                   "        s = torch.where(z >= 0, 1 / (1 + e), e / (1 + e))\n"
                   "        ds = s * (1 - s)\n" + RETURN,
                   "        ctx.save_for_backward(x, beta)\n        return x * torch.sigmoid(beta * x)")),
    # a nan second derivative told from a kink (which gives a finite wrong one) and named
    # with its points: a where with a 0 / 0 branch at x = 0, lesson 01's where-built sigmoid
    # whose dropped exp overflows at |beta x| > 709
    Mistake("SwishFunction", "s = where(x == 0, 0.5, y / x): NaN second derivative at x = 0",
            "is nan at x = 0, while the first derivatives there are finite: backward builds s "
            "with a torch.where whose dropped branch is inf or nan",
            _swish("        x, beta, y = ctx.saved_tensors\n"
                   "        s = torch.where(x == 0, torch.full_like(x, 0.5), y / x)\n"
                   "        ds = s * (1 - s)\n" + RETURN,
                   "        y = x * torch.sigmoid(beta * x)\n"
                   "        ctx.save_for_backward(x, beta, y)\n        return y")),
    Mistake("SwishFunction", "lesson 01's where-built sigmoid in backward: NaN second "
            "derivatives past |beta x| = 709", "is nan at x = -615 and 615, where beta x = -799.5 and "
            "799.5 (float64), while the first derivatives there are finite: backward builds s "
            "with a torch.where whose dropped branch is inf or nan there (your backward's exp",
            _swish("        x, beta = ctx.saved_tensors\n        z = beta * x\n"
                   "        s = torch.where(z >= 0, 1 / (1 + torch.exp(-z)), "
                   "torch.exp(z) / (1 + torch.exp(z)))\n"
                   "        ds = s * (1 - s)\n" + RETURN)),
    Mistake("SwishFunction", "grad_output.view(-1): fails on a transposed grad_output",
            "view size is not compatible",
            _swish("        x, beta = ctx.saved_tensors\n        g = grad_output.view(-1)\n"
                   "        x1 = x.reshape(-1)\n        s = torch.sigmoid(beta * x1)\n"
                   "        ds = s * (1 - s)\n"
                   "        return (g * (s + beta * x1 * ds)).view(x.shape), "
                   "(g * x1 * x1 * ds).sum()"), named=True),
    Mistake("SwishFunction", "needs_input_grad indices swapped", "it decides whether to compute "
            "grad_x from another input's entry of ctx.needs_input_grad",
            _swish(READ + "        grad_x = grad_output * (s + beta * x * ds) "
                   "if ctx.needs_input_grad[1] else None\n"
                   "        grad_beta = (grad_output * x * x * ds).sum() "
                   "if ctx.needs_input_grad[0] else None\n        return grad_x, grad_beta")),
    Mistake("SwishFunction", "autograd.grad of the saved output inside backward (it would run "
            "this backward again, without end)", "SwishFunction.backward ran inside itself",
            _swish("        x, beta, y = ctx.saved_tensors\n        with torch.enable_grad():\n"
                   "            return torch.autograd.grad(y, (x, beta), grad_output, "
                   "create_graph=True)",
                   "        y = x * torch.sigmoid(beta * x)\n"
                   "        ctx.save_for_backward(x, beta, y)\n        return y")),
    Mistake("SwishFunction", "beta kept on the class, not on ctx",
            "SwishFunction.forward sets SwishFunction.beta: a class attribute is shared by every "
            "call",
            _swish("        x, = ctx.saved_tensors\n        beta = SwishFunction.beta\n"
                   "        s = torch.sigmoid(beta * x)\n        ds = s * (1 - s)\n"
                   "        return grad_output * (s + beta * x * ds), "
                   "(grad_output * x * x * ds).sum()",
                   "        SwishFunction.beta = beta\n        ctx.save_for_backward(x)\n"
                   "        return x * torch.sigmoid(beta * x)")),
    # review 52
    Mistake("SwishFunction", "beta kept in a module-level dict, not on ctx",
            "SwishFunction's backward used another call's beta",
            "_state = {}\n" + _swish(
                "        x, = ctx.saved_tensors\n        beta = _state['beta']\n"
                "        s = torch.sigmoid(beta * x)\n        ds = s * (1 - s)\n" + SCALED,
                "        _state['beta'] = beta\n        ctx.save_for_backward(x)\n"
                "        return x * torch.sigmoid(beta * x)")),
    Mistake("SwishFunction", "saves x.double() and beta.double(), computes in float64",
            "SwishFunction's forward saved a wider copy of x",
            _swish("        x, beta = ctx.saved_tensors\n        g = grad_output.double()\n"
                   "        s = torch.sigmoid(beta * x)\n        ds = s * (1 - s)\n"
                   "        return ((g * (s + beta * x * ds)).to(grad_output.dtype), "
                   "(g * x * x * ds).sum().to(grad_output.dtype))",
                   "        xd, bd = x.double(), beta.double()\n"
                   "        ctx.save_for_backward(xd, bd)\n"
                   "        return (xd * torch.sigmoid(bd * xd)).to(x.dtype)")),
    Mistake("SwishFunction", "sigma' as exp(-z) * s ** 2: inf * 0 once exp(-z) overflows",
            "grad_x contains inf or nan where the true gradient is finite",
            _swish("        x, beta = ctx.saved_tensors\n        z = beta * x\n"
                   "        s = torch.sigmoid(z)\n        ds = torch.exp(-z) * s * s\n"
                   "        return grad_output * (s + z * ds), (grad_output * x * x * ds).sum()")),
    # review 80 (S3): "record only when a second pass can come"; a .sum() loss's grad_output
    # needs no grad, so its second derivative is lost (the grader once crashed on it)
    Mistake("SwishFunction", "backward under torch.no_grad() unless grad_output requires grad",
            "your backward records its ops only when grad_output requires grad",
            _swish("        with torch.set_grad_enabled(grad_output.requires_grad):\n" + "\n".join(
                "    " + line for line in (READ + GATED).splitlines()))),
    # review 80 (S7): algebraically right and right in float64; in float32 at |beta x| near 800
    # the expanded terms (about 600 each) cancel, off the composed ops by 2e-4 relative
    Mistake("SwishFunction", "sigma' expanded as z*s - z*s*s: large terms cancel in float32",
            "are right in float64 at these points and off in float32 only",
            _swish("        x, beta = ctx.saved_tensors\n        s = torch.sigmoid(beta * x)\n"
                   "        grad_x = grad_output * (s + beta * x * s - beta * x * s * s) if "
                   "ctx.needs_input_grad[0] else None\n"
                   "        grad_beta = (grad_output * (x * x * s - x * x * s * s)).sum() if "
                   "ctx.needs_input_grad[1] else None\n        return grad_x, grad_beta")),
    Mistake("SwishFunction", "F.silu(beta * x) / beta forward with no beta = 0 case",
            "SwishFunction's output contains inf or nan where the true value is finite",
            _swish(READ + RETURN, "        ctx.save_for_backward(x, beta)\n"
                   "        return F.silu(beta * x) / beta")),
]

# Correct since the Function contract's rule 2 (issue 67): autograd's engine sums a gradient of a
# shape beta broadcasts to down to beta's, and records the sum under create_graph=True. Once
# mistakes.
UNUSUAL += [
    Unusual("SwishFunction", "grad_beta of x's shape, left for the engine to sum",
            _swish(READ + GATED.replace("(grad_output * x * x * ds).sum()",
                                        "grad_output * x * x * ds"))),
]


STASH = "_kept = {}\n"


SWISH = _swish(READ + RETURN)


SAVES_Y = ("        y = x * torch.sigmoid(beta * x)\n        ctx.save_for_backward(x, beta, y)\n"
           "        return y")


WHERE_PATCH = _swish("        x, beta, y = ctx.saved_tensors\n"
                     "        s = torch.where(x != 0, y / torch.where(x != 0, x, 1.0), 0.5)\n"
                     "        ds = s * (1 - s)\n" + RETURN, SAVES_Y)


SWISH_CACHE = _swish("        x, beta = ctx.saved_tensors\n        if not hasattr(ctx, 's'):\n"
                     "            ctx.s = torch.sigmoid(beta * x)\n        s = ctx.s\n"
                     "        ds = s * (1 - s)\n" + RETURN)


HINT = "in backward: the contract keeps tensors only with ctx.save_for_backward"


CLAMPED = "s = 1 / (1 + torch.exp(-(beta * x).clamp(-80, 80)))"


TAIL = "wrong in the sigmoid's saturated tail"


# Right in the bulk, wrong in the sigmoid's saturated tail (1 + tanh rounds to 0 there):
# a mistake since the tail is graded relatively (listed below).
TANH_SIGMOID_SAVES_Y = _swish("        x, beta, y = ctx.saved_tensors\n"
                              "        s = 0.5 * (1 + torch.tanh(0.5 * beta * x))\n"
                              "        gx = grad_output * (s + beta * y * (1 - s)) if "
                              "ctx.needs_input_grad[0] else None\n"
                              "        gb = torch.einsum('...,...->', grad_output, y * x * (1 - s))"
                              " if ctx.needs_input_grad[1] else None\n        return gx, gb",
                              "        y = x * torch.sigmoid(beta * x)\n"
                              "        ctx.save_for_backward(x, beta, y)\n        return y")


# Right in the bulk, wrong in the sigmoid's saturated tail (1 + tanh rounds to 0 there):
# a mistake since the tail is graded relatively (listed below).
TANH_SIGMOID = _swish("        x, beta = ctx.saved_tensors\n"
                      "        t = torch.tanh(beta * x / 2)\n"
                      "        s, ds = (1 + t) / 2, (1 - t * t) / 4\n"
                      "        gx = grad_output * (s + beta * x * ds) if ctx.needs_input_grad[0] "
                      "else None\n"
                      "        gb = torch.einsum('...,...,...->', grad_output, x * x, ds) "
                      "if ctx.needs_input_grad[1] else None\n"
                      "        return gx, gb")


SIDE_TABLE = ("import weakref\n_SIDE = weakref.WeakKeyDictionary()\n"
              "class SwishFunction(torch.autograd.Function):")


POPPED = edit(SWISH, ("class SwishFunction(torch.autograd.Function):", SIDE_TABLE),
              ("        ctx.save_for_backward(x, beta)\n",
               "        ctx.save_for_backward(x, beta)\n        _SIDE[ctx] = (x, beta)\n"),
              ("        x, beta = ctx.saved_tensors\n",
               "        _ = ctx.saved_tensors\n        x, beta = _SIDE.pop(ctx)\n"))


DEFAULT_CACHE = edit(
    SWISH, ("    def backward(ctx, grad_output):\n", "    def backward(ctx, grad_output, _cache={}):\n"),
    ("        s = torch.sigmoid(beta * x)\n",
     "        key = (tuple(x.shape), float(beta), x.dtype, torch.is_grad_enabled())\n"
     "        s = _cache.get(key)\n"
     "        if s is None or torch.is_grad_enabled():\n"
     "            s = _cache[key] = torch.sigmoid(beta * x)\n"))


SOLUTION = _swish(READ + SCALED)
SWISH_GATED = _swish(READ + GATED)
SOLUTION_GATED = _swish(READ + GATED.replace("x * x * ds", "x * ds * x"))


def _tiny_branch(threshold: str, solution: str = SOLUTION) -> str:
    """The solution with sigma linearised around 0 where |beta| < threshold."""
    return edit(solution, (
        "        s = torch.sigmoid(beta * x)\n        ds = s * (1 - s)\n",
        f"        if abs(beta.item()) < {threshold}:  # 'beta is about 0': linearise sigma\n"
        "            s = 0.5 + beta * x / 4\n            ds = torch.full_like(x, 0.25)\n"
        "        else:\n            s = torch.sigmoid(beta * x)\n            ds = s * (1 - s)\n"))


TINY = "treat a tiny beta apart"


MISTAKES += [
    Mistake("SwishFunction", "beta == 0 special-cased in backward with constants",
            "right at beta = 1.3 and -0.7 but wrong at beta = 0", _swish(
                "        x, beta = ctx.saved_tensors\n"
                "        if beta.item() == 0.0:\n"
                "            return grad_output * 0.5, (grad_output * x * x).sum() * 0.25\n"
                + READ + RETURN)),
    Mistake("SwishFunction", "sigmoid from beta.abs() and a where on beta's sign",
            "right at beta = 1.3 and -0.7 but wrong at beta = 0", _swish(
                "        x, beta = ctx.saved_tensors\n"
                "        t = torch.sigmoid(beta.abs() * x)\n"
                "        s = torch.where(beta >= 0, t, 1 - t)\n"
                "        ds = s * (1 - s)\n" + RETURN)),
    Mistake("SwishFunction", "(x, beta) in a module dict keyed by id(ctx)",
            "SwishFunction's backward reads x and beta from somewhere other than "
            "ctx.saved_tensors", STASH + _swish(
                "        x, beta = _kept[id(ctx)]\n        s = torch.sigmoid(beta * x)\n"
                "        ds = s * (1 - s)\n"
                "        return grad_output * (s + beta * x * ds), (grad_output * x * x * ds).sum()",
                "        _kept[id(ctx)] = (x, beta)\n        return x * torch.sigmoid(beta * x)")),
    Mistake("SwishFunction", "grad_beta as a mean times numel: nan on an empty x",
            "grad_beta contains inf or nan where the true gradient is finite, with x empty",
            edit(SWISH, (".sum()", ".mean() * x.numel()"))),
    Mistake("SwishFunction", "beta on a module-level stack, popped in backward",
            "SwishFunction's backward used another call's beta",
            "_BETAS = []\n" + _swish(
                READ.replace("x, beta = ctx.saved_tensors", "x, _ = ctx.saved_tensors\n"
                             "        beta = _BETAS.pop()") + SCALED,
                "        ctx.save_for_backward(x, beta)\n        _BETAS.append(beta)\n"
                "        return x * torch.sigmoid(beta * x)")),
    Mistake("SwishFunction", "computes and returns float64 for a float32 x",
            "SwishFunction's output has dtype torch.float64 but should have dtype torch.float32",
            edit(SWISH, ("        return x * torch.sigmoid(beta * x)",
                         "        return x.double() * torch.sigmoid(beta.double() * x.double())"))),
    Mistake("SwishFunction", "grad_beta from x.detach()",
            "the derivative of SwishFunction's backward with respect to x is wrong in grad_beta",
            edit(SWISH, ("(grad_output * x * x * ds).sum()",
                         "(grad_output * x.detach() ** 2 * torch.sigmoid(beta * x.detach())"
                         " * (1 - torch.sigmoid(beta * x.detach()))).sum()"))),
    Mistake("SwishFunction", "x.view(-1) in backward: fails on a transposed x",
            "view size is not compatible",
            edit(SWISH, ("(grad_output * x * x * ds).sum()",
                         "torch.dot((grad_output * ds * x).reshape(-1), x.view(-1))"))),
    Mistake("SwishFunction", "z clamped to +-15 in forward and backward",
            "SwishFunction's output is wrong: largest error",
            SWISH.replace("torch.sigmoid(beta * x)", "torch.sigmoid((beta * x).clamp(-15, 15))")),
    Mistake("SwishFunction", "ds/dbeta as (x / beta) ds/dx under a where on beta == 0",
            "wrong at beta = 0: backward treats beta = 0 apart",
            _swish("        x, beta = ctx.saved_tensors\n        s = torch.sigmoid(beta * x)\n"
                   "        ds_dx = beta * s * (1 - s)\n"
                   "        ds_dbeta = torch.where(beta == 0, x * s * (1 - s), x / beta * ds_dx)\n"
                   "        return grad_output * (s + x * ds_dx), (grad_output * x * ds_dbeta).sum()")),
    Mistake("SwishFunction", "beta's needs-grad flag kept in a global, set in forward",
            "read which inputs need grad from another call",
            "_BETA_NEEDS_GRAD = [False]\n" + edit(
                SWISH, ("        ctx.save_for_backward(x, beta)\n",
                        "        _BETA_NEEDS_GRAD[0] = beta.requires_grad\n"
                        "        ctx.save_for_backward(x, beta)\n"),
                ("(grad_output * x * x * ds).sum()",
                 "(grad_output * x * x * ds).sum() if _BETA_NEEDS_GRAD[0] else None"))),
    Mistake("SwishFunction", "ctx.needs_input_grad copied into a global in forward",
            "read which inputs need grad from another call",
            "_NEEDS = [True, True]\n" + edit(
                SWISH, ("        ctx.save_for_backward(x, beta)\n",
                        "        _NEEDS[:] = [x.requires_grad, beta.requires_grad]\n"
                        "        ctx.save_for_backward(x, beta)\n"),
                (RETURN, "        return (grad_output * (s + beta * x * ds) if _NEEDS[0] else "
                         "None,\n                (grad_output * x * x * ds).sum() if _NEEDS[1] "
                         "else None)"))),
    Mistake("SwishFunction", "clamps beta * x to +-30 in backward",
            "so it stops following sigma's tail",
            edit(SWISH, ("s = torch.sigmoid(beta * x)",
                         "s = torch.sigmoid((beta * x).clamp(-30, 30))"))),
    Mistake("SwishFunction", "saves beta.detach(), as if beta were a hyper-parameter",
            "made by .detach()", edit(_swish(READ + RETURN), (
                "ctx.save_for_backward(x, beta)", "ctx.save_for_backward(x, beta.detach())"))),
    Mistake("SwishFunction", "sigmoid memoised in a global keyed by x.data_ptr() and beta",
            "SwishFunction.backward kept state outside ctx: _cache in a module global",
            "_cache = {}\n" + edit(
                SWISH, ("        s = torch.sigmoid(beta * x)\n",
                        "        key = (x.data_ptr(), x.shape, x.dtype, float(beta))\n"
                        "        if key not in _cache or torch.is_grad_enabled():\n"
                        "            _cache[key] = torch.sigmoid(beta * x)\n"
                        "        s = _cache[key]\n"))),
    Mistake("SwishFunction", "beta x clamped to +-700 before 1 / (1 + exp(-z)): nan float32 "
            "second derivatives past |beta x| = 88.7",
            "is nan at x = -500 and -77, where beta x = -650 and -100.1 (float32), while the first "
            "derivatives there are finite: your backward's exp returned inf",
            edit(SWISH, ("        s = torch.sigmoid(beta * x)\n",
                         "        z = (beta * x).clamp(-700, 700)\n"
                         "        s = 1 / (1 + torch.exp(-z))\n"))),
    Mistake("SwishFunction", "s = y / x with 0.5 patched in at x = 0 by torch.where",
            "its backward picks a value with torch.where at x = 0", WHERE_PATCH, named=True),
    Mistake("SwishFunction", "caches the sigmoid as ctx.s in backward",
            "SwishFunction.backward sets ctx.s (a tensor) " + HINT, SWISH_CACHE, named=True),
    Mistake("SwishFunction", "caches the sigmoid's derivative as ctx.ds in backward, every call",
            "SwishFunction.backward sets ctx.ds (a tensor) " + HINT,
            _swish(READ + "        ctx.ds = ds\n" + RETURN), named=True),
    Mistake("SwishFunction", "beta * x clamped to +-80 in backward (1 / (1 + exp(-z)))", TAIL,
            edit(SWISH, ("s = torch.sigmoid(beta * x)", CLAMPED)), named=True),
    Mistake("SwishFunction", "beta * x clamped to +-80 for a float32 x only", TAIL,
            edit(SWISH, ("s = torch.sigmoid(beta * x)",
                         "z = beta * x\n        z = z.clamp(-80, 80) if z.dtype == torch.float32 "
                         "else z\n        s = torch.sigmoid(z)"))),
    Mistake("SwishFunction", "beta * x clamped to +-80 in beta's gradient only",
            "your gradient for beta is " + TAIL,
            edit(SWISH, ("(grad_output * x * x * ds).sum()",
                         "(grad_output * x * x * torch.sigmoid((beta * x).clamp(-80, 80))"
                         " * torch.sigmoid(-(beta * x).clamp(-80, 80))).sum()"))),
    # the value as x (1 - sigma(-z)) or through tanh: 1 - sigma(-z) and 1 + tanh(z / 2) cancel
    # to 0 where sigma(z) is tiny but normal (a fresh review's answers, which passed)
    Mistake("SwishFunction", "forward as x - x * sigmoid(-beta x)",
            "your forward's value is wrong in the sigmoid's saturated tail",
            edit(SWISH, ("return x * torch.sigmoid(beta * x)",
                         "return x - x * torch.sigmoid(-beta * x)"))),
    Mistake("SwishFunction", "forward as x (1 + tanh(beta x / 2)) / 2",
            "your forward's value is wrong in the sigmoid's saturated tail",
            edit(SWISH, ("return x * torch.sigmoid(beta * x)",
                         "return 0.5 * x * (1 + torch.tanh(0.5 * beta * x))"))),
    # Accepted as unusual before the tail was graded relatively:
    # 1 + tanh(z / 2) cancels to 0 where sigma(z) is tiny but normal.
    Mistake("SwishFunction", "sigmoid as (1 + tanh(z / 2)) / 2, output saved, einsum grad_beta",
            "which torch.sigmoid keeps to full relative precision", TANH_SIGMOID_SAVES_Y),
    Mistake("SwishFunction", "sigmoid as (1 + tanh(z / 2)) / 2, grad_beta by einsum, "
            "needs_input_grad", "which step of your backward rounds it to 0", TANH_SIGMOID),
    Mistake("SwishFunction", "sigmoid from tanh, beta gradient as a dot product",
            "which step of your backward rounds it to 0", TANH_SIGMOID_DOT),
    Mistake("SwishFunction", "(x, beta) in a WeakKeyDictionary keyed by ctx, popped in backward",
            "first run consumed state it reads", POPPED, named=True),
    Mistake("SwishFunction", "(x, beta) in a WeakKeyDictionary keyed by ctx, read by subscript",
            "reads x and beta from somewhere other than ctx.saved_tensors",
            edit(POPPED, ("_SIDE.pop(ctx)", "_SIDE[ctx]")), named=True),
    Mistake("SwishFunction", "backward computes in float32 for float64 inputs",
            "backward computes in float32 for float64 inputs",
            edit(SWISH, ("        s = torch.sigmoid(beta * x)\n",
                         "        x, beta, grad_output = x.float(), beta.float(), "
                         "grad_output.float()\n        s = torch.sigmoid(beta * x)\n")),
            named=True),
    # Once named only as "the derivative ... with respect to beta is wrong": the gradients come
    # back float64 (no value a float32 number), so only the dtype of backward's own steps shows it
    Mistake("SwishFunction", "sigmoid computed in float32 and cast back, for float64 inputs",
            "backward computes in float32 for float64 inputs: with every input float64, its cast "
            "(.float() or .to(torch.float32)) returned a float32 tensor, and its sigmoid",
            edit(SWISH, ("        s = torch.sigmoid(beta * x)\n",
                         "        s = torch.sigmoid((beta * x).float()).to(x.dtype)\n"))),
    Mistake("SwishFunction", "sigma(beta x) cached across calls in a mutable default argument",
            "kept state in its mutable default argument", DEFAULT_CACHE, named=True),
    Mistake("SwishFunction", "sigma linearised where |beta| < 1e-6 (once named as x * x "
            "overflowing)", TINY, _tiny_branch("1e-6")),
    Mistake("SwishFunction", "sigma' as s(-z) - s(-z)^2, which cancels to 0 in the tail (was "
            "asked whether backward clamps beta * x)", "so its term beta x sigma'(beta x) came out",
            edit(SOLUTION, ("        ds = s * (1 - s)\n",
                            "        ds = torch.sigmoid(-beta * x) - torch.sigmoid(-beta * x) ** 2\n"))),
    Mistake("SwishFunction", "grad_beta as (x's gradient - s) * x / beta: nan at beta = 0",
            "(nan, with beta = 0)",
            edit(SOLUTION, ("(grad_output * x * ds * x).sum()",
                            "(grad_output * (s + beta * x * ds - s) * x / beta).sum()"))),
]


UNUSUAL += [
    Unusual("SwishFunction", "1 - s as sigmoid(-z), torch.dot of the flattened tensors", _swish(
        "        x, beta = ctx.saved_tensors\n        z = beta * x\n"
        "        s, t = torch.sigmoid(z), torch.sigmoid(-z)\n"
        "        grad_x = grad_output * (s + z * s * t) if ctx.needs_input_grad[0] else None\n"
        "        grad_beta = (torch.dot((grad_output * x * (s * t)).reshape(-1), x.reshape(-1))\n"
        "                     if ctx.needs_input_grad[1] else None)\n"
        "        return grad_x, grad_beta")),
    Unusual("SwishFunction", "sigmoid from exp(logsigmoid), sigma' as sigma(z) sigma(-z)",
            "import torch.nn.functional as F\n" + _swish(
                "        x, beta = ctx.saved_tensors\n        z = beta * x\n"
                "        s, ds = torch.sigmoid(z), torch.sigmoid(z) * torch.sigmoid(-z)\n"
                "        return (grad_output * s + grad_output * z * ds if ctx.needs_input_grad[0] "
                "else None,\n                torch.sum(grad_output * ds * x * x) if "
                "ctx.needs_input_grad[1] else None)",
                "        ctx.save_for_backward(x, beta)\n"
                "        return x * torch.exp(F.logsigmoid(beta * x))")),
    Unusual("SwishFunction", "grad_beta of shape (1,)",
            edit(SWISH_GATED, ("(grad_output * x * x * ds).sum()",
                         "(grad_output * x * x * ds).reshape(-1).sum(0, keepdim=True)"))),
    Unusual("SwishFunction", "expit and sigmoid(z) * sigmoid(-z), grad_beta summed in float64",
            edit(SWISH_GATED, ("s = torch.sigmoid(beta * x)", "s = torch.special.expit(beta * x)"),
                 ("ds = s * (1 - s)", "ds = torch.sigmoid(beta * x) * torch.sigmoid(-beta * x)"),
                 ("(grad_output * x * x * ds).sum()",
                  "(grad_output * x * ds * x).sum(dtype=torch.float64).to(beta.dtype)"))),
    Unusual("SwishFunction", "saves x, beta and the output; grad_beta as an einsum", """
class SwishFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, beta):
        y = x * torch.exp(F.logsigmoid(beta * x))
        ctx.save_for_backward(x, beta, y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        x, beta, y = ctx.saved_tensors
        s = torch.exp(F.logsigmoid(beta * x))
        one_minus_s = torch.exp(F.logsigmoid(-beta * x))
        grad_x = grad_output * (s + beta * y * one_minus_s) if ctx.needs_input_grad[0] else None
        grad_beta = (torch.einsum("...,...->", grad_output * x, y * one_minus_s)
                     if ctx.needs_input_grad[1] else None)
        return grad_x, grad_beta
"""),
    # correct by the page: x * x overflows only past |x| of about 1.8e19 in float32 (1.3e154 in
    # float64), and the contract's x stays within 1e15 (review 75 met it at x = 1e20)
    Unusual("SwishFunction", "grad_beta as (g * x * x * ds).sum(): x * x overflows at huge x",
            SWISH_GATED),
    Unusual("SwishFunction", "grad_beta as (g * x * x * ds) summed in float64: still inf",
            edit(SWISH_GATED, ("(grad_output * x * x * ds).sum()",
                                   "(grad_output * x * x * ds).sum(dtype=torch.float64)"
                                   ".to(beta.dtype)"))),
    Unusual("SwishFunction", "sigma linearised where |beta| < 1e-200 (passed both checks)",
            _tiny_branch("1e-200", SOLUTION_GATED)),
    # open question, not graded: by the page's relative-accuracy clause this one is wrong where
    # beta * ds goes subnormal, e.g. float32 x = -1e6, beta x = -87 (x within the contract's 1e15)
    Unusual("SwishFunction", "x's gradient as s + beta * ds * x: beta * ds underflows for a tiny "
            "beta (was asked about a 'beta is about 0' branch)",
            edit(SOLUTION_GATED, ("(s + beta * x * ds)", "(s + beta * ds * x)"))),
]


# Rule 3 of the Function contract (backward by hand, memory linear in the sizes), graded in
# lesson 04 too. torch.func.vjp inside backward was unusual before rule 3 was graded here.
MISTAKES += [
    Mistake("SwishFunction", "torch.func.vjp of the composed ops inside backward",
            "SwishFunction.backward calls torch.autograd.grad through torch.func",
            edit(SWISH, (READ + RETURN, "        x, beta = ctx.saved_tensors\n"
                         "        _, vjp = torch.func.vjp(lambda a, b: a * torch.sigmoid(b * a), "
                         "x, beta)\n        return vjp(grad_output)"))),
    Mistake("SwishFunction", "torch.autograd.grad of a recomputed forward inside backward",
            "SwishFunction.backward calls torch.autograd.grad", '\nclass SwishFunction(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, beta):\n        ctx.save_for_backward(x, beta)\n        return x * torch.sigmoid(beta * x)\n    @staticmethod\n    def backward(ctx, grad_output):\n        x, beta = ctx.saved_tensors\n        create = torch.is_grad_enabled()\n        wanted = [t for t, n in zip((x, beta), ctx.needs_input_grad) if n]\n        with torch.enable_grad():\n            y = x * torch.sigmoid(beta * x)\n            grads = iter(torch.autograd.grad(y, wanted, grad_output, create_graph=create))\n        return tuple(next(grads) if n else None for n in ctx.needs_input_grad)\n'),
    Mistake("SwishFunction", "an n x n torch.diag Jacobian",
            "a Jacobian built as a matrix", '\nclass SwishFunction(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, beta):\n        ctx.save_for_backward(x, beta)\n        return x * torch.sigmoid(beta * x)\n    @staticmethod\n    def backward(ctx, grad_output):\n        x, beta = ctx.saved_tensors\n        s = torch.sigmoid(beta * x)\n        ds = s * (1 - s)\n        gx = gb = None\n        if ctx.needs_input_grad[0]:\n            J = torch.diag((s + beta * x * ds).reshape(-1))          # n x n\n            gx = (grad_output.reshape(-1) @ J).reshape(x.shape)\n        if ctx.needs_input_grad[1]:\n            gb = grad_output.reshape(-1) @ (x * x * ds).reshape(-1)   # J_beta is n x 1\n        return gx, gb\n'),
]


# Rule 2 of the Function contract, graded for every exercise since the generic check (issue 67):
# the lesson's solution without its gates returns beta's gradient when only x requires grad.
MISTAKES += [
    Mistake("SwishFunction", "ignores ctx.needs_input_grad: both gradients every call",
            "returned a gradient for beta with only x requiring grad", SOLUTION),
]

# a fresh review (at a38cbc94): beta * x clamped to float64's "safe range" in backward, 148
# times too large at beta x = -705, where sigma is still a normal float
MISTAKES.append(Mistake(
    "SwishFunction", "beta * x clamped to +-700 in backward", "the sigmoid's saturated tail",
    SWISH.replace("        s = torch.sigmoid(beta * x)\n",
                  "        s = torch.sigmoid((beta * x).clamp(-700.0, 700.0))\n", 1)))

# sigma' written with a cosh, exact algebra and accurate in the tail, s from torch.sigmoid: the
# cosh overflows (float64 past |beta x| = 710, float32 past 89; cosh(z / 2) past twice that), the
# division brings the first derivative back to 0, and the second is 0 * inf or inf / inf = nan.
# Named by the op the probe saw return inf, with no advice to use the torch.sigmoid already used
# (review 75's W-S2 and W-S8; the hint once blamed an exp inside 1 / (1 + exp(-z))).
MISTAKES += [
    Mistake("SwishFunction", "sigma' as 1 / (2 + 2 cosh z): nan second derivatives once cosh "
            "overflows", "is nan at x = -615 and 615, where beta x = -799.5 and 799.5 (float64), "
            "while the first derivatives there are finite: your backward's cosh returned inf",
            edit(SOLUTION_GATED, ("        ds = s * (1 - s)\n",
                            "        ds = 1 / (2 + 2 * torch.cosh(beta * x))\n"))),
    Mistake("SwishFunction", "sigma' as 0.25 / cosh(z / 2) ** 2: nan float32 second derivatives "
            "once cosh overflows", "is nan at x = -615 and -500 and 500 and 615, where beta x = "
            "-799.5 and -650 and 650 and 799.5 (float32), while the first derivatives there are "
            "finite: your backward's cosh returned inf",
            edit(SOLUTION_GATED, ("        ds = s * (1 - s)\n",
                            "        ds = 0.25 / torch.cosh(beta * x / 2) ** 2\n"))),
]

# a fresh review (review 75c, S19): forward saves beta.to(x.dtype). With beta in x's dtype that is
# beta itself, so every check passed; with a float64 beta and a float32 x it is a rounded copy,
# a constant to double backward (torch's own ops round a 0-d beta to x's dtype where they meet x,
# so the first derivatives match the solution's bit for bit: the copy is what is seen).
MISTAKES.append(Mistake(
    "SwishFunction", "saves beta rounded to x's dtype (beta.to(x.dtype))",
    "saved beta rounded to x's dtype", _swish(
        "        x, beta = ctx.saved_tensors\n        s = torch.sigmoid(beta * x)\n"
        "        ds = s * (1 - s)\n" + GATED,
        "        b = beta.to(x.dtype)\n        ctx.save_for_backward(x, b)\n"
        "        return x * torch.sigmoid(b * x)")))

# a fresh review (review77, W9): both gradients computed and returned in float64 for float32
# inputs, which autograd casts back without a word (rule 2's dtype)
MISTAKES += [
    Mistake("SwishFunction", "computes and returns both gradients in float64 for float32 inputs",
            "SwishFunction.backward returned grad_x in float64 for a float32 x",
            _swish("        x, beta = ctx.saved_tensors\n"
                   "        xd, bd, gd = x.double(), beta.double(), grad_output.double()\n"
                   "        s = torch.sigmoid(bd * xd)\n        ds = s * (1 - s)\n"
                   "        return (gd * (s + bd * xd * ds) if ctx.needs_input_grad[0] else None,\n"
                   "                (gd * xd * xd * ds).sum() if ctx.needs_input_grad[1] else None)")),
]

# a newcomer instructor's planted mistake (trial 81): the chain rule through z = beta x with
# dz/dx = beta left out of grad_x; "cause not proven" until a probe named it
MISTAKES += [
    Mistake("SwishFunction", "chain rule's inner factor beta left out of grad_x",
            "the chain rule through z = beta·x multiplies sigmoid'(z) by dz/dx",
            _swish(READ + "        return grad_output * (s + x * ds), "
                   "(grad_output * x * x * ds).sum()")),
]
