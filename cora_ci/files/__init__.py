"""Stage 1: find the files of a repository, decode them and tell their language."""
