"""Node shapes and machine catalogs, per cloud: what one node of a pool is and holds."""
