"""Lesson 02's equivalent mutants (tools.mutants.listed)."""
