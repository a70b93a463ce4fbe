"""Lesson 06's equivalent mutants (tools.mutants.listed)."""
