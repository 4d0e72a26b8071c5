"""The LTTng boot: one traced session in the guest (session), gdb's stop at its
quiet point (gdbstop), the guest's own oracle lines (guestlines) and the trace's
summary (trace)."""
