"""Lesson 01 (sigmoid): the grading of MySigmoid, MyReLU, ScaledSigmoid and Softplus."""
