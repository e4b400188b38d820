"""Tests of gym-contract."""
