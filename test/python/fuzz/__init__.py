"""The differential fuzzer: random kernels (kernelgen), an interval model of
the spec's numerics in NumPy (model, numeric), and the runner that compiles,
compares, shrinks and reports (runner). test_fuzz_differential.py drives it."""
