"""Checks: the Check model and the comparison of each sampler with its oracles."""
