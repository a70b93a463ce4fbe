"""Lesson 06 reference Functions: correct scaled dot-product attention (plain and memory
efficient) and deliberately wrong ones, each with one mistake (named in its docstring)."""

import torch


def _masked_scores(Q, K, scale, mask):
    scores = (Q @ K.transpose(-2, -1)) * scale
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return scores


def _softmax(scores):
    """Row-wise softmax, stable: subtract each row's maximum before exp."""
    shifted = scores - scores.amax(dim=-1, keepdim=True)
    exp = shifted.exp()
    return exp / exp.sum(dim=-1, keepdim=True)


class ScaledDotProductAttention(torch.autograd.Function):
    """softmax(Q K^T * scale, masked) V, saving the probabilities P."""

    @staticmethod
    def forward(ctx, Q, K, V, scale, mask=None):
        P = _softmax(_masked_scores(Q, K, scale, mask))
        ctx.save_for_backward(Q, K, V, P)
        ctx.scale = scale
        return P @ V

    @staticmethod
    def backward(ctx, grad_output):
        Q, K, V, P = ctx.saved_tensors
        grad_V = P.transpose(-2, -1) @ grad_output  # O = P V
        grad_P = grad_output @ V.transpose(-2, -1)
        grad_S = P * (grad_P - (grad_P * P).sum(dim=-1, keepdim=True))  # softmax's JVP
        grad_Q = ctx.scale * grad_S @ K  # S = scale * Q K^T
        grad_K = ctx.scale * grad_S.transpose(-2, -1) @ Q
        return grad_Q, grad_K, grad_V, None, None


class MemoryEfficientAttention(torch.autograd.Function):
    """Saves one log-sum-exp per query row and recomputes P in backward."""

    @staticmethod
    def forward(ctx, Q, K, V, scale, mask=None):
        scores = _masked_scores(Q, K, scale, mask)
        row_max = scores.amax(dim=-1, keepdim=True)
        lse = row_max + (scores - row_max).exp().sum(dim=-1, keepdim=True).log()
        output = (scores - lse).exp() @ V
        ctx.scale, ctx.has_mask = scale, mask is not None
        ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1),
                              *([mask] if mask is not None else []))
        return output

    @staticmethod
    def backward(ctx, grad_output):
        Q, K, V, output, lse, *mask = ctx.saved_tensors
        P = (_masked_scores(Q, K, ctx.scale, mask[0] if mask else None) - lse[..., None]).exp()
        grad_V = P.transpose(-2, -1) @ grad_output
        grad_P = grad_output @ V.transpose(-2, -1)
        row = (grad_output * output).sum(dim=-1, keepdim=True)  # = rowsum(dP * P)
        grad_S = P * (grad_P - row)
        return (ctx.scale * grad_S @ K, ctx.scale * grad_S.transpose(-2, -1) @ Q, grad_V,
                None, None)


# ----------------------------------------------------------------------------------- mistakes
class NoRowSum(ScaledDotProductAttention):
    """dS = P * dP: the row-sum term of the softmax's Jacobian is missing."""

    @staticmethod
    def backward(ctx, grad_output):
        Q, K, V, P = ctx.saved_tensors
        grad_S = P * (grad_output @ V.transpose(-2, -1))
        return (ctx.scale * grad_S @ K, ctx.scale * grad_S.transpose(-2, -1) @ Q,
                P.transpose(-2, -1) @ grad_output, None, None)


class DiagonalJacobianOnly(ScaledDotProductAttention):
    """dS = P * (1 - P) * dP: softmax's derivative taken element-wise, as if it were a sigmoid."""

    @staticmethod
    def backward(ctx, grad_output):
        Q, K, V, P = ctx.saved_tensors
        grad_S = P * (1 - P) * (grad_output @ V.transpose(-2, -1))
        return (ctx.scale * grad_S @ K, ctx.scale * grad_S.transpose(-2, -1) @ Q,
                P.transpose(-2, -1) @ grad_output, None, None)


class RowSumOverQueries(ScaledDotProductAttention):
    """Sums dP * P over dim -2 (the queries) instead of -1 (the keys)."""

    @staticmethod
    def backward(ctx, grad_output):
        Q, K, V, P = ctx.saved_tensors
        grad_P = grad_output @ V.transpose(-2, -1)
        grad_S = P * (grad_P - (grad_P * P).sum(dim=-2, keepdim=True))
        return (ctx.scale * grad_S @ K, ctx.scale * grad_S.transpose(-2, -1) @ Q,
                P.transpose(-2, -1) @ grad_output, None, None)


class AutogradSoftmax(torch.autograd.Function):
    """Backward asks autograd for the softmax's gradient (re-entry, _softmax_backward_data)."""

    @staticmethod
    def forward(ctx, Q, K, V, scale, mask=None):
        ctx.save_for_backward(Q, K, V, *([mask] if mask is not None else []))
        ctx.scale = scale
        return torch.softmax(_masked_scores(Q, K, scale, mask), dim=-1) @ V

    @staticmethod
    def backward(ctx, grad_output):
        Q, K, V, *mask = ctx.saved_tensors
        with torch.enable_grad():
            scores = _masked_scores(Q, K, ctx.scale, mask[0] if mask else None).detach()
            scores.requires_grad_()
            P = torch.softmax(scores, dim=-1)
        grad_S, = torch.autograd.grad(P, scores, grad_output @ V.transpose(-2, -1))
        return (ctx.scale * grad_S @ K, ctx.scale * grad_S.transpose(-2, -1) @ Q,
                P.detach().transpose(-2, -1) @ grad_output, None, None)


class BuiltinSoftmaxBackward(ScaledDotProductAttention):
    """Calls PyTorch's _softmax_backward_data directly."""

    @staticmethod
    def backward(ctx, grad_output):
        Q, K, V, P = ctx.saved_tensors
        grad_P = grad_output @ V.transpose(-2, -1)
        grad_S = torch._softmax_backward_data(grad_P, P, -1, P.dtype)
        return (ctx.scale * grad_S @ K, ctx.scale * grad_S.transpose(-2, -1) @ Q,
                P.transpose(-2, -1) @ grad_output, None, None)


class ReversedMask(ScaledDotProductAttention):
    """Masks out where mask is True (nn.MultiheadAttention's convention, not this one's)."""

    @staticmethod
    def forward(ctx, Q, K, V, scale, mask=None):
        return ScaledDotProductAttention.forward(ctx, Q, K, V, scale,
                                                 None if mask is None else ~mask)


class ReversedMaskLargeNegative(ScaledDotProductAttention):
    """Reversed polarity with -1e9 instead of -inf: no nan, just the wrong keys."""

    @staticmethod
    def forward(ctx, Q, K, V, scale, mask=None):
        scores = (Q @ K.transpose(-2, -1)) * scale
        if mask is not None:
            scores = scores.masked_fill(mask, -1e9)
        P = _softmax(scores)
        ctx.save_for_backward(Q, K, V, P)
        ctx.scale = scale
        return P @ V


class NoMaxSubtraction(ScaledDotProductAttention):
    """exp(scores) / sum: overflows for large scores."""

    @staticmethod
    def forward(ctx, Q, K, V, scale, mask=None):
        exp = _masked_scores(Q, K, scale, mask).exp()
        P = exp / exp.sum(dim=-1, keepdim=True)
        ctx.save_for_backward(Q, K, V, P)
        ctx.scale = scale
        return P @ V


class MissingScaleInGradients(ScaledDotProductAttention):
    """Forgets the scale in grad_Q and grad_K."""

    @staticmethod
    def backward(ctx, grad_output):
        grad_Q, grad_K, grad_V, _, _ = ScaledDotProductAttention.backward(ctx, grad_output)
        return grad_Q / ctx.scale, grad_K / ctx.scale, grad_V, None, None


class MaskOnCtx(torch.autograd.Function):
    """Keeps the mask as ctx.mask instead of passing it through save_for_backward."""

    @staticmethod
    def forward(ctx, Q, K, V, scale, mask=None):
        ctx.mask = mask
        return ScaledDotProductAttention.forward(ctx, Q, K, V, scale, mask)

    backward = ScaledDotProductAttention.backward


class GradientForScale(ScaledDotProductAttention):
    """Returns a gradient for the Python-float scale."""

    @staticmethod
    def backward(ctx, grad_output):
        grads = ScaledDotProductAttention.backward(ctx, grad_output)
        return (*grads[:3], torch.zeros(()), None)


class SavesProbabilities(MemoryEfficientAttention):
    """Called memory efficient, but saves the Lq x Lk probabilities anyway."""

    @staticmethod
    def forward(ctx, Q, K, V, scale, mask=None):
        output = ScaledDotProductAttention.forward(ctx, Q, K, V, scale, mask)
        return output

    backward = ScaledDotProductAttention.backward


class MemoryEfficientNoRowSum(MemoryEfficientAttention):
    """Memory efficient, but dS = P * dP."""

    @staticmethod
    def backward(ctx, grad_output):
        Q, K, V, output, lse, *mask = ctx.saved_tensors
        P = (_masked_scores(Q, K, ctx.scale, mask[0] if mask else None) - lse[..., None]).exp()
        grad_S = P * (grad_output @ V.transpose(-2, -1))
        return (ctx.scale * grad_S @ K, ctx.scale * grad_S.transpose(-2, -1) @ Q,
                P.transpose(-2, -1) @ grad_output, None, None)


class MemoryEfficientSavesScores(MemoryEfficientAttention):
    """Saves the masked scores (Lq x Lk) alongside the log-sum-exp."""

    @staticmethod
    def forward(ctx, Q, K, V, scale, mask=None):
        scores = _masked_scores(Q, K, scale, mask)
        lse = torch.logsumexp(scores, dim=-1)
        output = (scores - lse[..., None]).exp() @ V
        ctx.scale = scale
        ctx.save_for_backward(Q, K, V, output, lse, scores)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        Q, K, V, output, lse, scores = ctx.saved_tensors
        P = (scores - lse[..., None]).exp()
        grad_P = grad_output @ V.transpose(-2, -1)
        grad_S = P * (grad_P - (grad_output * output).sum(-1, keepdim=True))
        return (ctx.scale * grad_S @ K, ctx.scale * grad_S.transpose(-2, -1) @ Q,
                P.transpose(-2, -1) @ grad_output, None, None)
