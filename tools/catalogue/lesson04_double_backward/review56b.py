"""Lesson 04, review 56b: state kept outside ctx, between calls: a needs-grad flag in a global
(set by the last forward, read by an earlier call's backward), 3x^2 memoised in a global dict
keyed by x.data_ptr(), x kept alive beside it (stale after an optimizer's in-place step;
backward's saved x is a new object at each unpacking, so only its memory can key it, and a
memory no other tensor can reuse while the cache holds it), NumPy's tanh memoised in
NumpyTanh.forward in a cache keyed by the tensor x itself (a data_ptr key there made the
failure's first line vary with memory reuse); x.contiguous() saved in NumpyTanh.forward
(named there, not in the inner Function); a backward that multiplies by grad_output's first
entry only; a clamp on beta * x in backward. Unusual: torch.func.vjp inside backward, expit and
a float64 accumulator, a tanh-based sigmoid with the output saved (CubeOnce's output saved with
np.cbrt is a mistake since review 59: review59.py; the reviewer's NumpyTanh with x saved and
the innermost backward marked is already catalogued in numpy_tanh.py)."""

from .. import CACHED_BY_TENSOR, Mistake, Unusual, edit
from .cube_once import CUBE_READ, _cube
from .numpy_tanh import CALL, FORWARD, INNER_ON_X, RIGHT, SAVE_X, _inner, _tanh
from .swish import READ, RETURN, _swish

NUMPY = "import numpy as np\n"
SWISH = _swish(READ + RETURN)
LOCAL = "        local = torch.as_tensor(3 * x.detach().cpu().numpy() ** 2).to(x.device)\n"
CUBE = NUMPY + _cube(CUBE_READ + LOCAL + "        return grad_output * local")
TANH = _tanh(CALL, _inner(RIGHT))

MISTAKES = [
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
    Mistake("CubeOnce", "3x^2 memoised in a global dict keyed by x.data_ptr()",
            "returned grad_x of the old values",
            "_CACHE = {}\n" + edit(CUBE, (LOCAL, "        key = (x.data_ptr(), tuple(x.shape), "
                                          "x.dtype)\n"
                                          "        if key not in _CACHE:  # x kept alive with it\n"
                                          "    " + LOCAL.replace("local =", "_CACHE[key] = x,") +
                                          "        local = _CACHE[key][1]\n"))),
    Mistake("CubeOnce", "multiplies by grad_output's first entry only",
            "the local derivative times one number",
            edit(CUBE, ("grad_output * local", "local * grad_output.reshape(-1)[0]"))),
    Mistake("NumpyTanh", "forward saves x.contiguous(), the inner Function on (grad_output, x)",
            "NumpyTanh's forward saves a copy of x",
            _tanh("        x, = ctx.saved_tensors\n"
                  "        return _TanhGradOfX.apply(grad_output, x)",
                  INNER_ON_X, edit(SAVE_X, ("        ctx.save_for_backward(x)\n",
                                            "        x = x.contiguous()\n"
                                            "        ctx.save_for_backward(x)\n")))),
    Mistake("NumpyTanh", "forward memoises NumPy's tanh in a global cache keyed by the tensor x",
            "returned the output of the old values", CACHED_BY_TENSOR + edit(TANH, (FORWARD, (
                "        y = torch.from_numpy(_cached((x,), (), lambda: np.tanh(x.detach().numpy()"
                ")))\n        ctx.save_for_backward(y)\n        return y")))),
]

# Right in the bulk, wrong in the sigmoid's saturated tail (1 + tanh rounds to 0 there):
# a mistake since review 59c grades the tail relatively (review59c lists it).
TANH_SIGMOID_SAVES_Y = _swish("        x, beta, y = ctx.saved_tensors\n"
                              "        s = 0.5 * (1 + torch.tanh(0.5 * beta * x))\n"
                              "        gx = grad_output * (s + beta * y * (1 - s)) if "
                              "ctx.needs_input_grad[0] else None\n"
                              "        gb = torch.einsum('...,...->', grad_output, y * x * (1 - s))"
                              " if ctx.needs_input_grad[1] else None\n        return gx, gb",
                              "        y = x * torch.sigmoid(beta * x)\n"
                              "        ctx.save_for_backward(x, beta, y)\n        return y")

UNUSUAL = [
    Unusual("SwishFunction", "torch.func.vjp of the composed ops inside backward",
            edit(SWISH, (READ + RETURN, "        x, beta = ctx.saved_tensors\n"
                         "        _, vjp = torch.func.vjp(lambda a, b: a * torch.sigmoid(b * a), "
                         "x, beta)\n        return vjp(grad_output)"))),
    Unusual("SwishFunction", "expit and sigmoid(z) * sigmoid(-z), grad_beta summed in float64",
            edit(SWISH, ("s = torch.sigmoid(beta * x)", "s = torch.special.expit(beta * x)"),
                 ("ds = s * (1 - s)", "ds = torch.sigmoid(beta * x) * torch.sigmoid(-beta * x)"),
                 ("(grad_output * x * x * ds).sum()",
                  "(grad_output * x * ds * x).sum(dtype=torch.float64).to(beta.dtype)"))),
]
