"""``pyopencl.cltypes``: imported (and unused) by upstream's tests."""
