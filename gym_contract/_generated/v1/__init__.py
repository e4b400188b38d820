"""Models generated from schemas/v1."""
