"""Lesson 08 (compile): the grading of LogSumExp, softplus and squared_norm."""
