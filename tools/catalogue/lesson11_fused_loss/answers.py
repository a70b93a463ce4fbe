"""Lesson 11's own answers to CrossEntropy and linear_cross_entropy, which most of their entries
are written as edits of (``edit`` fails loudly if a line is missing, so an entry cannot
silently stop being the answer it names)."""


CROSS_ENTROPY = '''
class CrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, target, ignore_index=-100):
        counted = target != ignore_index
        safe_target = torch.where(counted, target, 0)
        lse = torch.logsumexp(logits, dim=1)
        picked = logits.gather(1, safe_target[:, None]).squeeze(1)
        losses = torch.where(counted, lse - picked, 0.0)
        ctx.save_for_backward(logits, lse, safe_target, counted)
        return losses.sum() / counted.sum()

    @staticmethod
    def backward(ctx, grad_output):
        logits, lse, target, counted = ctx.saved_tensors
        grad_logits = torch.exp(logits - lse[:, None])
        rows = torch.arange(len(target), device=target.device)
        grad_logits[rows, target] -= 1
        scale = grad_output * counted / counted.sum()
        return grad_logits * scale[:, None], None, None
'''


LINEAR = '''
class LinearCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, target, chunk_size, grad_enabled):
        want_x = grad_enabled and ctx.needs_input_grad[0]
        want_weight = grad_enabled and ctx.needs_input_grad[1]
        N = x.shape[0]
        wide = torch.promote_types(x.dtype, torch.float32)
        weight_wide = weight.to(wide)
        loss = torch.zeros((), dtype=wide, device=x.device)
        grad_x = torch.empty(x.shape, dtype=wide, device=x.device) if want_x else None
        grad_weight = torch.zeros(weight.shape, dtype=wide, device=x.device) if want_weight else None
        for start in range(0, N, chunk_size):
            rows = slice(start, start + chunk_size)
            x_chunk, target_chunk = x[rows].to(wide), target[rows]
            logits = x_chunk @ weight_wide.T
            picked = logits.gather(1, target_chunk[:, None])
            row_max = logits.amax(dim=1, keepdim=True)
            probs = logits.sub_(row_max).exp_()
            sums = probs.sum(dim=1, keepdim=True)
            loss += (row_max + sums.log() - picked).sum()
            if want_x or want_weight:
                probs /= sums
                probs[torch.arange(len(target_chunk), device=x.device), target_chunk] -= 1
                probs /= N
                if want_x:
                    grad_x[rows] = probs @ weight_wide
                if want_weight:
                    grad_weight.addmm_(probs.T, x_chunk)
        ctx.save_for_backward(None if grad_x is None else grad_x.to(x.dtype),
                              None if grad_weight is None else grad_weight.to(weight.dtype))
        return (loss / N).to(x.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        grad_x, grad_weight = ctx.saved_tensors
        return (None if grad_x is None else grad_output * grad_x,
                None if grad_weight is None else grad_output * grad_weight,
                None, None, None)


def linear_cross_entropy(x, weight, target, chunk_size=1024):
    return LinearCrossEntropy.apply(x, weight, target, chunk_size, torch.is_grad_enabled())
'''
