"""Lesson 08's equivalent mutants (tools.mutants.listed)."""
