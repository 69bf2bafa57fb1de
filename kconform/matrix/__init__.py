"""`kconform matrix run`'s machinery: what each run is (`plan`), running them side by side
within the cores and memory (`schedule`), and a deterministic part of them per machine with the
parts joined again (`shard`). The command itself is `kconform.cli.matrix`."""
