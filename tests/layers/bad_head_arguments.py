"""Constructor arguments every multi-head layer refuses: (kwargs, what the error says)."""

BAD_HEAD_ARGUMENTS = [
    ({"num_heads": 0, "key_dim": 4}, "num_heads=0"),
    ({"num_heads": 2.5, "key_dim": 4}, "num_heads=2.5"),
    ({"num_heads": "2", "key_dim": 4}, "num_heads='2'"),
    ({"num_heads": 2, "key_dim": 0}, "key_dim=0"),
]
