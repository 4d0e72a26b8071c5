"""`python3 -m harness session VARIANT[,VARIANT]`: a verification session a person
drives (docs/session.md). One variant: gdb's own prompt, with the project's
commands (gdbscripts/ksymlab_session.py); two: a front end that types each line
into both gdbs and prints their answers side by side (pair.py)."""
