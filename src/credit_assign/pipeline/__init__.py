"""The workflow's logic, importable without torch."""
