"""The four workflows: the registry, one package per workflow, and the report they share."""
