"""Minimal test client: keeps pushing with its old SubscriptionId after UNKNOWN_SUBSCRIPTION_ID."""

import sys

from minimal import Behaviour, main

if __name__ == "__main__":
    sys.exit(main(Behaviour(ignores_unknown_subscription=True)))
