"""A count of rows as the reports show it: agree, disagree and unchecked apart.

"582/584" reads as two failures when the two rows are ones no oracle could check
(issue 38 item 8), so every count report.md, report.html and `show` print goes
through Tally: the three numbers, each named."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Tally:
    agree: int
    disagree: int
    unchecked: int

    def __str__(self):
        return f"{self.agree} agree, {self.disagree} disagree, {self.unchecked} unchecked"


def of_counts(c):
    """The tally of a variant's `counts` (symbols and values; report.json)."""
    agree = c.get("symbols_agree", 0) + c.get("values_agree", 0)
    unchecked = c.get("unchecked", 0)
    total = c.get("symbols", 0) + c.get("values", 0)
    return Tally(agree, total - unchecked - agree, unchecked)


def seed_text(row):
    """A seed row's checks (checks/seeds.evaluate); a report.json written before the
    row had its disagree and unchecked counts says only how many of how many agree."""
    if "disagree" in row and "unchecked" in row:
        return str(Tally(row["agree"], row["disagree"], row["unchecked"]))
    return f"{row['agree']} agree of {row['checks']}"
