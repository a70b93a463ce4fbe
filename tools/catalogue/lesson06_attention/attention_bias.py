"""Lesson 06's transfer exercise: answers with known verdicts for AttentionWithBias, whose
bias gradient is summed to the bias's broadcast shape."""

from .. import Mistake, Unusual
from .answers import AB, _bias

UNUSUAL = [
    Unusual(AB, "einsum, and the bias gradient summed over explicit dims with keepdim", _bias(
        ("grad_bias = grad_S.sum_to_size(ctx.bias_shape)",
         "extra = grad_S.dim() - len(ctx.bias_shape)\n"
         "                grad_bias = grad_S.sum(dim=tuple(range(extra))) if extra else grad_S\n"
         "                dims = [i for i, n in enumerate(ctx.bias_shape) if n == 1]\n"
         "                if dims:\n"
         "                    grad_bias = grad_bias.sum(dim=dims, keepdim=True)"),
        ("grad_Q = ctx.scale * grad_S @ K",
         'grad_Q = ctx.scale * torch.einsum("...ij,...jd->...id", grad_S, K)'))),
    Unusual(AB, "log-sum-exp saved and P recomputed, D = rowsum(dO * O)", '''
class AttentionWithBias(torch.autograd.Function):
    @staticmethod
    def forward(ctx, Q, K, V, bias, scale):
        scores = (Q @ K.transpose(-2, -1)) * scale + bias
        lse = torch.logsumexp(scores, dim=-1, keepdim=True)
        O = (scores - lse).exp() @ V
        ctx.save_for_backward(Q, K, V, bias, O, lse)
        ctx.scale = scale
        return O

    @staticmethod
    @once_differentiable
    def backward(ctx, dO):
        Q, K, V, bias, O, lse = ctx.saved_tensors
        need_q, need_k, need_v, need_bias, _ = ctx.needs_input_grad
        P = ((Q @ K.transpose(-2, -1)) * ctx.scale + bias - lse).exp()
        dV = P.transpose(-2, -1) @ dO if need_v else None
        if not (need_q or need_k or need_bias):
            return None, None, dV, None, None
        dS = P * (dO @ V.transpose(-2, -1) - (dO * O).sum(-1, keepdim=True))
        dQ = ctx.scale * dS @ K if need_q else None
        dK = ctx.scale * dS.transpose(-2, -1) @ Q if need_k else None
        dB = dS.sum_to_size(bias.shape) if need_bias else None
        return dQ, dK, dV, dB, None
'''),
    Unusual(AB, "own softmax with torch.where for -inf keys, mask of needs_input_grad unpacked",
            _bias(("P = torch.softmax((Q @ K.transpose(-2, -1)) * scale + bias, dim=-1)",
                   "S = (Q @ K.transpose(-2, -1)) * scale + bias\n"
                   "        m = S.amax(dim=-1, keepdim=True)\n"
                   "        E = torch.where(torch.isinf(S), torch.zeros_like(S), (S - m).exp())\n"
                   "        P = E / E.sum(dim=-1, keepdim=True)"))),
    Unusual(AB, "torch.add with alpha, the bias gradient reduced by a loop", _bias(
        ("torch.softmax((Q @ K.transpose(-2, -1)) * scale + bias, dim=-1)",
         "torch.add(bias, Q @ K.mT, alpha=scale).softmax(-1)"),
        ("grad_bias = grad_S.sum_to_size(ctx.bias_shape)",
         "grad_bias = grad_S\n"
         "                while grad_bias.dim() > len(ctx.bias_shape):\n"
         "                    grad_bias = grad_bias.sum(0)\n"
         "                for dim, size in enumerate(ctx.bias_shape):\n"
         "                    if size == 1:\n"
         "                        grad_bias = grad_bias.sum(dim, keepdim=True)"))),
]

MISTAKES = [
    # -inf padding clamped to -1e4 "to avoid -inf - -inf = nan": right at moderate scores, a
    # padded key wins against visible scores near -2e4 (review 77, W4a: passed both)
    Mistake(AB, "bias.clamp(min=-1e4) to avoid nan", "-inf bias entries lose to large scores",
            _bias(("P = torch.softmax((Q @ K.transpose(-2, -1)) * scale + bias, dim=-1)",
                   "P = torch.softmax((Q @ K.transpose(-2, -1)) * scale + bias.clamp(min=-1e4), "
                   "dim=-1)")), named=True),
    # the engine sums a gradient of the scores' shape down to bias.shape (Function contract,
    # rule 2), but the exercise's contract asks backward for exactly bias.shape (the syllabus;
    # review 74c: the reduction was the one line left to derive)
    Mistake(AB, "bias gradient left at the scores' shape", "returns the bias's gradient with "
            "shape (2, 3, 4, 5) for a bias of shape (4, 5)", _bias(
                ("grad_bias = grad_S.sum_to_size(ctx.bias_shape)", "grad_bias = grad_S"))),
    Mistake(AB, "bias gradient summed over the leading dimensions only", "returns the bias's "
            "gradient with shape (3, 5, 4) for a bias of shape (3, 1, 4)", _bias(
                ("grad_bias = grad_S.sum_to_size(ctx.bias_shape)",
                 "grad_bias = grad_S.sum(dim=tuple(range(grad_S.dim() - len(ctx.bias_shape))))"))),
    # sum_to_size returns dS itself for a bias of the scores' shape, and dS is then scaled in
    # place for dQ and dK (review at 32340a34: was named as the bias added after scaling)
    Mistake(AB, "grad_bias aliasing dS, then dS scaled in place",
            "sum_to_size returns dS itself", _bias(
        ("                grad_bias = grad_S.sum_to_size(ctx.bias_shape)\n", ""),
        ("            if ctx.needs_input_grad[0]:\n                grad_Q = ctx.scale * grad_S @ K",
         "            if ctx.needs_input_grad[3]:\n"
         "                grad_bias = grad_S.sum_to_size(ctx.bias_shape)\n"
         "            grad_S.mul_(ctx.scale)\n"
         "            if ctx.needs_input_grad[0]:\n                grad_Q = grad_S @ K"),
        ("grad_K = ctx.scale * grad_S.transpose(-2, -1) @ Q",
         "grad_K = grad_S.transpose(-2, -1) @ Q"),
        ("            if ctx.needs_input_grad[3]:\n        return", "        return"))),
    # dV alone needs no dP: building dP = dO V^T and dS anyway is a product made for inputs
    # that need none (the contract's second bullet; a correct answer until that was graded)
    Mistake(AB, "dP and dS built even when V alone needs a gradient",
            "computes dP = dO V^T", _bias(
                ("if any(ctx.needs_input_grad[:2]) or ctx.needs_input_grad[3]:", "if True:"))),
    # found by the uncapped mutants (session 54): the per-call check's two calls had a bias the
    # engine could sum the wrong-shaped gradient back to, so the shared shape went unseen
    Mistake(AB, "bias shape kept in a module global, shared by every call",
            "is right for each call alone but not for two calls in one graph",
            _bias(("ctx.scale, ctx.bias_shape = scale, bias.shape",
                   "global _bias_shape\n        ctx.scale, _bias_shape = scale, bias.shape"),
                  ("grad_bias = grad_S.sum_to_size(ctx.bias_shape)",
                   "grad_bias = grad_S.sum_to_size(_bias_shape)"))),
    # grad_bias computed inside the branch that Q's and K's gradients open
    Mistake(AB, "grad_bias computed only when Q or K needs a gradient",
            "computes grad_bias only inside the branch", _bias(
                ("if any(ctx.needs_input_grad[:2]) or ctx.needs_input_grad[3]:",
                 "if ctx.needs_input_grad[0] or ctx.needs_input_grad[1]:"))),
    Mistake(AB, "every gradient computed", "returned a gradient for",
            _bias(("if ctx.needs_input_grad[2]:", "if True:"),
                  ("if any(ctx.needs_input_grad[:2]) or ctx.needs_input_grad[3]:", "if True:"),
                  ("if ctx.needs_input_grad[0]:", "if True:"),
                  ("if ctx.needs_input_grad[1]:", "if True:"),
                  ("if ctx.needs_input_grad[3]:", "if True:"))),
    Mistake(AB, "bias gradient scaled like the scores", "grad_bias is scale times the right one",
            _bias(("grad_bias = grad_S.sum_to_size", "grad_bias = ctx.scale * grad_S.sum_to_size")),
            nbgrader=True),
    # consecutive chunks of the bias's size summed: right for (Lq, Lk) and (Lk,), where the
    # bias lacks only leading dimensions (review 75: was "your gradient for bias is wrong")
    Mistake(AB, "bias gradient as dS.reshape(-1, *bias.shape).sum(0)",
            "is dS.reshape(-1, *bias.shape).sum(0)",
            _bias(("grad_bias = grad_S.sum_to_size(ctx.bias_shape)",
                   "grad_bias = grad_S.reshape(-1, *ctx.bias_shape).sum(0)"))),
    Mistake(AB, "bias summed over the key dimension too", "grad_bias has shape",
            _bias(("grad_bias = grad_S.sum_to_size(ctx.bias_shape)",
                   "grad_bias = grad_S.sum(dim=(-2, -1))"))),
    Mistake(AB, "softmax backward by autograd", "calls torch.autograd.grad",
            _bias(("grad_S = P * (grad_P - (grad_P * P).sum(dim=-1, keepdim=True))",
                   "with torch.enable_grad():\n"
                   "                S = P.log().detach().requires_grad_()\n"
                   "                grad_S, = torch.autograd.grad(torch.softmax(S, -1), S, grad_P)"))),
    Mistake(AB, "no row sum", "treats the softmax as element-wise, dS = P * dP", _bias(
        ("grad_S = P * (grad_P - (grad_P * P).sum(dim=-1, keepdim=True))", "grad_S = P * grad_P"))),
    # dQ and dK computed for every call and returned only when asked: the gradients unasked
    Mistake(AB, "dQ and dK computed always, returned only when needed",
            "computes dK = dS^T Q (a (4, 2) product here, or its transpose) when only Q",
            _bias(("if any(ctx.needs_input_grad[:2]) or ctx.needs_input_grad[3]:", "if True:"),
                  ("            if ctx.needs_input_grad[0]:\n                grad_Q",
                   "            if True:\n                grad_Q"),
                  ("            if ctx.needs_input_grad[1]:\n                grad_K",
                   "            if True:\n                grad_K"),
                  ("return grad_Q, grad_K,", "return (grad_Q if ctx.needs_input_grad[0] else "
                   "None), (grad_K if ctx.needs_input_grad[1] else None),"))),
    # dP and dS are allowed for V alone; grad_bias summed from them is a gradient unasked
    Mistake(AB, "grad_bias computed always, returned only when needed",
            "sums dS down to the bias's shape when only",
            _bias(("if any(ctx.needs_input_grad[:2]) or ctx.needs_input_grad[3]:", "if True:"),
                  ("            if ctx.needs_input_grad[3]:\n                grad_bias",
                   "            if True:\n                grad_bias"),
                  ("grad_V, grad_bias, None", "grad_V, (grad_bias if ctx.needs_input_grad[3] "
                   "else None), None"))),
    # dV computed for every call and returned only when asked: right values, the work unasked
    Mistake(AB, "dV computed always, returned only when needed", "computes dV = P^T dO",
            _bias(("        if ctx.needs_input_grad[2]:\n            grad_V = P",
                   "        grad_V = P"),
                  ("return grad_Q, grad_K, grad_V, grad_bias, None",
                   "return grad_Q, grad_K, grad_V if ctx.needs_input_grad[2] else None, "
                   "grad_bias, None"))),
    # the bias's broadcast undone the wrong way, each named only when the numbers match it
    Mistake(AB, "the mean over the broadcast dimensions", "is the mean of dS over the dimensions",
            _bias(("grad_bias = grad_S.sum_to_size(ctx.bias_shape)",
                   "grad_bias = grad_S.sum_to_size(ctx.bias_shape) * ctx.bias_shape.numel() "
                   "/ grad_S.numel()"))),
    Mistake(AB, "one entry taken along a dimension of size 1", "takes the first entry along",
            _bias(("grad_bias = grad_S.sum_to_size(ctx.bias_shape)",
                   "grad_bias = grad_S.sum(dim=tuple(range(grad_S.dim() - len(ctx.bias_shape))))"
                   "\n                for i, n in enumerate(ctx.bias_shape):\n"
                   "                    if n == 1:\n"
                   "                        grad_bias = grad_bias.narrow(i, 0, 1)"))),
    # K.contiguous() is K itself on contiguous inputs, a copy on the multi-head layout
    Mistake(AB, "saves K.contiguous(), a copy on the multi-head layout", "saved a copy of its "
            "input K", _bias(("ctx.save_for_backward(Q, K, V, P)",
                              "ctx.save_for_backward(Q, K.contiguous(), V, P)"))),
]


# scores and softmax in float32 for float64 inputs (a float32 "safety" cast): every value right
# to float32's precision only, which the grader named as the aliasing of dS on a (Lq, 1) bias,
# whose true gradient is 0 (fresh review 75c, B6); named by the precision finding the comparison
# holds (lost-float64-digits), before any probe of the bias's gradient
MISTAKES += [
    Mistake(AB, "scores and softmax in float32 for float64 inputs",
            "far outside float64's precision", _bias(
                ("P = torch.softmax((Q @ K.transpose(-2, -1)) * scale + bias, dim=-1)",
                 "S = ((Q @ K.transpose(-2, -1)) * scale).float() + bias.float()\n"
                 "        P = torch.softmax(S, dim=-1).to(Q.dtype)"))),
]
