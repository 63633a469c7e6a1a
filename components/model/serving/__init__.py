"""Serving facts: what the serving controllers (KServe, its LLM controller, Seldon, Knative) make of a
spec, and what the pods they make ask for."""
