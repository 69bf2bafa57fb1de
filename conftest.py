"""Loads the kconform pytest plugin for in-repo runs (installs get it from the entry point)."""

pytest_plugins = ["kconform.plugin"]
