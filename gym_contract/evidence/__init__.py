"""The evidence pipeline: read captures, join observations to calls, project trajectories, collect rollouts."""
