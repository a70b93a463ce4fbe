"""Lesson 13's equivalent mutants (tools.mutants.listed)."""
