"""Stage 6: rendering results for people (text) and programs (json)."""
