"""Models generated from the versioned JSON Schemas; import them through gym_contract.models."""
