"""wikigym.envs."""
