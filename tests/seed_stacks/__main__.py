"""The stack program: read this stack's config, build the platform. Everything else is in components/."""

from components.platform.platform import InferencePlatform, load_stack_spec

InferencePlatform("gpu-inference", load_stack_spec())
