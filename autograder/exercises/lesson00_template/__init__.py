"""Lesson 00 (template): the grading of Square, WeightedSum and Outer."""
