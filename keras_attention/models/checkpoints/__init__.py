"""Pretrained checkpoint folders (Hugging Face, keras-hub) read into our models."""
