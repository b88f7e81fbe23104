"""Built-in filter and score plugins, one concept per module."""
