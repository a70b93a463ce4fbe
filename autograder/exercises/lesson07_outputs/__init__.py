"""Lesson 07 (outputs): the grading of SortWithIndices, SplitHalves, ReLUInPlace and AbsInPlace."""
