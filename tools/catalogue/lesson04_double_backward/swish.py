"""Lesson 04: answers with known verdicts for SwishFunction, whose backward must itself be
differentiable, among them a beta kept on the Function class, right for one call at a time and
wrong for two calls in one graph (issue 37)."""

from .. import Mistake, Unusual


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
# RETURN with x multiplied last (x * x overflows at huge x since review 59f): for mistakes whose
# own flaw the battery names after the huge-x check would
SCALED = RETURN.replace("x * x * ds", "x * ds * x")
ONCE = "\n    @once_differentiable"

# Once unusual; wrong in the sigmoid's saturated tail since review 59c (listed there).
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
            _swish(READ + "        grad_x = grad_output * (s + beta * x * ds)\n"
                   "        grad_beta = torch.einsum('...,...->', grad_output * x * ds, x)\n"
                   "        return grad_x, grad_beta",
                   "        ctx.save_for_backward(x, beta)\n"
                   "        return F.silu(beta * x) / beta if bool(beta != 0) else x / 2")),
    Unusual("SwishFunction", "autograd inside backward, create_graph=torch.is_grad_enabled()",
            _swish("        x, beta = ctx.saved_tensors\n        with torch.enable_grad():\n"
                   "            wanted = [t for t in (x, beta) if t.requires_grad]\n"
                   "            y = x * torch.sigmoid(beta * x)\n"
                   "            grads = iter(torch.autograd.grad(y, wanted, grad_output, "
                   "create_graph=torch.is_grad_enabled()))\n"
                   "        return tuple(next(grads) if t.requires_grad else None "
                   "for t in (x, beta))")),
]

MISTAKES = [
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
            "derivatives once exp overflows", "is nan at x = -615 (|beta x| = 799.5: exp overflows "
            "float64 past 709), while the first derivatives there are finite: an op in backward "
            "is finite there but its derivative is not",
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
            "SwishFunction's backward is marked @once_differentiable",
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
    Mistake("SwishFunction", "s = y / x: NaN where x = 0", "NaN exactly where x = 0",
            _swish("        x, beta, y = ctx.saved_tensors\n        s = y / x\n"
                   "        return grad_output * (s + beta * y * (1 - s)), "
                   "(grad_output * x * y * (1 - s)).sum()",
                   "        y = x * torch.sigmoid(beta * x)\n"
                   "        ctx.save_for_backward(x, beta, y)\n        return y")),
    Mistake("SwishFunction", "sigmoid recomputed from exp(-|z|) with torch.where: wrong second "
            "derivative at x = 0", "right everywhere but at x = 0",
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
            "derivatives past |beta x| = 709", "is nan at x = -615 and 615 (|beta x| = 799.5: exp "
            "overflows float64 past 709), while the first derivatives there are finite: backward "
            "builds s with a torch.where",
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
    Mistake("SwishFunction", "needs_input_grad indices swapped", "SwishFunction's backward tests "
            "the other input's flag",
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
            _swish(READ + "        return grad_output * (s + beta * x * ds), "
                   "grad_output * x * x * ds")),
]
