"""Loads the kconform pytest plugin for in-repo runs (installed runs get it from the entry point)."""

pytest_plugins = ["kconform.plugin"]
