"""wandb, left out of the test suite. timm imports wandb whenever it is installed (lmms-eval
brings it), which costs every process importing open_clip about 1.1 s; nothing here
logs to wandb, and every library that imports it does so in try/except ImportError.
tests/conftest.py puts this folder first on sys.path and on PYTHONPATH (subprocesses)."""

raise ImportError("wandb is left out of autocomp's test suite (tests/shims/wandb.py)")
