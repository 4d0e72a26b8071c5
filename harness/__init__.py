"""ksymlab harness: build kernels, boot them under QEMU, verify with gdb, report."""
