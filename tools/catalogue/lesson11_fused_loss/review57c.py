"""Lesson 11, review 57 (round C): linear_cross_entropy's loss-only path summing each chunk's
losses in float16 (F.cross_entropy with reduction="sum"), inf once one chunk's sum passes 65504
(chunk_size past N); a float32 copy of the weight cached between calls, keyed on what a write
through weight.data leaves as it was (id(), data_ptr(), shape, dtype, _version).
Unusual: CrossEntropy's forward by F.cross_entropy, backward by softmax minus one_hot."""

from .. import Mistake, Unusual, edit
from .answers import LINEAR

LCE, CE = "linear_cross_entropy", "CrossEntropy"
_WIDE = "        weight_wide = weight.to(wide)\n"
_CLASS = "\nclass LinearCrossEntropy(torch.autograd.Function):\n"


def _cached(key: str) -> str:
    """LINEAR with its float32 weight copy kept between calls under ``key``."""
    return edit(LINEAR, (_CLASS, "\n_CACHE = {}\n" + _CLASS),
                (_WIDE, f"        key = {key}\n"
                        "        if key not in _CACHE:\n"
                        "            _CACHE.clear()\n"
                        "            _CACHE[key] = weight.detach().to(wide)\n"
                        "        weight_wide = _CACHE[key]\n"))


UNUSUAL = [
    Unusual(CE, "forward by F.cross_entropy, the logits and target saved, backward by softmax "
            "minus one_hot", '''
class CrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, target, ignore_index=-100):
        ctx.ignore_index = ignore_index
        ctx.save_for_backward(logits, target)
        return F.cross_entropy(logits, target, ignore_index=ignore_index)

    @staticmethod
    def backward(ctx, grad_output):
        logits, target = ctx.saved_tensors
        counted = target != ctx.ignore_index
        p = torch.softmax(logits, dim=1)
        y = F.one_hot(torch.where(counted, target, 0), logits.shape[1]).to(p.dtype)
        g = (p - y) * (counted.to(p.dtype) / counted.sum())[:, None]
        return g * grad_output, None, None
'''),
]

MISTAKES = [
    Mistake(LCE, "the loss-only path sums each chunk's losses in float16 (F.cross_entropy, "
            "reduction='sum')",
            "loss is not finite in float16 under torch.no_grad() (N=4096, chunk_size=5000)",
            edit(LINEAR, ("        for start in range(0, N, chunk_size):\n",
                          "        if not (want_x or want_weight):\n"
                          "            for start in range(0, N, chunk_size):\n"
                          "                rows = slice(start, start + chunk_size)\n"
                          "                loss += F.cross_entropy(x[rows] @ weight.T, target[rows],"
                          " reduction='sum').to(wide)\n"
                          "            ctx.save_for_backward(None, None)\n"
                          "            return (loss / N).to(x.dtype)\n"
                          "        for start in range(0, N, chunk_size):\n"))),
    Mistake(LCE, "a float32 weight copy cached between calls, keyed on id, data_ptr, shape, "
            "dtype and _version", "returned a stale loss, from a cache kept between calls",
            _cached("(id(weight), weight.data_ptr(), tuple(weight.shape), weight.dtype, "
                    "weight._version, wide)")),
    Mistake(LCE, "a float32 weight copy cached between calls, keyed on id and _version",
            "returned a stale loss, from a cache kept between calls",
            _cached("(id(weight), weight._version, wide)")),
]
