"""Minimal test client: sends no push while its subscription matches none of its metrics,
where the KIP asks for pushes with an empty metrics blob."""

import sys

from minimal import Behaviour, main

if __name__ == "__main__":
    sys.exit(main(Behaviour(silent_when_unmatched=True)))
