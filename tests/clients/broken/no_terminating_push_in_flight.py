"""Minimal test client: closed while a push awaits its answer, it sends no final push (as the Java
producer of 3.7.0-3.8.0 does, KAFKA-17731); with nothing in flight it sends one."""

import sys

from minimal import Behaviour, main

if __name__ == "__main__":
    sys.exit(main(Behaviour(no_terminating_push_in_flight=True)))
