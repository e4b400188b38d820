"""Tests of lineage/: fingerprints and the resolver."""
