"""Tests of coverage/: the criteria C1–C7 rated from rollouts."""
