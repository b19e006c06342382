"""Silver: the parser registry, the family claims, one parser per family."""
