"""Lesson 05's equivalent mutants (tools.mutants.listed)."""
