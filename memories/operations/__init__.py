"""The operations registry: `memories.operations.registry`; definitions in `definitions`."""
