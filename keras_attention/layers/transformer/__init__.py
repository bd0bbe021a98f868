"""Transformer encoder and decoder blocks, and stochastic depth for their residual branches."""
