"""The KIP-977 volume engine: a known keyed workload, and the partition metrics collected from a
target to compare with it. The cases that run it are in suites/volumes/."""
