"""Minimal test client whose ClientSoftwareName is inside KIP-511's pattern but outside Apache's
(an underscore, ruling 9): a SHOULD it misses, not a reason to leave its KIP-714 cases unjudged."""

import sys

from minimal import Behaviour, main

if __name__ == "__main__":
    sys.exit(main(Behaviour(software_name="kconform_minimal")))
