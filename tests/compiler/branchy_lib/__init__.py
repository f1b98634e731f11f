"""A library-shaped package for tests/compiler/test_library_branches.py: branches on data in code
``leapp.compile`` does not rewrite (another module), written as pure-NumPy libraries write them."""
