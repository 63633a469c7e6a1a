"""The platform: the stack config (Spec), InferencePlatform that composes pools and serving, cluster access.
Imports `components.pools`, `components.serving` and `components.model`."""
