"""portlint: find CUDA-only code and say, per accelerator, how to port it."""

__version__ = "0.1.0"
