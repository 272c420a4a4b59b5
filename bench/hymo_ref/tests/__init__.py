# The tests use tiny tensors: threads only add overhead (and spin-waiting
# threads are slow on a loaded 2-core machine).  Set before torch loads.
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
