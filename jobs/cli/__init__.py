"""The ``kafka-audit`` command line: the entry point and one module per command."""
