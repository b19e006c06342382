"""The one Delta I/O package: engine choice, native and embedded writers, reads."""
