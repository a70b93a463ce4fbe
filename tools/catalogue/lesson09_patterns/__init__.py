"""Lesson 09 (backward patterns): answers with known verdicts for BroadcastMul, ProdOverDim,
Cumsum, IndexSelect, Normalize and the transfer exercise CumMax, one module per exercise
(normalize_eps_branch: how Normalize's backward tells a row above eps from one below), built
from the lesson's forwards and backward bodies (answers.py); domains.py holds what only the
generated domain checks separate."""

from . import (broadcast_mul, cummax, cumsum, domains, index_select, normalize,
               normalize_eps_branch, prod_over_dim, review53, review54, review55,
               review55c, review56, review57, review57c, review58)

UNUSUAL = (broadcast_mul.UNUSUAL + prod_over_dim.UNUSUAL + cumsum.UNUSUAL + index_select.UNUSUAL
           + normalize.UNUSUAL + cummax.UNUSUAL + review53.UNUSUAL + review54.UNUSUAL
           + review55.UNUSUAL + review55c.UNUSUAL + review56.UNUSUAL
           + review57.UNUSUAL + review57c.UNUSUAL + review58.UNUSUAL)
MISTAKES = (broadcast_mul.MISTAKES + prod_over_dim.MISTAKES + cumsum.MISTAKES
            + index_select.MISTAKES + normalize.MISTAKES + normalize_eps_branch.MISTAKES
            + cummax.MISTAKES + domains.MISTAKES + review53.MISTAKES
            + review54.MISTAKES + review55.MISTAKES + review55c.MISTAKES
            + review56.MISTAKES + review57.MISTAKES + review57c.MISTAKES
            + review58.MISTAKES)
