"""Stage 3: embedding models. For now it ships the default model's vocabulary for token counts."""
