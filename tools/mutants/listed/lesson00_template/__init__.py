"""Lesson 00's equivalent mutants (tools.mutants.listed)."""
