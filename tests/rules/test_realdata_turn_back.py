"""The turn back (Conselheiro Lafaiete's art. 14 § único, rules.turn_back) on real, sparse
GPS: SPTrans line 34020, 2015-10-02, under Lafaiete's policy.

The traces have silences of 45 to 100 minutes in the middle of trips: a bus last seen
2 km along and next seen behind that, going back, has reached the terminal unseen and
is on its next trip. Before a pass ended at a silence longer than
`trips.max_coverage_gap_s`, each such silence was read as a possible turn back: 11
insufficient-evidence records that day for 11 realized trips, noise in the operations
room, and each a pass told cut short to the service-day rules.
"""

from pathlib import Path

import pytest

from fiscaliza.replay import ReplayInputs, replay

pytestmark = pytest.mark.realdata

LAFAIETE = Path(__file__).resolve().parents[2] / "kernel" / "policies" / "conselheiro-lafaiete.toml"


def test_real_traces_with_long_silences_yield_no_turn_back_record(sptrans_files):
    _, _, inputs = sptrans_files
    result = replay(ReplayInputs(inputs.feed, inputs.fleet, inputs.tachograph, policy=LAFAIETE))
    assert len(result.trips) == 11  # the trips are read alike under either law
    assert [r for r in result.infractions + result.insufficient if r.code == "art. 14 § único"] == []
