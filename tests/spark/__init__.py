"""Tests of transforms and I/O on the shared Spark session."""
