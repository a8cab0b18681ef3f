"""The decision record as a team's ADR tools read it (MADR, adr-tools, log4brains, Backstage's
ADR plugin): YAML front matter on top of every report, and adr-tools' numbered names.

Front matter, MADR's keys: `status` is `proposed` whatever the debate's outcome, because
MADR's status is the team's (`accepted` once they accept it, `rejected`, `superseded by
...`); two models agreeing proposes a decision, it does not take one. `date` is the day the
report was written (ISO). `decision-makers` is Claude, who ran the debate and wrote its
verdicts; `consulted` is Codex, with each model and effort its rollout recorded, the party
MADR calls consulted ("two-way communication"); a Codex that took part in no round is not
listed. Under `sparring`: the skill, the session and the outcome as the runner decided it.

Names: in a folder that already holds numbered records (adr-tools' `NNNN-title.md`), a
report takes the next number (the highest + 1, four digits, adr-tools' rule), and its name
passes Backstage's default `madrFilePathFilter` (`^\\d{4}-.+\\.md$`); elsewhere it keeps the
name its `report_path` gives. A name that begins with a date (`2026-12-02-...`, sparring's
own) is not a numbered record, although that filter lets it through too.
"""

from __future__ import annotations

import datetime
import os
import re
from pathlib import Path
from typing import Any

from sparring import yamltext

STATUS = "proposed"
# adr-tools' numbered record: digits, a dash, a title, .md; not a date name.
_NUMBERED = re.compile(r"(?P<n>[0-9]{4,})-(?!\d\d-\d\d(?:\D|$)).+\.md")


def front_matter(model: dict[str, Any]) -> str:
    """The report's YAML front matter, `---` to `---`, from its facts (report.build)."""
    data = {
        "status": STATUS,
        "date": datetime.date.fromisoformat(model["date"]),
        "title": model["title"],
        "decision-makers": model["decision_makers"],
        "consulted": model["consulted"],
        "sparring": {"skill": model["skill"], "session": model["session"],
                     "outcome": model["outcome"],
                     "codex-every-round": model["codex_part"]["every_round"]},
    }
    return f"---\n{yamltext.dump(data)}---\n\n"


def document(model: dict[str, Any], body: str) -> str:
    """The report as written: its front matter, then the body (which opens with its H1)."""
    return front_matter(model) + body


def number_of(name: str) -> int | None:
    """The number of an adr-tools record's file name (`0007-use-sqlite.md`), else None."""
    found = _NUMBERED.fullmatch(name)
    return int(found.group("n")) if found else None


def numbered_name(folder: Path, slug: str) -> str | None:
    """`NNNN-slug.md`, the next number in `folder`, when it holds numbered records; None
    when it holds none (or does not exist)."""
    try:
        names = os.listdir(folder)
    except (FileNotFoundError, NotADirectoryError):
        return None
    numbers = [n for n in map(number_of, names) if n is not None]
    if not numbers:
        return None
    return f"{max(numbers) + 1:04d}-{slug}.md"
