"""python3 -m bwprof.baseline compare|baseline ..."""
import sys

from .cli import main

sys.exit(main())
