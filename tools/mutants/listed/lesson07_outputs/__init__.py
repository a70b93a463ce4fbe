"""Lesson 07's equivalent mutants (tools.mutants.listed)."""
