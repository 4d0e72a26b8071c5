"""Report stage: report.json, report.md, report.ktap, report.html and `show`."""
