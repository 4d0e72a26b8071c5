"""The bottom layer every stage shares: a run's typed results (results.py: Check,
StepError, VariantResult) and the enums they are made of (enums.py: Agreement,
Source, Label). It imports nothing of the harness but the standard library."""
