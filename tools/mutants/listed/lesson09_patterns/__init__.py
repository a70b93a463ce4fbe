"""Lesson 09's equivalent mutants (tools.mutants.listed)."""
