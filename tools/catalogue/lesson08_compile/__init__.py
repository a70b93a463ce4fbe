"""Lesson 08 (torch.func and torch.compile): answers with known verdicts for LogSumExp, the
custom operator softplus and the transfer exercise squared_norm, one module per exercise, written
as edits of the lesson's own answers (answers.py); domains.py holds the slips only the contracts'
generated inputs show; review53.py, review54.py, review56.py, review57.py, review58.py and
review58b.py the answers of those reviews."""

from . import (domains, log_sum_exp, review53, review54, review56, review57, review58,
               review58b, softplus, squared_norm)

UNUSUAL = (log_sum_exp.UNUSUAL + softplus.UNUSUAL + squared_norm.UNUSUAL + review53.UNUSUAL
           + review54.UNUSUAL + review56.UNUSUAL + review57.UNUSUAL + review58.UNUSUAL
           + review58b.UNUSUAL)
MISTAKES = (log_sum_exp.MISTAKES + softplus.MISTAKES + squared_norm.MISTAKES + domains.MISTAKES
            + review53.MISTAKES + review54.MISTAKES + review56.MISTAKES
            + review57.MISTAKES + review58.MISTAKES + review58b.MISTAKES)
