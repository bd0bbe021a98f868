"""Side-by-side benchmarks of keras_attention against keras and keras-hub.

Run them all with `python -m benchmarks.run_all`; see benchmarks/README.md.
"""
