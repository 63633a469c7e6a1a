"""The model: Kubernetes scheduling rules, GPU catalogs, the Knative feature table, versions, errors.
Pure Python with no side effects; imports no Pulumi and nothing else of ours."""
