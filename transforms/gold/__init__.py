"""Gold transforms: metrics and one module or subpackage per KIP with its rules."""
