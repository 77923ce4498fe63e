"""What several parts share: target limits, kernel discovery and the compile-time value interpreter."""
