"""Lesson 02 (linear): the grading of MyLinearFunction, FusedLinearReLU and Bilinear."""
