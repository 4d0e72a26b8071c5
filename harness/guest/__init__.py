"""Guest stage: QEMU, the data port, KASLR, the scenario, the vmcore; assets/ holds the guest programs."""
