"""Deploy-time talk with the cluster: the provider that knows its cluster (`provider.py`), the
ownership annotation every object we make carries, and the hooks that let an interrupted `up`
converge and `destroy` leave nodes as found (`hooks.py`, on the client in `cluster.py`)."""
