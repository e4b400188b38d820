"""Tests of reading/: sources, strict JSON parsing, records of lines and documents."""
