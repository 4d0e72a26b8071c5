"""The variant matrix on a Dask cluster (--cluster): one task per variant job.

spec       what a job needs, sent from the client (no client path in it)
artifacts  a run directory packed on the worker, unpacked under the client's
affinity   which worker a job prefers: one that holds its tree
job        the task function a Dask worker runs: preflight, a child harness, pack
child      the child process: build the tree, boot, verify one variant
client     connect, submit, gather, cancel; what run.py calls
"""
