"""Attention layers: Bahdanau and Luong, multi-head, grouped-query and self-attention.

`BaseAttention` is the general attention layer (scores -> mask -> softmax ->
dropout -> weighted sum) that `AdditiveAttention` and `DotProductAttention`
specialise; `MultiHeadAttention` and `GroupQueryAttention` share their
argument checks and input handling (`head_attention_checks`), and
`SelfAttention` and the vision `SpatialSelfAttention` theirs
(`self_attention_common`).
"""
