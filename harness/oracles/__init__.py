"""Oracles: gdb, drgn, addr2line and the labels of what each shares with the module."""
