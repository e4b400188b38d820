"""Tests of outcome/: the classifiers of each harness and the policy."""
