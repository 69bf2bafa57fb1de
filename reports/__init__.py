"""Result model and report writers."""
