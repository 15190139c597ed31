"""The `infractions` change log as the stages write it: a record is sent when it first
has its evidence, again (same id, same first `detected_at`) whenever it changes, and
once more when its day is settled — `withdrawn` if the settled facts no longer support
it (kept, never deleted). `emit_change` and `settle` update the stage's `emitted` map
(id -> the record as last sent) in place, the map the caller keeps in its state, and
return what to send; `at_most_provisional` is pure."""

from __future__ import annotations

import datetime as dt

import msgspec

from rules.model import PROVISIONAL, WITHDRAWN, Finding, Infraction, localized, plain, stamped


def at_most_provisional(record: Finding, conflicted) -> Finding:
    """A record whose evidence cites a message that came in two versions (same vehicle,
    time and seq, other content: `conflicting_duplicate`) accuses no one on its own: a
    confirmed one becomes provisional, and its evidence names the messages."""
    if not conflicted or not isinstance(record, Infraction) or "conflicting_versions" in record.evidence:
        return record  # (a record judged on both versions of what it cites: rules.versions)
    text = msgspec.json.encode(record.evidence)
    cited = sorted(m for m in conflicted if msgspec.json.encode(m) in text)
    if not cited:
        return record
    status = PROVISIONAL if record.status == "confirmed" else record.status
    return msgspec.structs.replace(record, status=status,
                                   evidence={**record.evidence, "conflicting_duplicates": cited})


def emit_change(emitted: dict[str, Infraction], record: Infraction, moment: float, tz) -> list[Infraction]:
    """A record while its day runs: sent if new or changed since last sent. Its
    `detected_at` is the earliest moment its evidence was seen complete (the same
    whatever order the stages heard things in)."""
    before = emitted.get(record.infraction_id)
    record = msgspec.structs.replace(record, evidence=plain(record.evidence))
    if before is not None:
        before = localized(before, tz)
        record = stamped(record, min(before.detected_at.timestamp(), moment), tz)
        if record == before:
            return []
    else:
        record = stamped(record, moment, tz)
    emitted[record.infraction_id] = record
    return [record]


def settle(emitted: dict[str, Infraction], settled: list[Finding], date: dt.date, closed_at: float,
           tz) -> list[Finding]:
    """A closed day's verdicts against what was sent while it ran; forgets the day."""
    sent = {k: localized(r, tz) for k, r in emitted.items() if r.service_date == date}
    out: list[Finding] = []
    for finding in settled:
        if isinstance(finding, Infraction):
            before = sent.pop(finding.infraction_id, None)
            finding = stamped(finding, before.detected_at.timestamp() if before else closed_at, tz)
            if finding == before:
                continue
        out.append(finding)
    out += [msgspec.structs.replace(r, status=WITHDRAWN) for r in sent.values()]
    for key in [k for k, r in emitted.items() if r.service_date == date]:
        del emitted[key]
    return out
