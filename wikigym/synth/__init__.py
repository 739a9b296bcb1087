"""wikigym.synth."""
