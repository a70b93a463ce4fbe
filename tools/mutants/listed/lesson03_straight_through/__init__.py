"""Lesson 03's equivalent mutants (tools.mutants.listed)."""
