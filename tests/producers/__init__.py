"""Tests of producers/: the Claude Code producer."""
