"""Tests without Spark."""
