"""Built-in examples, runnable with ``python -m leapp.examples.<name>``."""
