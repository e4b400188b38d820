"""Tests of validation/: the engine, its rules and its fast path."""
