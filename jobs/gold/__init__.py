"""Gold builders: the run's context, the registry, one thin builder per KIP."""
