"""Content digests for the cache keys (kernel tarball, initramfs files, patches, fragments)."""

import hashlib


def file_digest(path):
    """sha256 of a file's content, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def bytes_digest(data):
    """sha256 of `data` (bytes), as hex."""
    return hashlib.sha256(data).hexdigest()
