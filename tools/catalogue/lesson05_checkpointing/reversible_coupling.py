"""Lesson 05's transfer exercise: answers with known verdicts for ReversibleCoupling, which
saves only its outputs y1 and y2 ("no input" in any form) and inverts them in backward: the
order of the inversion, which calls are recorded, both outputs' gradients, the parameters'
.grad, and the saved outputs left unwritten."""

from .. import Mistake, Unusual, edit

FORWARD = ("        ctx.f, ctx.g = f, g\n        y1 = x1 + f(x2)\n        y2 = x2 + g(y1)\n"
           "        ctx.save_for_backward(y1, y2)\n        return y1, y2")
INVERT = ("        y1, y2 = ctx.saved_tensors\n        with torch.no_grad():\n"
          "            x2 = y2 - ctx.g(y1)\n            x1 = y1 - ctx.f(x2)\n"
          "        x1, x2 = x1.requires_grad_(), x2.requires_grad_()\n")
RECOMPUTE = ("        with torch.enable_grad():\n            z1 = x1 + ctx.f(x2)\n"
             "            z2 = x2 + ctx.g(z1)\n")


def _coupling(backward: str, forward: str = FORWARD) -> str:
    return f"""
class ReversibleCoupling(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x1, x2, f, g):
{forward}

    @staticmethod
    def backward(ctx, grad_y1, grad_y2):
{backward}
"""


RIGHT = "        torch.autograd.backward((z1, z2), (grad_y1, grad_y2))\n"
RETURN = "        return x1.grad, x2.grad, None, None"


def _gate(code: str) -> str:
    """``code`` with backward's last return ``return a, b, None, None`` gated on
    ctx.needs_input_grad (rule 2: None for an input that needs no gradient), as a careful
    learner writes it: the unusual answers' form."""
    head, last = code.rstrip("\n").rsplit("\n", 1)
    a, b, *rest = last.strip().removeprefix("return ").split(", ")
    assert rest == ["None", "None"], last
    return (f"{head}\n        n1, n2 = ctx.needs_input_grad[:2]\n"
            f"        return {a} if n1 else None, {b} if n2 else None, None, None\n")

# save_for_backward holds only y1 and y2, but forward ran f and g with grad on, so their ops
# saved x2 and activations while forward ran (the pre-hooks on f and g see grad on)
EAGER = ("        ctx.f, ctx.g = f, g\n        with torch.enable_grad():\n"
         "            y1 = x1 + f(x2)\n            y2 = x2 + g(y1)\n"
         "        ctx.save_for_backward(y1, y2)\n        return y1, y2")

UNUSUAL = [
    Unusual("ReversibleCoupling", "inverts with autograd on, then recomputes from detached copies",
            _gate(_coupling("        y1, y2 = ctx.saved_tensors\n        with torch.enable_grad():\n"
                            "            x2 = y2 - ctx.g(y1)\n            x1 = y1 - ctx.f(x2)\n"
                            "            x1, x2 = x1.detach().requires_grad_(), "
                            "x2.detach().requires_grad_()\n"
                            "            z1 = x1 + ctx.f(x2)\n            z2 = x2 + ctx.g(z1)\n"
                            + RIGHT + RETURN))),
    Unusual("ReversibleCoupling", "the interleaved backward of public Reformer code "
            "(Rick-McCoy/Reformer-pytorch, after RevTorch): g's backward, then invert, then f's",
            _gate(_coupling("        y1, y2 = (t.detach() for t in ctx.saved_tensors)\n"
                            "        y1.requires_grad = True\n"
                            "        with torch.enable_grad():\n            gy1 = ctx.g(y1)\n"
                            "            gy1.backward(grad_y2)\n"
                            "        with torch.no_grad():\n            x2 = y2 - gy1\n"
                            "            x1_grad = grad_y1 + y1.grad\n"
                            "        x2.requires_grad = True\n"
                            "        with torch.enable_grad():\n            fx2 = ctx.f(x2)\n"
                            "            fx2.backward(x1_grad)\n"
                            "        with torch.no_grad():\n            x2_grad = grad_y2 + x2.grad\n"
                            "        return x1_grad, x2_grad, None, None"))),
    Unusual("ReversibleCoupling", "detach instead of no_grad, one backward on the summed products",
            _gate(_coupling("        y1, y2 = ctx.saved_tensors\n"
                            "        x2 = (y2 - ctx.g(y1)).detach().requires_grad_()\n"
                            "        x1 = (y1 - ctx.f(x2)).detach().requires_grad_()\n" + RECOMPUTE +
                            "            loss = (z1 * grad_y1).sum() + (z2 * grad_y2).sum()\n"
                            "        loss.backward()\n        return x1.grad, x2.grad, None, None"))),
    Unusual("ReversibleCoupling", "no no_grad: backward's own grad mode is off while inverting",
            _gate(_coupling("        y1, y2 = ctx.saved_tensors\n"
                            "        x2 = (y2 - ctx.g(y1)).requires_grad_()\n"
                            "        x1 = (y1 - ctx.f(x2)).requires_grad_()\n" + RECOMPUTE + RIGHT
                            + RETURN))),
    # review 52: RevNet's backward (Gomez et al., Algorithm 1), f and g each called once under
    # grad on fresh leaves, the call that rebuilds an input also giving its vector-Jacobian
    # product, grad_y2's direct term kept
    Unusual("ReversibleCoupling", "RevNet's one-call backward, f and g called once each",
            _gate(_coupling("        y1, y2 = ctx.saved_tensors\n"
                            "        z1 = y1.detach().requires_grad_()\n"
                            "        with torch.enable_grad():\n            gz = ctx.g(z1)\n"
                            "        x2 = (y2 - gz).detach()\n"
                            "        torch.autograd.backward(gz, grad_y2)\n"
                            "        total_y1 = grad_y1 + z1.grad\n"
                            "        x2 = x2.requires_grad_()\n"
                            "        with torch.enable_grad():\n            fx = ctx.f(x2)\n"
                            "        torch.autograd.backward(fx, total_y1)\n"
                            "        return total_y1, grad_y2 + x2.grad, None, None"))),
]

MISTAKES = [
    Mistake("ReversibleCoupling", "inverts in place, into the saved outputs (the caller's y1 "
            "and y2 are overwritten)", "backward changes a tensor that forward saved, in place",
            _coupling(INVERT.replace("y2 - ctx.g(y1)", "y2.sub_(ctx.g(y1))")
                      .replace("y1 - ctx.f(x2)", "y1.sub_(ctx.f(x2))")
                      .replace("x1.requires_grad_(), x2.requires_grad_()",
                               "x1.detach().requires_grad_(), x2.detach().requires_grad_()")
                      + RECOMPUTE + RIGHT + RETURN)),
    Mistake("ReversibleCoupling", "frees the saved outputs' storage in backward (the caller's "
            "y1 and y2 with it)", "backward freed the memory of y1, which the caller holds",
            _coupling(INVERT + "        y1.untyped_storage().resize_(0)\n"
                      "        y2.untyped_storage().resize_(0)\n" + RECOMPUTE + RIGHT + RETURN)),
    Mistake("ReversibleCoupling", "saves the inputs", "ReversibleCoupling saved its input x1",
            _coupling("        x1, x2 = (t.detach().requires_grad_() for t in ctx.saved_tensors)\n"
                      + RECOMPUTE + RIGHT + RETURN,
                      "        ctx.f, ctx.g = f, g\n        ctx.save_for_backward(x1, x2)\n"
                      "        y1 = x1 + f(x2)\n        return y1, x2 + g(y1)"),
            named=True, nbgrader=True),
    Mistake("ReversibleCoupling", "autograd.grad: parameters get nothing", "the parameters of f "
            "and g got no gradient",
            _coupling(INVERT + RECOMPUTE +
                      "        grad_x1, grad_x2 = torch.autograd.grad((z1, z2), (x1, x2), "
                      "(grad_y1, grad_y2))\n        return grad_x1, grad_x2, None, None"),
            named=True),
    Mistake("ReversibleCoupling", "recomputes with gradients off", "recomputed f and g with "
            "gradients off",
            _coupling(INVERT + "        z1 = x1 + ctx.f(x2)\n        z2 = x2 + ctx.g(z1)\n"
                      + RIGHT + RETURN)),
    Mistake("ReversibleCoupling", "saves f(x2), an activation", "saved an activation",
            _coupling(INVERT + RECOMPUTE + RIGHT + RETURN,
                      "        ctx.f, ctx.g = f, g\n        fx2 = f(x2)\n        y1 = x1 + fx2\n"
                      "        y2 = x2 + g(y1)\n        ctx.save_for_backward(y1, y2, fx2)\n"
                      "        return y1, y2")),
    Mistake("ReversibleCoupling", "inverts in the wrong order", "called f on y2, but f takes x2",
            _coupling("        y1, y2 = ctx.saved_tensors\n        with torch.no_grad():\n"
                      "            x1 = y1 - ctx.f(y2)\n            x2 = y2 - ctx.g(y1)\n"
                      "        x1, x2 = x1.requires_grad_(), x2.requires_grad_()\n"
                      + RECOMPUTE + RIGHT + RETURN)),
    # a newcomer instructor's planted slip, once unproven (a wrong x1 gradient): the inverse's sign
    Mistake("ReversibleCoupling", "rebuilds x1 as y1 + f(x2), the inverse's sign wrong",
            "rebuilt x1 wrong: the recomputation ran g on x1 + f(x2) with x1 rebuilt as "
            "y1 + f(x2)", _coupling(INVERT.replace("y1 - ctx.f(x2)", "y1 + ctx.f(x2)")
                                    + RECOMPUTE + RIGHT + RETURN)),
    Mistake("ReversibleCoupling", "rebuilds x2 as y2 + g(y1), the inverse's sign wrong",
            "rebuilt x2 wrong: the recomputation ran f on x2 rebuilt as y2 + g(y1)",
            _coupling(INVERT.replace("y2 - ctx.g(y1)", "y2 + ctx.g(y1)")
                      + RECOMPUTE + RIGHT + RETURN)),
    Mistake("ReversibleCoupling", "recomputes g on the saved y1 (backward would re-enter "
            "itself without end)", "backward re-entered this very backward",
            _coupling(INVERT + "        with torch.enable_grad():\n            z1 = x1 + ctx.f(x2)\n"
                      "            z2 = x2 + ctx.g(y1)\n" + RIGHT + RETURN)),
    Mistake("ReversibleCoupling", "records the inversion under grad and differentiates with "
            "respect to the rebuilt x1 and x2", "gradient for x2 is the true one minus f's "
            "vector-Jacobian product",
            _coupling("        y1, y2 = ctx.saved_tensors\n        with torch.enable_grad():\n"
                      "            x2 = y2 - ctx.g(y1)\n            x1 = y1 - ctx.f(x2)\n"
                      "            z1 = x1 + ctx.f(x2)\n            z2 = x2 + ctx.g(z1)\n"
                      "        grad_x1, grad_x2 = torch.autograd.grad((z1, z2), (x1, x2), "
                      "(grad_y1, grad_y2))\n        return grad_x1, grad_x2, None, None")),
    Mistake("ReversibleCoupling", "backpropagates y1's gradient only", "returned the gradients "
            "of a loss that ignores y2",
            _coupling(INVERT + RECOMPUTE + "        torch.autograd.backward(z1, grad_y1)\n"
                      + RETURN)),
    Mistake("ReversibleCoupling", "backpropagates y2's gradient only", "returned the gradients "
            "of a loss that ignores y1",
            _coupling(INVERT + RECOMPUTE + "        torch.autograd.backward(z2, grad_y2)\n"
                      + RETURN)),
    Mistake("ReversibleCoupling", "RevNet's one pass, grad_y1 left out of x1's gradient",
            "returned the gradients of a loss that ignores y1",
            _coupling("        y1, y2 = (t.detach() for t in ctx.saved_tensors)\n"
                      "        y1.requires_grad = True\n"
                      "        with torch.enable_grad():\n            gy1 = ctx.g(y1)\n"
                      "            gy1.backward(grad_y2)\n"
                      "        with torch.no_grad():\n            x2 = y2 - gy1\n"
                      "            x1_grad = y1.grad\n"
                      "        x2.requires_grad = True\n"
                      "        with torch.enable_grad():\n            fx2 = ctx.f(x2)\n"
                      "            fx2.backward(x1_grad)\n"
                      "        with torch.no_grad():\n            x2_grad = grad_y2 + x2.grad\n"
                      "        return x1_grad, x2_grad, None, None")),
    Mistake("ReversibleCoupling", "inverts with the wrong output, g(y2)", "called g on y2, but g "
            "takes y1", _coupling(INVERT.replace("ctx.g(y1)", "ctx.g(y2)") + RECOMPUTE + RIGHT
                                  + RETURN)),
    Mistake("ReversibleCoupling", "returns the two gradients swapped", "returned the gradients of "
            "x1 and x2 swapped", _coupling(INVERT + RECOMPUTE + RIGHT
                                           + "        return x2.grad, x1.grad, None, None")),
    Mistake("ReversibleCoupling", "recomputes g on a detached y1", "never ran g under grad",
            _coupling(INVERT + RECOMPUTE.replace("ctx.g(z1)", "ctx.g(y1.detach())") + RIGHT
                      + RETURN)),
    Mistake("ReversibleCoupling", "backpropagates the saved outputs (backward would re-enter "
            "itself without end)", "backward re-entered this very backward",
            _coupling(INVERT + RECOMPUTE + "        torch.autograd.backward((y1, y2), "
                      "(grad_y1, grad_y2))\n" + RETURN)),
    Mistake("ReversibleCoupling", "reconstructs x2 from y2 under grad (backward would re-enter "
            "itself without end)", "backward re-entered this very backward",
            _coupling("        y1, y2 = ctx.saved_tensors\n        with torch.enable_grad():\n"
                      "            x2 = y2 - ctx.g(y1.detach())\n            x1 = y1 - ctx.f(x2)\n"
                      "            z1 = x1 + ctx.f(x2)\n            z2 = x2 + ctx.g(z1)\n"
                      + RIGHT + RETURN)),
    Mistake("ReversibleCoupling", "recomputes through ReversibleCoupling.apply (each backward "
            "would start another, without end)", "ReversibleCoupling.backward ran inside itself",
            _coupling(INVERT + "        with torch.enable_grad():\n"
                      "            z1, z2 = ReversibleCoupling.apply(x1, x2, ctx.f, ctx.g)\n"
                      + RIGHT + RETURN)),
    # the contract's "no input" clause, in any form
    Mistake("ReversibleCoupling", "keeps a NumPy copy of the input x2 on ctx",
            "keeps a NumPy copy of its input x2 as ctx.x2_copy", _coupling(
                INVERT + RECOMPUTE + RIGHT + RETURN, edit(
                    FORWARD, ("        ctx.save_for_backward(y1, y2)",
                              "        ctx.x2_copy = x2.detach().cpu().numpy().copy()\n"
                              "        ctx.save_for_backward(y1, y2)")))),
    # a flattened copy, compared by value whatever its shape (review 05: once passed, only
    # arrays of the input's shape were compared); backward reads x2 from it, "no drift"
    Mistake("ReversibleCoupling", "keeps a flattened NumPy copy of x2 on ctx and reads x2 back "
            "from it", "keeps a NumPy copy of its input x2 as ctx.x2_flat", _coupling(
                "        y1, y2 = ctx.saved_tensors\n"
                "        x2 = torch.from_numpy(ctx.x2_flat).reshape(y2.shape).to(y2)\n"
                "        with torch.no_grad():\n            x1 = y1 - ctx.f(x2)\n"
                "        x1, x2 = x1.requires_grad_(), x2.clone().requires_grad_()\n"
                + RECOMPUTE + RIGHT + RETURN, edit(
                    FORWARD, ("        ctx.save_for_backward(y1, y2)",
                              "        ctx.x2_flat = x2.detach().cpu().numpy().ravel().copy()\n"
                              "        ctx.save_for_backward(y1, y2)")))),
    Mistake("ReversibleCoupling", "keeps f(x2) on ctx as a NumPy array", "keeps a NumPy copy "
            "of f's activation f(x2) as ctx.fx", _coupling(
                INVERT + RECOMPUTE + RIGHT + RETURN, edit(
                    FORWARD, ("        y1 = x1 + f(x2)\n",
                              "        fx = f(x2)\n        ctx.fx = fx.cpu().numpy()\n"
                              "        y1 = x1 + fx\n")))),
    Mistake("ReversibleCoupling", "keeps x1 on ctx as a Python list", "keeps a list copy of its "
            "input x1 as ctx.x1_values", _coupling(
                INVERT + RECOMPUTE + RIGHT + RETURN, edit(
                    FORWARD, ("        ctx.save_for_backward(y1, y2)",
                              "        ctx.x1_values = x1.tolist()\n"
                              "        ctx.save_for_backward(y1, y2)")))),
    Mistake("ReversibleCoupling", "saves a clone of the output y2", "saved a copy of its output "
            "y2", _coupling(INVERT + RECOMPUTE + RIGHT + RETURN, edit(
                FORWARD, ("save_for_backward(y1, y2)", "save_for_backward(y1, y2.clone())")))),
    # a widened copy is an output only where the output is float64: the float32 case saves a
    # second tensor, twice the output's bytes (issue 45: the bytes a contract lets forward save)
    Mistake("ReversibleCoupling", "saves a float64 copy of the output y1 for accuracy",
            "saved a float64 copy of its float32 output y1", _coupling(
                INVERT + RECOMPUTE + RIGHT + RETURN, edit(
                    FORWARD, ("save_for_backward(y1, y2)", "save_for_backward(y1.double(), y2)")))),
    # .contiguous() is the output itself where the output is contiguous: the transposed case
    # saves a copy
    Mistake("ReversibleCoupling", "saves y2.contiguous(), a copy of a transposed output",
            "saved a copy of its output y2", _coupling(
                INVERT + RECOMPUTE + RIGHT + RETURN, edit(
                    FORWARD, ("save_for_backward(y1, y2)",
                              "save_for_backward(y1, y2.contiguous())")))),
    Mistake("ReversibleCoupling", "forward runs f and g under torch.enable_grad(), saving only "
            "y1 and y2", "ReversibleCoupling's forward ran f and g with grad on",
            _coupling(INVERT + RECOMPUTE + RIGHT + RETURN, EAGER)),
    Mistake("ReversibleCoupling", "forward runs f alone under torch.enable_grad()",
            "ReversibleCoupling's forward ran f with grad on", _coupling(
                INVERT + RECOMPUTE + RIGHT + RETURN, edit(
                    EAGER, ("            y2 = x2 + g(y1)\n", ""),
                    ("        ctx.save_for_backward", "        y2 = x2 + g(y1)\n"
                     "        ctx.save_for_backward")))),
    # torch.autograd.backward with inputs= limited to x1 and x2: the parameters get no .grad
    Mistake("ReversibleCoupling", "torch.autograd.backward with inputs=[x1, x2] only",
            "the parameters of f and g got no gradient (f.0.weight.grad is None): backward "
            "passed inputs=", _coupling(INVERT + RECOMPUTE + RIGHT.replace(
                "(grad_y1, grad_y2))", "(grad_y1, grad_y2), inputs=[x1, x2])") + RETURN)),
    # f and g kept on the class pass every check that runs one coupling at a time; two
    # couplings in one graph share the last f and g (issue 37)
    Mistake("ReversibleCoupling", "f and g kept on the class", "ReversibleCoupling.forward sets "
            "ReversibleCoupling.f: a class attribute is shared by every call", _coupling(
                (INVERT + RECOMPUTE + RIGHT + RETURN).replace("ctx.f", "ReversibleCoupling.f")
                .replace("ctx.g", "ReversibleCoupling.g"),
                edit(FORWARD, ("ctx.f, ctx.g = f, g",
                               "ReversibleCoupling.f, ReversibleCoupling.g = f, g")))),
    # forward's call of f kept as functools.partial(f, x2) on ctx "to skip one inversion": the
    # input x2 hidden in a partial (review 05b: reachable follows partials and closures)
    Mistake("ReversibleCoupling", "keeps forward's call of f as functools.partial(f, x2) on ctx",
            "ReversibleCoupling stores a tensor as ctx.f_of_x2.args[0]", "import functools\n"
            + _coupling(
                "        y1, y2 = ctx.saved_tensors\n"
                "        f, x2 = ctx.f_of_x2.func, ctx.f_of_x2.args[0]\n"
                "        with torch.no_grad():\n            x1 = y1 - f(x2)\n"
                "        x1, x2 = x1.requires_grad_(), x2.detach().requires_grad_()\n"
                + RECOMPUTE + RIGHT + RETURN, edit(
                    FORWARD, ("        ctx.f, ctx.g = f, g\n",
                              "        ctx.f, ctx.g = f, g\n"
                              "        ctx.f_of_x2 = functools.partial(f, x2)\n")))),
    # y1 = x1.add_(f(x2)) "to save an allocation": x1 is a leaf that requires grad, so torch
    # refuses; the hint keeps f and g to one line each (review 05b: a module's repr spanning
    # lines pushed torch's error off the first line)
    Mistake("ReversibleCoupling", "forward adds into x1 in place",
            "raised RuntimeError with x1 of shape (4, 5), x2 of shape (4, 5), "
            "f=Sequential(Linear, Tanh), g=Sequential(Linear, Softplus): a leaf Variable",
            _coupling(INVERT + RECOMPUTE + RIGHT + RETURN, edit(
                FORWARD, ("        y1 = x1 + f(x2)\n",
                          "        y1 = x1.add_(f(x2))\n        ctx.mark_dirty(x1)\n")))),
    # review 05e: a bfloat16 copy of x2 saved "to correct the reconstruction drift" (once "saved
    # an activation (such as f(x2))")
    Mistake("ReversibleCoupling", "saves a bfloat16 copy of x2",
            "saved a bfloat16 copy of its float64 input x2", _coupling(
                "        y1, y2, x2_low = ctx.saved_tensors\n        with torch.no_grad():\n"
                "            x2 = y2 - ctx.g(y1)\n            x1 = y1 - ctx.f(x2)\n"
                "        x1, x2 = x1.requires_grad_(), x2.requires_grad_()\n"
                + RECOMPUTE + RIGHT + RETURN,
                FORWARD.replace("ctx.save_for_backward(y1, y2)",
                                "ctx.save_for_backward(y1, y2, x2.to(torch.bfloat16))"))),
    # review 05e: RevNet's one-call backward (Gomez et al., Algorithm 1) returning f's vjp alone
    # for x2, without grad_y2 (once "your gradient for x2 is wrong")
    Mistake("ReversibleCoupling", "RevNet's one-call backward without grad_y2's direct term",
            "gradient for x2 misses grad_y2's direct term", _coupling(
                "        y1, y2 = ctx.saved_tensors\n        with torch.enable_grad():\n"
                "            z1 = y1.detach().requires_grad_()\n            gz1 = ctx.g(z1)\n"
                "        x2 = (y2 - gz1.detach()).requires_grad_()\n"
                "        torch.autograd.backward(gz1, grad_y2)\n"
                "        dy1 = grad_y1 + z1.grad\n        with torch.enable_grad():\n"
                "            fx2 = ctx.f(x2)\n        torch.autograd.backward(fx2, dy1)\n"
                "        return dy1, x2.grad, None, None")),
    # review 05e: g recomputed on a fresh leaf of the saved y1, not on the rebuilt z1: grad_y2's
    # path through g ends on that leaf (once "your gradient for x1 is wrong")
    Mistake("ReversibleCoupling", "recomputes g on a fresh leaf of the saved y1",
            "not on the rebuilt z1", _coupling(
                INVERT + "        y1_leaf = y1.detach().requires_grad_()\n"
                "        with torch.enable_grad():\n            z1 = x1 + ctx.f(x2)\n"
                "            z2 = x2 + ctx.g(y1_leaf)\n" + RIGHT + RETURN)),
    # review 52: torch.autograd.grad over x1, x2 and the parameters, the parameters' gradients
    # then assigned to .grad, not added
    Mistake("ReversibleCoupling", "autograd.grad over inputs and parameters, .grad assigned",
            "replaced the .grad of parameter f.0.weight instead of adding to it", _coupling(
                INVERT + "        params = [*ctx.f.parameters(), *ctx.g.parameters()]\n"
                + RECOMPUTE + "            grads = torch.autograd.grad((z1, z2), [x1, x2, "
                "*params], (grad_y1, grad_y2))\n"
                "        for p, grad in zip(params, grads[2:]):\n            p.grad = grad\n"
                "        return grads[0], grads[1], None, None")),
    # review 52: f and g handed to backward through a module-level dict, not ctx: right for one
    # call, wrong for two calls in one graph (the two-call check, not the class-attribute one)
    Mistake("ReversibleCoupling", "f and g kept in a module-level dict",
            "is right for each call alone but not for two calls in one graph", "_BLOCKS = {}\n"
            + _coupling(
                (INVERT + RECOMPUTE + RIGHT + RETURN).replace("ctx.f", "_BLOCKS['f']")
                .replace("ctx.g", "_BLOCKS['g']"),
                edit(FORWARD, ("ctx.f, ctx.g = f, g", "_BLOCKS['f'], _BLOCKS['g'] = f, g")))),
]


# ReversibleCoupling: saves y1, y2 and returns clones of them, "so the caller cannot change
# what backward reads".
WRONG_09_REV_RETURNS_CLONES = """
class ReversibleCoupling(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x1, x2, f, g):
        ctx.f, ctx.g = f, g
        y1 = x1 + f(x2)
        y2 = x2 + g(y1)
        ctx.save_for_backward(y1, y2)
        return y1.clone(), y2.clone()

    @staticmethod
    def backward(ctx, grad_y1, grad_y2):
        y1, y2 = ctx.saved_tensors
        with torch.no_grad():
            x2 = y2 - ctx.g(y1)
            x1 = y1 - ctx.f(x2)
        x1.requires_grad_(); x2.requires_grad_()
        with torch.enable_grad():
            z1 = x1 + ctx.f(x2)
            z2 = x2 + ctx.g(z1)
        torch.autograd.backward((z1, z2), (grad_y1, grad_y2))
        return x1.grad, x2.grad, None, None
"""


COUPLING = _coupling(INVERT + RECOMPUTE + RIGHT + RETURN)


# ReversibleCoupling: the inverse computed once and its leaves kept on ctx: a second backward
# recomputes on the same leaves and returns twice the gradients.
WRONG_03_COUPLING_CACHED_LEAVES = edit(
    COUPLING,
    ("        y1, y2 = ctx.saved_tensors\n        with torch.no_grad():\n"
     "            x2 = y2 - ctx.g(y1)\n            x1 = y1 - ctx.f(x2)\n"
     "        x1, x2 = x1.requires_grad_(), x2.requires_grad_()\n",
     "        if not hasattr(ctx, 'leaves'):  # invert once\n"
     "            y1, y2 = ctx.saved_tensors\n            with torch.no_grad():\n"
     "                x2 = y2 - ctx.g(y1)\n                x1 = y1 - ctx.f(x2)\n"
     "            ctx.leaves = (x1.requires_grad_(), x2.requires_grad_())\n"
     "        x1, x2 = ctx.leaves\n"))


# ReversibleCoupling: y1.data and y2.data saved: a caller's in-place change of y1 before
# backward is inverted from, silently.
WRONG_04_COUPLING_SAVES_DATA = edit(
    COUPLING, ("        ctx.save_for_backward(y1, y2)\n",
               "        ctx.save_for_backward(y1.data, y2.data)\n"))


# ReversibleCoupling: the rebuilt inputs cast to float32 "for speed" before the recomputation.
WRONG_03_COUPLING_LEAVES_FLOAT32 = edit(
    COUPLING, ("        x1, x2 = x1.requires_grad_(), x2.requires_grad_()\n",
               "        x1, x2 = x1.float().requires_grad_(), x2.float().requires_grad_()\n"))


# ReversibleCoupling: torch.autograd.backward with inputs= listing every parameter (catalogued
# as unusual before the frozen parameter was graded): a frozen one among them makes it raise.
_INPUTS_ALL = (INVERT + RECOMPUTE + "        torch.autograd.backward((z1, z2), (grad_y1, grad_y2), "
               "inputs=[x1, x2, *ctx.f.parameters(), *ctx.g.parameters()])\n"
               "        return x1.grad, x2.grad, None, None")


PARAMS = "        params = [*ctx.f.parameters(), *ctx.g.parameters()]\n"


# ReversibleCoupling (review 57, r8): torch.autograd.grad over x1, x2 and every parameter of f
# and g, accumulated by hand: a frozen parameter among them makes autograd.grad raise.
_GRAD_ALL = (INVERT + RECOMPUTE + "        params = [*ctx.f.parameters(), *ctx.g.parameters()]\n"
             "        grads = torch.autograd.grad((z1, z2), [x1, x2, *params], (grad_y1, grad_y2))\n"
             "        for p, grad in zip(params, grads[2:]):\n"
             "            p.grad = grad if p.grad is None else p.grad + grad\n"
             "        return grads[0], grads[1], None, None")


WRONG_05_GRAD_ALL_PARAMS = _coupling(_GRAD_ALL)


WRONG_07_INPUTS_ALL_PARAMS = _coupling(_INPUTS_ALL)


# review 59, u5: x1 and x2 require grad only where autograd asks, backward on what needs it
UNUSUAL_03_COUPLING_NEEDS = edit(COUPLING, (
    "        x1, x2 = x1.requires_grad_(), x2.requires_grad_()\n",
    "        x1.requires_grad_(ctx.needs_input_grad[0])\n"
    "        x2.requires_grad_(ctx.needs_input_grad[1])\n"), (RIGHT, """\
        outs = [(z, g) for z, g in ((z1, grad_y1), (z2, grad_y2)) if z.requires_grad]
        if outs:
            torch.autograd.backward([z for z, _ in outs], [g for _, g in outs])
"""))


ZERO_HINT = "skipped the recomputation when the incoming gradient is all zero"


COUPLING_START = "    def backward(ctx, grad_y1, grad_y2):\n"


# review 59, r7: zeros for x1 and x2, f and g never called, when both gradients are all zero
WRONG_03_COUPLING_ZERO_SKIP = edit(COUPLING, (COUPLING_START, COUPLING_START + """\
        if not grad_y1.any() and not grad_y2.any():
            y1, y2 = ctx.saved_tensors
            return torch.zeros_like(y1), torch.zeros_like(y2), None, None
"""))


# review 59b, u2: RevNet's Algorithm 1: g once on a fresh leaf for y1, its output serving the
# inversion and the backpropagation; then f once on the rebuilt x2
UNUSUAL_01_REVNET = _coupling(
    "        y1, y2 = ctx.saved_tensors\n"
    "        z1 = y1.detach().requires_grad_()\n"
    "        with torch.enable_grad():\n            G = ctx.g(z1)\n"
    "        torch.autograd.backward(G, grad_y2)\n"
    "        x2 = (y2 - G.detach()).requires_grad_()\n"
    "        ybar1 = grad_y1 + z1.grad\n"
    "        with torch.enable_grad():\n            F = ctx.f(x2)\n"
    "        torch.autograd.backward(F, ybar1)\n"
    "        return ybar1, grad_y2 + x2.grad, None, None")


MISTAKES += [
    Mistake('ReversibleCoupling', 'saves y1 and y2, returns clones of them',
            'saved a copy of its output y1',
            WRONG_09_REV_RETURNS_CLONES),
    Mistake("ReversibleCoupling", "the inverse computed once, its leaves cached on ctx for a "
            "second backward", "changes when backward runs a second time on one graph",
            WRONG_03_COUPLING_CACHED_LEAVES),
    Mistake("ReversibleCoupling", "saves y1.data and y2.data", "changed in place after forward",
            WRONG_04_COUPLING_SAVES_DATA),
    Mistake("ReversibleCoupling", "fresh leaves cast to float32 (.float()) in backward",
            "the rebuilt inputs were cast before the recomputation",
            WRONG_03_COUPLING_LEAVES_FLOAT32),
    Mistake("ReversibleCoupling", "autograd.grad over x1, x2 and every parameter of f and g, "
            "frozen ones too", "when f holds a frozen parameter", WRONG_05_GRAD_ALL_PARAMS),
    Mistake("ReversibleCoupling", "torch.autograd.backward with inputs= listing every "
            "parameter, frozen ones too", "when f holds a frozen parameter",
            WRONG_07_INPUTS_ALL_PARAMS),
    Mistake("ReversibleCoupling", "returns zeros without recomputing when both incoming "
            "gradients are all zero", ZERO_HINT, WRONG_03_COUPLING_ZERO_SKIP),
]


UNUSUAL += [
    Unusual("ReversibleCoupling", "torch.autograd.backward with inputs= listing the parameters "
            "that require grad", _gate(_coupling(edit(_INPUTS_ALL, (
                "*ctx.f.parameters(), *ctx.g.parameters()]",
                "*(p for m in (ctx.f, ctx.g) for p in m.parameters() if p.requires_grad)]"))))),
    Unusual("ReversibleCoupling", "autograd.grad over the inputs and the parameters that "
            "require grad, accumulated by hand",
            _gate(_coupling(edit(_GRAD_ALL, (PARAMS, PARAMS.replace(
                "]\n", "]\n        params = [p for p in params if p.requires_grad]\n")))))),
    Unusual("ReversibleCoupling", "leaves from ctx.needs_input_grad, backward on the outputs "
            "that require grad", UNUSUAL_03_COUPLING_NEEDS),
    Unusual("ReversibleCoupling", "RevNet's Algorithm 1: one call of g and one of f in "
            "backward", _gate(UNUSUAL_01_REVNET)),
]


# Rule 2 of the Function contract, graded for every exercise since the generic check (issue 67):
# the lesson's solution without its gate returns x2's gradient when only x1 requires grad.
MISTAKES += [
    Mistake("ReversibleCoupling", "ignores ctx.needs_input_grad: both inputs' gradients every "
            "call", "returned a gradient for x2 with only x1 requiring grad", COUPLING),
]

# review 74c, R2: the rebuilt inputs kept on ctx "for a second backward": after backward, while
# the caller holds y1 and y2, x1 and x2 (and their .grad) stay alive, the memory the block saves
MISTAKES.append(Mistake(
    "ReversibleCoupling", "rebuilt inputs kept on ctx for a second backward",
    "ReversibleCoupling's backward stores a tensor as ctx.inputs[0]",
    _coupling(INVERT + "        ctx.inputs = (x1, x2)\n" + RECOMPUTE + RIGHT + RETURN)))

# the rebuilt outputs z1 and z2 kept on ctx: their graph (f's and g's activations) outlives backward
MISTAKES.append(Mistake(
    "ReversibleCoupling", "rebuilt outputs kept on ctx",
    "ReversibleCoupling's backward stores a tensor as ctx.rebuilt[0]",
    _coupling(INVERT + RECOMPUTE + "        ctx.rebuilt = (z1, z2)\n" + RIGHT + RETURN)))

# f's and g's parameters switched off for the inversion and on again after it: the caller's
# frozen ones are unfrozen and get a .grad (review 80, wr3; rule 6)
MISTAKES.append(Mistake(
    "ReversibleCoupling", "requires_grad_(False) on f and g for the inversion, (True) after",
    "ReversibleCoupling unfroze the frozen parameter weight",
    _coupling("        ctx.f.requires_grad_(False)\n        ctx.g.requires_grad_(False)\n"
              + INVERT + "        ctx.f.requires_grad_(True)\n        ctx.g.requires_grad_(True)\n"
              + RECOMPUTE + RIGHT + RETURN)))
