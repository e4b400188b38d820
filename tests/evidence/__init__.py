"""Tests of evidence/: capture, join, projection, collection and rollout ids."""
