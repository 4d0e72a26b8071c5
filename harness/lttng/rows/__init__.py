"""The LTTng rows: each feature LTTng resolves by name, checked from the boot's
trace against oracles that do not go through LTTng (features, kstack, uprobe,
splice, kvmprobe), the coverage table and symcheck's audit of the build."""
