"""Where tokens are: position embeddings and encodings (1D and 2D), rotary positions, score biases.

Score biases (`AlibiBias`, `AlibiBias2D`, `RelativePositionBias`) give the
position through the attention scores instead of the token features.
"""
