"""Lesson 11: answers with known verdicts for CrossEntropy (a stable log-sum-exp, ignore_index,
the mean over the counted rows)."""

from .. import Mistake, Unusual, edit
from .answers import CROSS_ENTROPY


CE = "CrossEntropy"


UNUSUAL = [
    Unusual(CE, "log_softmax in forward, saving the logits and the target only", '''
class CrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, target, ignore_index=-100):
        counted = target != ignore_index
        log_p = torch.log_softmax(logits, dim=1)
        picked = log_p.gather(1, torch.where(counted, target, 0)[:, None]).squeeze(1)
        ctx.save_for_backward(logits, target)
        ctx.ignore_index = ignore_index
        return -(picked * counted).sum() / counted.sum()

    @staticmethod
    def backward(ctx, grad_output):
        logits, target = ctx.saved_tensors
        counted = target != ctx.ignore_index
        one_hot = F.one_hot(torch.where(counted, target, 0), logits.shape[1]).to(logits.dtype)
        grad = (torch.softmax(logits, dim=1) - one_hot) * counted[:, None]
        return grad * (grad_output / counted.sum()), None, None
'''),
    Unusual(CE, "max shift by hand, a float weight per row", edit(
        CROSS_ENTROPY,
        ("        lse = torch.logsumexp(logits, dim=1)\n",
         "        row_max = logits.amax(dim=1)\n"
         "        lse = row_max + (logits - row_max[:, None]).exp().sum(1).log()\n"),
        ("        scale = grad_output * counted / counted.sum()",
         "        weights = counted.to(logits.dtype)\n"
         "        scale = grad_output * weights / weights.sum()"))),
    Unusual(CE, "one-hot by scatter, gradient with torch.where", edit(
        CROSS_ENTROPY,
        ("        rows = torch.arange(len(target), device=target.device)\n"
         "        grad_logits[rows, target] -= 1\n",
         "        one_hot = torch.zeros_like(grad_logits).scatter(1, target[:, None], 1.0)\n"
         "        grad_logits = grad_logits - one_hot\n"),
        ("        return grad_logits * scale[:, None], None, None",
         "        return torch.where(counted[:, None], grad_logits * scale[:, None], 0.0), "
         "None, None"))),
    Unusual('CrossEntropy', 'boolean indexing of the counted rows only', '''
class CrossEntropy(torch.autograd.Function):
    # only the counted rows are indexed (boolean indexing), the gradient written into zeros
    @staticmethod
    def forward(ctx, logits, target, ignore_index=-100):
        rows = (target != ignore_index).nonzero().squeeze(1)
        kept_targets = target[rows]
        sub = logits[rows]
        lse = torch.logsumexp(sub, 1)
        loss = (lse - sub.gather(1, kept_targets[:, None])[:, 0]).mean()
        ctx.save_for_backward(logits, rows, kept_targets, lse)
        return loss

    @staticmethod
    def backward(ctx, grad_output):
        logits, rows, kept_targets, lse = ctx.saved_tensors
        grad = torch.zeros_like(logits)
        p = torch.exp(logits[rows] - lse[:, None])
        p[torch.arange(len(rows), device=p.device), kept_targets] -= 1
        grad[rows] = p * (grad_output / len(rows))
        return grad, None, None
'''),
]


MISTAKES = [
    Mistake(CE, "softmax without the max shift", "logits of magnitude 1e4", edit(
        CROSS_ENTROPY, ("        lse = torch.logsumexp(logits, dim=1)\n",
                        "        lse = logits.exp().sum(1).log()\n")), named=True, nbgrader=True),
    Mistake(CE, "log of each probability", "logits of magnitude 1e4", edit(
        CROSS_ENTROPY, ("        picked = logits.gather(1, safe_target[:, None]).squeeze(1)\n"
                        "        losses = torch.where(counted, lse - picked, 0.0)\n",
                        "        p = torch.softmax(logits, dim=1)\n"
                        "        picked = p.gather(1, safe_target[:, None]).squeeze(1)\n"
                        "        losses = torch.where(counted, -picked.log(), 0.0)\n")),
            named=True),
    # the reviewer's CE7: forward stable, backward's softmax as a quotient of exps
    Mistake(CE, "backward's softmax as exp(logits) / exp(lse)",
            "backward gives a non-finite gradient at logits of magnitude 1e4", edit(
        CROSS_ENTROPY, ("        grad_logits = torch.exp(logits - lse[:, None])\n",
                        "        grad_logits = torch.exp(logits) / torch.exp(lse)[:, None]\n"))),
    Mistake(CE, "dividing by N instead of the counted rows", "divides by N, all the rows", edit(
        CROSS_ENTROPY, ("        return losses.sum() / counted.sum()",
                        "        return losses.sum() / len(target)"),
        ("        scale = grad_output * counted / counted.sum()",
         "        scale = grad_output * counted / len(target)")), named=True),
    Mistake(CE, "ignored rows keep their gradient", "gives ignored rows", edit(
        CROSS_ENTROPY, ("        scale = grad_output * counted / counted.sum()\n"
                        "        return grad_logits * scale[:, None], None, None",
                        "        return grad_logits * grad_output / counted.sum(), None, None")),
            named=True),
    # a one-hot of the targets kept as a bool (N, C) tensor: named for what a bool can be
    Mistake(CE, "saves a bool one-hot of the targets", "besides the logits (a mask or a one-hot?)",
            edit(CROSS_ENTROPY,
                 ("        ctx.save_for_backward(logits, lse, safe_target, counted)",
                  "        ctx.save_for_backward(logits, lse, torch.nn.functional.one_hot("
                  "safe_target, logits.shape[1]).bool(), counted)"),
                 ("        grad_logits[rows, target] -= 1\n",
                  "        grad_logits -= target.to(grad_logits.dtype)\n"),
                 ("        rows = torch.arange(len(target), device=target.device)\n", ""))),
    Mistake(CE, "saves the probabilities", "besides the logits", edit(
        CROSS_ENTROPY, ("        ctx.save_for_backward(logits, lse, safe_target, counted)",
                        "        ctx.save_for_backward(logits, torch.exp(logits - lse[:, None]),"
                        " safe_target, counted)"),
        ("        logits, lse, target, counted = ctx.saved_tensors\n"
         "        grad_logits = torch.exp(logits - lse[:, None])\n",
         "        logits, probs, target, counted = ctx.saved_tensors\n"
         "        grad_logits = probs.clone()\n")), named=True),
    Mistake(CE, "the softmax term alone, no one-hot", "the softmax term alone", edit(
        CROSS_ENTROPY, ("        grad_logits[rows, target] -= 1\n", ""))),
    Mistake(CE, "one_hot - softmax", "times -1", edit(
        CROSS_ENTROPY, ("        return grad_logits * scale[:, None], None, None",
                        "        return -grad_logits * scale[:, None], None, None"))),
    Mistake(CE, "a gradient for the target", "returned a gradient for target", edit(
        CROSS_ENTROPY, ("        return grad_logits * scale[:, None], None, None",
                        "        return grad_logits * scale[:, None], torch.zeros_like(logits[:, 0]),"
                        " None"))),
    Mistake(CE, "ignore_index taken as -100 whatever is passed", "gives ignored rows", edit(
        CROSS_ENTROPY, ("counted = target != ignore_index", "counted = target != -100"))),
    Mistake(CE, "backward ignores grad_output", "ignores grad_output", edit(
        CROSS_ENTROPY, ("scale = grad_output * counted / counted.sum()",
                        "scale = counted / counted.sum()"))),
    Mistake(CE, "ignored targets made valid with clamp(min=0)", "past the last class", edit(
        CROSS_ENTROPY, ("safe_target = torch.where(counted, target, 0)",
                        "safe_target = target.clamp(min=0)"))),
    Mistake('CrossEntropy', 'softmax computed in place in the saved logits', 'modified its input logits in place', '''
class CrossEntropy(torch.autograd.Function):
    # index_put for the one-hot, the mask as float weights
    @staticmethod
    def forward(ctx, logits, target, ignore_index=-100):
        w = (target != ignore_index).to(logits.dtype)
        safe = torch.where(target == ignore_index, torch.zeros_like(target), target)
        lse = logits.logsumexp(1)
        picked = logits.gather(1, safe.unsqueeze(1)).squeeze(1)
        ctx.save_for_backward(logits, lse, safe, w)
        return ((lse - picked) * w).sum() / w.sum()

    @staticmethod
    def backward(ctx, grad_output):
        logits, lse, safe, w = ctx.saved_tensors
        grad = logits.sub_(lse.unsqueeze(1)).exp_()
        grad.scatter_add_(1, safe.unsqueeze(1), -torch.ones_like(lse).unsqueeze(1))
        grad.mul_((grad_output * w / w.sum()).unsqueeze(1))
        return grad, None, None
'''),
    # make-mutants survivors: a copy of strided logits is a second (N, C) tensor; any class
    # but 0 is past the last one when C = 1; a count the two calls of one graph share
    Mistake(CE, "logits saved as a contiguous copy", "saves a copy of the logits", edit(
        CROSS_ENTROPY, ("ctx.save_for_backward(logits, lse, safe_target, counted)",
                        "ctx.save_for_backward(logits.contiguous(), lse, safe_target, counted)"))),
    Mistake(CE, "ignored rows' targets made class 1", "index 1 is out of bounds", edit(
        CROSS_ENTROPY, ("safe_target = torch.where(counted, target, 0)",
                        "safe_target = torch.where(counted, target, 1)"))),
    Mistake(CE, "the count of counted rows in a module global",
            "right for each call alone but not for two calls in one graph",
            "_COUNT = {}\n" + edit(
                CROSS_ENTROPY, ("        return losses.sum() / counted.sum()",
                                "        _COUNT['rows'] = counted.sum()\n"
                                "        return losses.sum() / _COUNT['rows']"),
                ("scale = grad_output * counted / counted.sum()",
                 "scale = grad_output * counted / _COUNT['rows']"))),
]


# a review's answer (lesson 11, score 8): the course-wide rule the contract now states
MISTAKES += [
    Mistake(CE, "the log-sum-exp kept on ctx", "stores a tensor as", '''
class CrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, target, ignore_index=-100):
        counted = target != ignore_index
        safe = torch.where(counted, target, 0)
        lse = torch.logsumexp(logits, 1)
        picked = logits.gather(1, safe[:, None]).squeeze(1)
        ctx.save_for_backward(logits)
        ctx.lse, ctx.safe, ctx.counted = lse, safe, counted        # the mistake
        return torch.where(counted, lse - picked, 0.0).sum() / counted.sum()
    @staticmethod
    def backward(ctx, grad_output):
        logits, = ctx.saved_tensors
        g = torch.exp(logits - ctx.lse[:, None])
        g[torch.arange(len(ctx.safe)), ctx.safe] -= 1
        scale = grad_output * ctx.counted / ctx.counted.sum()
        return g * scale[:, None], None, None
'''),
]
