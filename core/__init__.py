"""Pieces every app builds on, importing no app of the project."""
