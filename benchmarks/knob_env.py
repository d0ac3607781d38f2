"""The benchmarks' tuning knobs (BWPROF_* environment variables) set for one measurement only."""
from __future__ import annotations

import contextlib
import os


@contextlib.contextmanager
def knob_env(env: dict | None = None, clear=()):
    """Sets the variables of `env` (an empty value unsets one) and unsets those named in `clear` for
    the body only (an instance reads its knobs when it is made), then restores each as it was."""
    env = env or {}
    saved = {k: os.environ.get(k) for k in {*clear, *env}}
    try:
        for k in clear:
            os.environ.pop(k, None)
        for k, v in env.items():
            if v:
                os.environ[k] = v
            else:
                os.environ.pop(k, None)
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
