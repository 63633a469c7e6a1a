"""Serving components: Knative, the add-on installs, InferenceService, Seldon, model namespaces.
Imports only `components.model` (and the Pulumi SDKs)."""
