"""KIP-977 volumes: a known keyed workload against what the target counts per partition."""
