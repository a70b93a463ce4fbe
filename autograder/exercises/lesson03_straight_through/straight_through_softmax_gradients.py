"""StraightThroughSoftmax's gradients a wrong backward produces, each with its hint."""

import torch


def wrong_dim(logits, tau, grad_output):
    """The softmax taken over a dim other than the last (its row sum over that dim too, or over
    the last): F.softmax with no dim= picks dim 0 for a 1-D or 3-D tensor, 1 otherwise."""
    implicit = 0 if logits.dim() in (0, 1, 3) else 1
    found = []
    for dim in range(logits.dim() - 1):
        s = torch.softmax(logits / tau, dim)
        default = (f" (F.softmax with no dim= picks dim {dim} for a {logits.dim()}-D tensor)"
                   if dim == implicit else "")
        hint = (f"its softmax is taken over dim {dim}{default}, not over the last dim: each "
                "row along the last dim is one categorical distribution, as the argmax's one-hot "
                "is; give every softmax and row sum dim=-1")
        for over in (dim, -1):
            found.append((s * (grad_output - (grad_output * s).sum(over, keepdim=True)) / tau,
                          hint))
    return found


def candidates(logits, tau, grad_output):
    """Gradients a wrong backward produces, each with its hint."""
    def vjp(z):
        s = torch.softmax(z, -1)
        return s * (grad_output - (grad_output * s).sum(-1, keepdim=True))

    s = torch.softmax(logits / tau, -1)
    return wrong_dim(logits, tau, grad_output) + [
        (grad_output, "it returns grad_output unchanged, skipping the softmax's Jacobian (the "
         "straight-through trick is to differentiate softmax(logits / tau), not the identity)"),
        (vjp(logits / tau) * tau, "it multiplies by tau where the chain rule through "
         "logits / tau gives a factor 1 / tau"),
        (vjp(logits / tau), "it lacks the factor 1 / tau that the chain rule gives through "
         "logits / tau"),
        (vjp(logits), "it is the Jacobian of softmax(logits), without the temperature: use "
         "softmax(logits / tau) and the factor 1 / tau"),
        (vjp(logits) / tau, "its softmax leaves out the temperature: the factor 1 / tau is "
         "there, but s must be softmax(logits / tau), not softmax(logits)"),
        (grad_output / tau, "it returns grad_output / tau: the factor of the temperature is "
         "there, but the softmax's Jacobian is skipped"),
        *([(s * (grad_output - (grad_output * s).sum(-1)) / tau,
            "its row sum <g, s> lost its last dim (a sum over dim -1 without keepdim=True), so "
            "it broadcasts across each row's entries instead of standing one per row")]
          if logits.dim() >= 2 and logits.shape[-1] == logits.shape[-2] else []),
        *([(s * (grad_output - (grad_output * s).sum()) / tau,
             "the row sum <g, s> is taken over the whole tensor (a .sum() with no dim), not "
             "over the last dim per row: each row is a softmax of its own, with its own <g, s>"),
            (s * (grad_output - (grad_output * s).sum(0, keepdim=True)) / tau,
             "the row sum <g, s> is taken over dim 0 (down the batch, one per column), not over "
             "the last dim per row: each row is a softmax of its own, with its own <g, s>")]
          if logits.dim() >= 2 else []),
        (grad_output * s * (1 - s) / tau, "it keeps only the diagonal of the softmax's Jacobian; "
         "every output depends on every logit of its row, so the off-diagonal entries count too"),
    ]
