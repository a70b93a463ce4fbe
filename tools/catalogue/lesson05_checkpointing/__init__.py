"""Lesson 05 (checkpointing): answers with known verdicts for CheckpointFunction,
checkpoint_sequential and the transfer exercise ReversibleCoupling, one module per exercise (its
builders, its unusual answers and its mistakes; CheckpointFunction's in three: the Function as
a whole, how forward keeps its arguments, and the random state), with the CheckpointFunction
builders every module uses in ``answers``."""

from . import (checkpoint_arguments, checkpoint_function, checkpoint_sequential,
               checkpoint_state, reversible_coupling)

UNUSUAL = (checkpoint_function.UNUSUAL + checkpoint_arguments.UNUSUAL
           + checkpoint_sequential.UNUSUAL + reversible_coupling.UNUSUAL)
MISTAKES = (checkpoint_function.MISTAKES + checkpoint_arguments.MISTAKES
            + checkpoint_state.MISTAKES + checkpoint_sequential.MISTAKES
            + reversible_coupling.MISTAKES)
