"""A package whose kernel imports a helper relatively (test data: kernels in packages)."""
