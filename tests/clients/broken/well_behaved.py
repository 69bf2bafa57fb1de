"""Minimal test client: the control, with every defect off (it passes the cases the others fail)."""

import sys

from minimal import Behaviour, main

if __name__ == "__main__":
    sys.exit(main(Behaviour()))
