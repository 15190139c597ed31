"""Late data is judged, not dropped (issue #33, item 5).

A message behind its vehicle's newest by more than the allowed lateness cannot go into the
day's compact facts: they take a vehicle's messages in event-time order, and its trips and
episodes past it have been judged. A unit that stores and forwards after losing coverage
sends exactly that: its backlog arrives after its first live message. Dropped, it loses
the trips and episodes the backlog proves (issue 33: a C-01, two A-07 and a D-11 lost on
one day), or gains a D-19 from the silence it leaves.

So the vehicle stage keeps, per vehicle-day, a count of the late messages it received
(the messages themselves stay in the input topics and files, where the evidence is read
back from), and once the day is judged, judges it again through the same core from the
vehicle-day's raw input: the messages it had and the late ones, in event-time order (a
fresh engine over them, as the replay runs). What comes out is compared with what the
vehicle stage sent for that day: a record with the same id and other content is sent again
(its first `detected_at` kept), a new one is sent, one the re-judgment no longer finds is
sent `withdrawn`, and an unchanged one is not sent again.

The re-judgment's trips, the passes its telemetry could not follow, when its sensors were
heard and the minutes it reported go to the operator stage as the day's `VehicleDayRevised`
(`revised_day`), in place of what the live stream told of that vehicle-day: the service
days it touches are judged again (D-12, D-13, D-22, art. 45), so a trip the backlog proves
is a trip run there too.

Bounded by the policy: a message later than `stream.rejudge_max_late_s` behind its
vehicle's newest is `late` as before, and a vehicle-day is judged again at most
`stream.rejudge_max_times` times (a late message past that is `late`).

Pure functions over frozen values.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from engine.messages import Heartbeat, OperatorInput, TripCutShort, TripDetected, TripUnfollowed, VehicleDayRevised
from rules.facts import SensorRuns
from rules.model import WITHDRAWN, Finding, Infraction, localized, plain, stamped


class LateDay(msgspec.Struct, frozen=True):
    """The late messages of one vehicle-day: how many were kept, the newest's event time,
    whether some still wait for a re-judgment, and how often the day was judged again."""

    kept: int = 0
    newest: float = 0.0
    waiting: bool = False
    rejudged: int = 0


class Rejudged(msgspec.Struct, frozen=True):
    """A vehicle-day judged again: every infraction record the core found in its raw input,
    and what it tells the operator stage (None: a vehicle not in the fleet)."""

    records: list[Finding]  # its infractions, then its insufficient evidence
    revised: VehicleDayRevised | None


def revised_day(operator_id: str, vehicle_id: str, start: float, end: float, told: Iterable[OperatorInput],
                gap_s: float) -> VehicleDayRevised:
    """The vehicle-day [start, end) as a fresh engine's vehicle stage told it to its
    operator stage (`told`, in order): its detected trips, the latest version of each pass
    not followed, the passes cut short, its sensors' runs merged (`gap_s`: the policy's
    trips.max_coverage_gap_s) and the minutes it reported."""
    trips, unfollowed, cut_short = [], {}, []
    coverage, minutes, conflicted = SensorRuns(), set(), set()
    for message in told:
        if isinstance(message, TripDetected) and message.trip.vehicle_id == vehicle_id \
                and start <= message.trip.departed_at < end and message.trip not in trips:
            trips.append(message.trip)
            conflicted.update(message.conflicted)
        elif isinstance(message, TripUnfollowed) and message.passage.vehicle_id == vehicle_id \
                and start <= message.passage.first_t < end:
            unfollowed[message.passage.key] = message.passage  # a later version of a pass replaces it
        elif isinstance(message, TripCutShort) and message.passage.vehicle_id == vehicle_id \
                and start <= message.passage.departed_at < end and message.passage not in cut_short:
            cut_short.append(message.passage)
        elif isinstance(message, Heartbeat):
            coverage = coverage.merged(message.coverage.get(vehicle_id, SensorRuns()), gap_s)
            minutes.update(m for m in message.reporting.get(operator_id, ()) if start <= m * 60 < end)
    return VehicleDayRevised(operator_id, vehicle_id, start, end, sorted(trips, key=lambda t: t.departed_at),
                             sorted(unfollowed.values(), key=lambda p: p.key), cut_short, coverage,
                             sorted(minutes), sorted(conflicted))


def with_late(day: LateDay | None, epoch: float) -> LateDay:
    """`day` with one more late message, dated `epoch`, waiting for its re-judgment."""
    day = day or LateDay()
    return msgspec.structs.replace(day, kept=day.kept + 1, newest=max(day.newest, epoch), waiting=True)


def keeps(day: LateDay | None, epoch: float, newest: float | None, max_late_s: float, max_times: int,
          watermark: float | None = None) -> str | None:
    """Why a late message dated `epoch` cannot be judged with its vehicle-day (its
    vehicle's newest event being `newest`, the stream's watermark `watermark`), or None: it
    is kept for the re-judgment. Bound by the watermark too: the operator stage keeps a
    closed day's inputs for that long after the stream passed it (OperatorStage._reopenable),
    so a bus back after days offline, its backlog oldest first, is not judged again past it."""
    if newest is not None and epoch < newest - max_late_s:
        return f"more than {max_late_s:.0f} s behind the vehicle's newest event (policy stream.rejudge_max_late_s)"
    if watermark is not None and epoch < watermark - max_late_s:
        return f"more than {max_late_s:.0f} s behind the stream's progress (policy stream.rejudge_max_late_s)"
    if day is not None and day.rejudged >= max_times:
        return f"its vehicle-day was judged again {day.rejudged} times already (policy stream.rejudge_max_times)"
    return None


def rejudged_changes(sent: dict[str, Infraction], found: list[Infraction], moment: float,
                     tz) -> tuple[list[Infraction], dict[str, Infraction]]:
    """A vehicle-day judged again: what to send (changed or new records, withdrawn ones)
    against what was sent for it (`sent`, id -> record as last sent), and the new `sent`.
    A record keeps its first `detected_at`; a new one is detected at `moment`."""
    before = {k: localized(r, tz) for k, r in sent.items()}
    after = dict(before)
    out: list[Infraction] = []
    for record in found:
        record = msgspec.structs.replace(record, evidence=plain(record.evidence), detected_at=None)
        previous = before.get(record.infraction_id)
        if previous is None and record.status == WITHDRAWN:
            continue  # withdrawn within the re-judgment: nothing that was ever sent
        record = stamped(record, previous.detected_at.timestamp() if previous else moment, tz)
        after[record.infraction_id] = record
        if record != previous:
            out.append(record)
    ids = {r.infraction_id for r in found}
    for key, record in before.items():
        if key not in ids and record.status != WITHDRAWN:
            after[key] = msgspec.structs.replace(record, status=WITHDRAWN)
            out.append(after[key])
    return out, after
