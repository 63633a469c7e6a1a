"""One reader per pool kind and per workload kind: each turns a graph entry of its type into what
the rules judge (`components.check.read`)."""
