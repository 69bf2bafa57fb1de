"""PySpark jobs over produced volumes and partition metrics."""
