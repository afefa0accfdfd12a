"""One module per CLI verb, as pre-commit has; `cora_ci.cli` only lists them."""
