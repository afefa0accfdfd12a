"""cora-ci: a portable code index bundle, built per commit, queried offline."""

__version__ = "0.1.0"
