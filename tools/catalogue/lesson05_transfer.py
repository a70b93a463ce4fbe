"""Lesson 05's transfer exercise, ReversibleCoupling, answered unusually and wrongly."""

from tools.catalogue import Mistake, Unusual, edit

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

UNUSUAL = [
    Unusual("ReversibleCoupling", "inverts with autograd on, then recomputes from detached copies",
            _coupling("        y1, y2 = ctx.saved_tensors\n        with torch.enable_grad():\n"
                      "            x2 = y2 - ctx.g(y1)\n            x1 = y1 - ctx.f(x2)\n"
                      "            x1, x2 = x1.detach().requires_grad_(), x2.detach().requires_grad_()\n"
                      "            z1 = x1 + ctx.f(x2)\n            z2 = x2 + ctx.g(z1)\n"
                      + RIGHT + RETURN)),
    Unusual("ReversibleCoupling", "the interleaved backward of public Reformer code "
            "(Rick-McCoy/Reformer-pytorch, after RevTorch): g's backward, then invert, then f's",
            _coupling("        y1, y2 = (t.detach() for t in ctx.saved_tensors)\n"
                      "        y1.requires_grad = True\n"
                      "        with torch.enable_grad():\n            gy1 = ctx.g(y1)\n"
                      "            gy1.backward(grad_y2)\n"
                      "        with torch.no_grad():\n            x2 = y2 - gy1\n"
                      "            x1_grad = grad_y1 + y1.grad\n"
                      "        x2.requires_grad = True\n"
                      "        with torch.enable_grad():\n            fx2 = ctx.f(x2)\n"
                      "            fx2.backward(x1_grad)\n"
                      "        with torch.no_grad():\n            x2_grad = grad_y2 + x2.grad\n"
                      "        return x1_grad, x2_grad, None, None")),
    Unusual("ReversibleCoupling", "autograd.grad over inputs and parameters, accumulated by hand",
            _coupling(INVERT + RECOMPUTE +
                      "        params = [*ctx.f.parameters(), *ctx.g.parameters()]\n"
                      "        grads = torch.autograd.grad((z1, z2), [x1, x2, *params], "
                      "(grad_y1, grad_y2))\n"
                      "        for p, grad in zip(params, grads[2:]):\n"
                      "            p.grad = grad if p.grad is None else p.grad + grad\n"
                      "        return grads[0], grads[1], None, None")),
    Unusual("ReversibleCoupling", "detach instead of no_grad, one backward on the summed products",
            _coupling("        y1, y2 = ctx.saved_tensors\n"
                      "        x2 = (y2 - ctx.g(y1)).detach().requires_grad_()\n"
                      "        x1 = (y1 - ctx.f(x2)).detach().requires_grad_()\n" + RECOMPUTE +
                      "            loss = (z1 * grad_y1).sum() + (z2 * grad_y2).sum()\n"
                      "        loss.backward()\n        return x1.grad, x2.grad, None, None")),
    Unusual("ReversibleCoupling", "no no_grad: backward's own grad mode is off while inverting",
            _coupling("        y1, y2 = ctx.saved_tensors\n"
                      "        x2 = (y2 - ctx.g(y1)).requires_grad_()\n"
                      "        x1 = (y1 - ctx.f(x2)).requires_grad_()\n" + RECOMPUTE + RIGHT
                      + RETURN)),
    Unusual("ReversibleCoupling", "torch.autograd.backward with inputs= listing the parameters",
            _coupling(INVERT + RECOMPUTE + "        torch.autograd.backward((z1, z2), (grad_y1, "
                      "grad_y2), inputs=[x1, x2, *ctx.f.parameters(), *ctx.g.parameters()])\n"
                      + RETURN)),
]

MISTAKES = [
    Mistake("ReversibleCoupling", "inverts in place, into the saved outputs (the caller's y1 "
            "and y2 are overwritten)", "backward overwrote y1 and y2, which the caller holds",
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
]

# Round 4: the random state recorded, restored, but recorded after run_fn had drawn its mask.
from tools.catalogue.lesson05 import CORRECT_BACKWARD, _checkpoint  # noqa: E402
from tools.catalogue.lesson05 import FORWARD as CHECKPOINT_FORWARD  # noqa: E402

MISTAKES += [
    Mistake("CheckpointFunction", "random state recorded after run_fn ran", "the state was "
            "recorded after run_fn(*args) ran; record it before",
            _checkpoint(CORRECT_BACKWARD, edit(
                CHECKPOINT_FORWARD, ("        ctx.cpu_state = torch.get_rng_state()\n", ""),
                ("        return run_fn(*args)\n", "        output = run_fn(*args)\n"
                 "        ctx.cpu_state = torch.get_rng_state()\n        return output\n"))),
            named=True),
    # Round 10: recorded in time, but backward runs run_fn once more (a warm-up) before the
    # recomputation, so the forward's mask is spent (told apart by rng_probe.late_mask).
    Mistake("CheckpointFunction", "an extra run_fn call in backward before the recomputation",
            "backward called run_fn 2 times, and the first call, from the restored state, spent",
            _checkpoint(CORRECT_BACKWARD.replace(
                "            with torch.enable_grad():\n", "            with torch.no_grad():\n"
                "                ctx.run_fn(*args)\n            with torch.enable_grad():\n"))),
]

# Round 11: two contract clauses enforced. checkpoint_sequential "built on" CheckpointFunction,
# not on torch.utils.checkpoint's own reentrant Function; and "no input" in any form.
from tools.catalogue.lesson05 import _sequential  # noqa: E402

MISTAKES += [
    Mistake("checkpoint_sequential", "built on torch.utils.checkpoint(use_reentrant=True)",
            "checkpointed its segments with PyTorch's own Function", _sequential(
                "    from torch.utils.checkpoint import checkpoint\n"
                "    layers = list(layers)\n    size = len(layers) // segments\n"
                "    for i in range(segments):\n"
                "        end = len(layers) if i == segments - 1 else (i + 1) * size\n"
                "        x = checkpoint(nn.Sequential(*layers[i * size:end]), x, "
                "use_reentrant=True)\n    return x\n")),
    Mistake("ReversibleCoupling", "keeps a NumPy copy of the input x2 on ctx",
            "keeps a NumPy copy of its input x2 as ctx.x2_copy", _coupling(
                INVERT + RECOMPUTE + RIGHT + RETURN, edit(
                    FORWARD, ("        ctx.save_for_backward(y1, y2)",
                              "        ctx.x2_copy = x2.detach().cpu().numpy().copy()\n"
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
]

# Round 12: save_for_backward holds only y1 and y2, but forward ran f and g with grad on, so
# their ops saved x2 and activations while forward ran (the pre-hooks on f and g see grad on).
EAGER = ("        ctx.f, ctx.g = f, g\n        with torch.enable_grad():\n"
         "            y1 = x1 + f(x2)\n            y2 = x2 + g(y1)\n"
         "        ctx.save_for_backward(y1, y2)\n        return y1, y2")
MISTAKES += [
    Mistake("ReversibleCoupling", "forward runs f and g under torch.enable_grad(), saving only "
            "y1 and y2", "ReversibleCoupling's forward ran f and g with grad on",
            _coupling(INVERT + RECOMPUTE + RIGHT + RETURN, EAGER)),
    Mistake("ReversibleCoupling", "forward runs f alone under torch.enable_grad()",
            "ReversibleCoupling's forward ran f with grad on", _coupling(
                INVERT + RECOMPUTE + RIGHT + RETURN, edit(
                    EAGER, ("            y2 = x2 + g(y1)\n", ""),
                    ("        ctx.save_for_backward", "        y2 = x2 + g(y1)\n"
                     "        ctx.save_for_backward")))),
]

# Round 12: torch.autograd.backward with inputs= limited to the fresh leaves: the parameters get
# no .grad, and the hint names inputs= (the calls are watched), not torch.autograd.grad.
LEAVES = "[a for a in args if isinstance(a, torch.Tensor) and a.requires_grad]"
MISTAKES += [
    Mistake("CheckpointFunction", "torch.autograd.backward(output, grad_output, inputs=leaves)",
            "backward passed inputs=[...] to torch.autograd.backward", _checkpoint(
                CORRECT_BACKWARD.replace("torch.autograd.backward(output, grad_output)",
                                         f"torch.autograd.backward(output, grad_output, "
                                         f"inputs={LEAVES})"))),
    Mistake("CheckpointFunction", "output.backward(grad_output, inputs=leaves)",
            "backward passed inputs=[...] to torch.autograd.backward", _checkpoint(
                CORRECT_BACKWARD.replace("torch.autograd.backward(output, grad_output)",
                                         f"output.backward(grad_output, inputs={LEAVES})"))),
    Mistake("ReversibleCoupling", "torch.autograd.backward with inputs=[x1, x2] only",
            "the parameters of f and g got no gradient (f.0.weight.grad is None): backward "
            "passed inputs=", _coupling(INVERT + RECOMPUTE + RIGHT.replace(
                "(grad_y1, grad_y2))", "(grad_y1, grad_y2), inputs=[x1, x2])") + RETURN)),
]

# Issue 37, state per call: f and g kept on the class pass every check that runs one coupling
# at a time; two couplings in one graph share the last f and g.
MISTAKES += [
    Mistake("ReversibleCoupling", "f and g kept on the class", "ReversibleCoupling.forward sets "
            "ReversibleCoupling.f: a class attribute is shared by every call", _coupling(
                (INVERT + RECOMPUTE + RIGHT + RETURN).replace("ctx.f", "ReversibleCoupling.f")
                .replace("ctx.g", "ReversibleCoupling.g"),
                edit(FORWARD, ("ctx.f, ctx.g = f, g",
                               "ReversibleCoupling.f, ReversibleCoupling.g = f, g")))),
]

# Issue 37: CheckpointFunction's run_fn kept on the class (two calls in one graph share it), and
# fresh leaves that never require grad (a probe of the recomputation proves it).
from tools.catalogue.lesson05 import RESTORE, _backward_without  # noqa: E402

MISTAKES += [
    Mistake("CheckpointFunction", "run_fn kept on the class", "CheckpointFunction.forward sets "
            "CheckpointFunction.run_fn: a class attribute is shared by every call",
            _checkpoint(CORRECT_BACKWARD.replace("ctx.run_fn", "CheckpointFunction.run_fn"),
                        CHECKPOINT_FORWARD.replace("ctx.run_fn = run_fn",
                                                   "CheckpointFunction.run_fn = run_fn"))),
    Mistake("CheckpointFunction", "fresh leaves that never require grad (t.detach())",
            "backward returned None for x: the recomputation ran run_fn on a copy of x that did "
            "not require grad", _backward_without(RESTORE, prepare="lambda t: t.detach()")),
]
