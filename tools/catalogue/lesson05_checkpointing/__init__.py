"""Lesson 05 (checkpointing): answers with known verdicts for CheckpointFunction,
checkpoint_sequential and the transfer exercise ReversibleCoupling, one module per exercise (its
unusual answers and its mistakes; CheckpointFunction's mistakes in three), with the
CheckpointFunction builders both checkpoint modules use in ``answers``."""

from . import (checkpoint_arguments, checkpoint_function, checkpoint_sequential,
               checkpoint_state, reversible_coupling, review52, review53,
               review54, review54b, review55, review55b, review57, review58, review58b,
               review58c, review59, review59b, review59c)

UNUSUAL = (checkpoint_function.UNUSUAL + checkpoint_arguments.UNUSUAL
           + checkpoint_sequential.UNUSUAL + reversible_coupling.UNUSUAL + review52.UNUSUAL
           + review53.UNUSUAL + review54.UNUSUAL + review57.UNUSUAL
           + review58c.UNUSUAL + review59.UNUSUAL + review59b.UNUSUAL
           + review59c.UNUSUAL)
MISTAKES = (checkpoint_function.MISTAKES + checkpoint_arguments.MISTAKES
            + checkpoint_state.MISTAKES + checkpoint_sequential.MISTAKES
            + reversible_coupling.MISTAKES + review52.MISTAKES + review53.MISTAKES
            + review54.MISTAKES + review54b.MISTAKES + review55.MISTAKES
            + review55b.MISTAKES + review57.MISTAKES + review58.MISTAKES
            + review58b.MISTAKES + review58c.MISTAKES + review59.MISTAKES
            + review59b.MISTAKES + review59c.MISTAKES)
