"""Lesson 04's equivalent mutants (tools.mutants.listed)."""
