"""Lesson 03 (ste): the grading of SignSTE, SignClippedSTE, RoundSTE, FakeQuantize and
StraightThroughSoftmax."""
