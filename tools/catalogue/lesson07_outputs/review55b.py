"""Lesson 07: review 55b's answers. Empty inputs were graded for the in-place exercises only:
SplitHalves's halves from x.reshape(*lead, 2, -1) and SortWithIndices's saved dtype picked from
indices.max() passed, and both raise on an x of shape (0, 4) or (0, 5) that slicing and
torch.sort accept; the Exercise 1 and 2 contracts now name empty x, graded on (0, n) and (3, 0).
A comparison torch lacks for float8 raised a NotImplementedError that grading called the stub's:
it is quoted now, with its case, by self_check as by grade. The catalogue's torch.split(x, h)
answer returns one piece for a last dimension of 0: it is a mistake now, split by sizes [h, h]
the unusual answer."""

from .. import Mistake, Unusual, edit
from .abs_in_place import COMPARISONS, abs_answer
from .sort_with_indices import _SORT_FORWARD, _sort, _sort_backward
from .split_halves import _SPLIT_BACKWARD, _SPLIT_FORWARD, _split

_NARROW_SCATTER = _sort_backward(
    "        return torch.zeros_like(grad_values).scatter(-1, indices.long(), grad_values)\n")

UNUSUAL = [
    Unusual("SortWithIndices", "indices saved in the narrowest dtype that holds the row, int8 up",
            _sort(edit(_SORT_FORWARD, ("        ctx.save_for_backward(indices)\n",
                                       "        n = x.shape[-1] if x.dim() else 1\n"
                                       "        narrow = next(d for d in (torch.int8, torch.int16,"
                                       " torch.int32, torch.int64)\n"
                                       "                      if n - 1 <= torch.iinfo(d).max)\n"
                                       "        ctx.save_for_backward(indices.to(narrow))\n")),
                  _NARROW_SCATTER)),
    Unusual("SplitHalves", "halves by unflatten and unbind; F.pad for a lone second half", _split(
        edit(_SPLIT_FORWARD, ("        h = x.shape[-1] // 2\n"
                              "        return x[..., :h].clone(), x[..., h:].clone()\n",
                              "        a, b = x.unflatten(-1, (2, x.shape[-1] // 2)).unbind(-2)\n"
                              "        return a.clone(), b.clone()\n")),
        edit(_SPLIT_BACKWARD, ("        known = a if",
                               "        if a is None:\n"
                               "            return torch.nn.functional.pad(b, (b.shape[-1], 0))\n"
                               "        known = a if")))),
]

MISTAKES = [
    Mistake("SplitHalves", "halves by reshape(*lead, 2, -1).unbind(-2), raising on an empty x",
            "with x of shape (0, 4)", _split(
                edit(_SPLIT_FORWARD, ("        h = x.shape[-1] // 2\n"
                                      "        return x[..., :h].clone(), x[..., h:].clone()\n",
                                      "        a, b = x.reshape(*x.shape[:-1], 2, -1).unbind(-2)\n"
                                      "        return a.clone(), b.clone()\n")),
                _SPLIT_BACKWARD)),
    Mistake("SplitHalves", "torch.split(x, h), one piece when h is 0", "with x of shape (3, 0)",
            _split(edit(_SPLIT_FORWARD, ("        return x[..., :h].clone(), x[..., h:].clone()\n",
                                         "        return tuple(part.clone() for part in "
                                         "torch.split(x, h, dim=-1))\n")), _SPLIT_BACKWARD)),
    Mistake("SortWithIndices", "the saved dtype picked from indices.max(), raising on an empty x",
            "with x of shape (0, 5)",
            _sort(edit(_SORT_FORWARD, ("        ctx.save_for_backward(indices)\n",
                                       "        top = int(indices.max())\n"
                                       "        narrow = torch.int16 if top <= 32767 else "
                                       "torch.int32\n"
                                       "        ctx.save_for_backward(indices.to(narrow))\n")),
                  _NARROW_SCATTER)),
    Mistake("AbsInPlace", "the sign of a float8_e5m2 copy, a comparison torch lacks for it",
            "forward raised NotImplementedError",
            abs_answer((COMPARISONS[0], "small = x.to(torch.float8_e5m2)\n"
                                        "        sign = (small > 0).to(torch.int8) - "
                                        "(small < 0).to(torch.int8)"))),
]
