"""Deploy facts: pinned versions and charts, Helm records, ownership markers, cloud identities."""
