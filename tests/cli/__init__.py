"""Tests of cli/: the commands, run as a user runs them."""
