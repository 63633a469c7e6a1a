"""Node pool components: GKE node pools, EKS node groups, existing nodes, and what they share.
Imports only `components.model` (and the Pulumi SDKs)."""
