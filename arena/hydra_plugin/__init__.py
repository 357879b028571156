"""Hydra search-path plugin of the arena (filled in below)."""
