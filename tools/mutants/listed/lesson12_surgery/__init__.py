"""Lesson 12's equivalent mutants (tools.mutants.listed)."""
