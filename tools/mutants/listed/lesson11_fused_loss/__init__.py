"""Lesson 11's equivalent mutants (tools.mutants.listed)."""
