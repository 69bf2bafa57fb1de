"""Minimal test client: ignores the client.id it is given and sends its own."""

import sys

from minimal import Behaviour, main

OWN_CLIENT_ID = "my-own-client-id"

if __name__ == "__main__":
    sys.exit(main(Behaviour(own_client_id=OWN_CLIENT_ID)))
