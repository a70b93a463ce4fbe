"""Lesson 09, review 58: CumMax's indices and IndexSelect's index kept in a module global in
place of ctx, which the byte checks once named by what was not saved ("saves 0 bytes ... a
tensor made only to be saved"): the shared outside-ctx check now runs first for both."""

from .. import Mistake, edit
from .answers import (_CUMMAX_FORWARD, _INDEX_ADD, _SCATTER_ADD, _SELECT_FORWARD, _cummax,
                      _select)

_GLOBAL = "_KEPT = {}\n"

MISTAKES = [
    Mistake("CumMax", "the indices of the last call kept in a module global",
            "CumMax.forward kept state outside ctx: _KEPT in a module global",
            _GLOBAL + edit(_cummax(_SCATTER_ADD, forward=edit(
                _CUMMAX_FORWARD, ("ctx.save_for_backward(indices)", "_KEPT['indices'] = indices"))),
                ("        indices, = ctx.saved_tensors\n", "        indices = _KEPT['indices']\n"))),
    Mistake("IndexSelect", "the index kept in a module global",
            "IndexSelect.forward kept state outside ctx: _KEPT in a module global",
            _GLOBAL + edit(_select(_INDEX_ADD, forward=edit(
                _SELECT_FORWARD, ("ctx.save_for_backward(index)", "_KEPT['index'] = index"))),
                ("        index, = ctx.saved_tensors\n", "        index = _KEPT['index']\n"))),
]
UNUSUAL = []
