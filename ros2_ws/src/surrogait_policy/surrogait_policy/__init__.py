"""The surrogait policy node."""
