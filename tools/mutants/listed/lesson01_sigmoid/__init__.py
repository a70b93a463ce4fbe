"""Lesson 01's equivalent mutants (tools.mutants.listed)."""
