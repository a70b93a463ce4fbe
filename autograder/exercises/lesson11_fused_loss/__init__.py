"""Lesson 11 (fused loss): the grading of CrossEntropy, linear_cross_entropy and
SmoothedCrossEntropy."""
