"""LTTng's supply: Debian's pinned sources (archive, fetch), the out-of-tree build
against a variant's tree (modbuild, reuse, treemods) and the guest image that
carries it (guestroot, image)."""
