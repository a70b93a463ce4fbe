"""Lesson 05 (checkpointing): the grading of CheckpointFunction, checkpoint_sequential and
ReversibleCoupling."""
