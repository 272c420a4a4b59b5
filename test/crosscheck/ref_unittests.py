#!/usr/bin/env python3
"""The PyTorch reference's own unit tests (bench/hymo_ref/tests) as one ctest.

Exit 0 when they pass, 1 when one fails, 77 (skip) when torch is missing.
"""
import os
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
try:
    import torch  # noqa: F401
except ImportError as e:  # pragma: no cover
    print("ref_unittests: skipping, PyTorch not importable: %s" % e)
    sys.exit(77)

os.chdir(ROOT)
sys.path.insert(0, ROOT)
suite = unittest.defaultTestLoader.discover(os.path.join("bench", "hymo_ref", "tests"), top_level_dir=".")
result = unittest.TextTestRunner(verbosity=1).run(suite)
sys.exit(0 if result.wasSuccessful() and result.testsRun > 0 else 1)
