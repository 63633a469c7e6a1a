"""The autoscalers' models: what each one knows of a node it has not made yet, and when it makes one."""
