"""The offline preview engine and the CLI: runs a stack program under Pulumi's mock runtime, then the check.
Imports `components.check` and `components.model`; never `components.platform` (it runs the program)."""
