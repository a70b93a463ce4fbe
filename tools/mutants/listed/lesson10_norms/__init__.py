"""Lesson 10's equivalent mutants (tools.mutants.listed)."""
