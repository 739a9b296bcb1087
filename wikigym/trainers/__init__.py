"""wikigym.trainers."""
