"""Model classes the unit tests use as deployed model code (this directory is a models dir)."""
