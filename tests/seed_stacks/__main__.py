"""The stack program: read this stack's config, build the platform. Everything else is in the library."""

from gpu_inference import InferencePlatform, load_stack_spec

InferencePlatform("gpu-inference", load_stack_spec())
