"""Lesson 04 (double backward): the grading of SwishFunction, CubeOnce and NumpyTanh."""
