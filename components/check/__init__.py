"""The placement check: which pod template can land on which pool, and what is wrong. Pure Python.
Imports only `components.model`."""
