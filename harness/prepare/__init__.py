"""Build stage: kernel trees (cache, derive), the probe module, the guest initramfs, symcheck."""
