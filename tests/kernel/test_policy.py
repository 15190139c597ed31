"""The enforcement policy: shipped defaults (DESIGN.md tables) and refusal of bad files."""

from __future__ import annotations

import datetime as dt
import re
from zoneinfo import ZoneInfo

import pytest

from kernel.policy import PolicyError, load_policy, parse_policy, shipped_policy_path

SHIPPED = shipped_policy_path()
TEXT = SHIPPED.read_text(encoding="utf-8")


def edited(old: str, new: str) -> str:
    """The shipped policy with one line changed."""
    assert TEXT.count(old) == 1, old
    return TEXT.replace(old, new)


@pytest.fixture(scope="module", params=["packaged", "path"])
def policy(request):
    return load_policy() if request.param == "packaged" else load_policy(SHIPPED)


def test_shipped_policy_trip_rules_are_design_defaults(policy):
    assert policy.trips.terminal_zone_m == 100  # "100 m around the first stop"
    assert policy.trips.min_coverage == 0.80  # "at least 80 % of the shape"
    assert policy.trips.match_window_s == 1800  # "at most 30 min apart" = 30 * 60 s
    assert policy.trips.in_service_terminal_s == 1800  # "less than 30 min after arriving"


def test_shipped_policy_detector_thresholds_are_design_defaults(policy):
    assert (policy.d11.max_distance_m, policy.d11.min_travel_m, policy.d11.min_duration_s) == (50, 300, 60)
    assert (policy.d13.max_early_s, policy.d13.max_late_s) == (60, 300)
    assert policy.d13.escalation_step_pct == 10  # 200 × (1 + floor(pct / 10))
    assert (policy.b04.max_early_s, policy.b04.max_late_s) == (60, 300)
    assert policy.art45.min_efficiency == 0.98  # 98 %
    assert (policy.a07.stop_radius_m, policy.a07.max_interpolation_gap_s) == (40, 60)
    assert policy.d19.max_silence_s == 600


def test_shipped_policy_speeding_rules_are_design_defaults(policy):
    assert policy.c01.default_limit_kmh == 60
    assert policy.c01.tolerance_kmh == 7  # fires above 60 + 7 = 67 km/h
    assert policy.c01.min_consecutive_pings == 2
    assert policy.c01.min_episode_s == 10
    assert policy.c01.merge_gap_s == 300  # 5 min = 5 * 60 s


def test_shipped_policy_general_settings_are_joao_neiva(policy):
    assert policy.policy.ufir_brl == 1.0641  # R$ per UFIR
    assert policy.policy.timezone == "America/Sao_Paulo"
    assert policy.tz == ZoneInfo("America/Sao_Paulo")
    assert policy.stream.allowed_lateness_s == 600
    assert policy.stream.max_message_bytes == 65536  # a line or Kafka message longer is rejected as too_long
    assert dt.date(2026, 12, 8) in policy.policy.municipal_holidays
    assert policy.version == "jn-2026.1"


def test_unknown_top_level_section_refused_naming_it():
    with pytest.raises(PolicyError, match="unknown field `c02`"):
        parse_policy(edited("[c01]", "[c02]"), "p.toml")


def test_misspelled_key_in_section_refused_naming_it():
    with pytest.raises(PolicyError, match="unknown field `match_windows_s`"):
        parse_policy(edited("match_window_s = 1800", "match_windows_s = 1800"), "p.toml")


def test_missing_key_refused_naming_it():
    with pytest.raises(PolicyError, match="allowed_lateness_s"):
        parse_policy(edited("allowed_lateness_s = 600", ""), "p.toml")


def test_a_policy_older_than_the_message_bound_takes_the_shipped_one():
    # the policy.toml inside an evidence bundle made before stream.max_message_bytes existed
    # must still parse, or `fiscaliza verify` would refuse the bundle
    older = parse_policy(edited("max_message_bytes = 65536\n", ""), "p.toml")
    assert older.stream.max_message_bytes == load_policy().stream.max_message_bytes == 65536


def test_the_headway_bounds_are_swiftlys_and_a_policy_without_them_takes_those():
    # bunched at most 75 % of the scheduled headway, gapped at least 125 % (Swiftly's defaults);
    # the policy.toml inside an evidence bundle made before [headway] existed still parses
    shipped = load_policy().headway
    assert (shipped.bunched_max_ratio, shipped.gapped_min_ratio) == (0.75, 1.25)
    block = TEXT[TEXT.index("[headway]"):]
    older = parse_policy(TEXT.replace(block, block[block.index("gapped_min_ratio = 1.25") + 24:]), "p.toml")
    assert older.headway == shipped


@pytest.mark.parametrize("line,new", [("bunched_max_ratio = 0.75", "bunched_max_ratio = 1.0"),
                                      ("gapped_min_ratio = 1.25", "gapped_min_ratio = 0.9")])
def test_headway_bounds_that_do_not_straddle_the_schedule_are_refused(line, new):
    with pytest.raises(PolicyError, match="headway.bunched_max_ratio must be below 1"):
        parse_policy(edited(line, new), "p.toml")


def test_string_for_number_refused_naming_field():
    with pytest.raises(PolicyError, match=r"trips\.terminal_zone_m"):
        parse_policy(edited("terminal_zone_m = 100", 'terminal_zone_m = "100"'), "p.toml")


def test_fraction_for_integer_refused_naming_field():
    with pytest.raises(PolicyError, match=r"c01\.min_consecutive_pings"):
        parse_policy(edited("min_consecutive_pings = 2", "min_consecutive_pings = 2.5"), "p.toml")


def test_boolean_for_number_refused_naming_field():
    with pytest.raises(PolicyError, match=r"stream\.allowed_lateness_s"):
        parse_policy(edited("allowed_lateness_s = 600", "allowed_lateness_s = true"), "p.toml")


def test_string_holiday_refused_naming_field():
    with pytest.raises(PolicyError, match=r"municipal_holidays"):
        parse_policy(edited("municipal_holidays = [2026-12-08, 2027-12-08]", 'municipal_holidays = ["2026-12-08"]'), "p.toml")


@pytest.mark.parametrize("zone", ["America/Nowhere", "", "../../etc/passwd"])
def test_unknown_timezone_refused_naming_it(zone):
    with pytest.raises(PolicyError, match="unknown timezone"):
        parse_policy(edited('timezone = "America/Sao_Paulo"', f'timezone = "{zone}"'), "p.toml")


@pytest.mark.parametrize("value", ["0", "0.0", "-0.5", "1.0001", "2", "nan", "inf"])
def test_min_coverage_outside_zero_one_refused(value):
    with pytest.raises(PolicyError, match=r"min_coverage must be in \(0, 1\]"):
        parse_policy(edited("min_coverage = 0.80", f"min_coverage = {value}"), "p.toml")


@pytest.mark.parametrize("value, expected", [("1.0", 1.0), ("0.01", 0.01)])
def test_min_coverage_inside_zero_one_accepted(value, expected):
    assert parse_policy(edited("min_coverage = 0.80", f"min_coverage = {value}")).trips.min_coverage == expected


def test_text_that_is_not_toml_refused_as_not_toml():
    with pytest.raises(PolicyError, match="p.toml: not valid TOML"):
        parse_policy('{"trips": {"min_coverage": 0.8}}', "p.toml")


def test_non_utf8_policy_refused_with_policy_error():
    with pytest.raises(PolicyError, match="p.toml"):
        parse_policy(TEXT.encode("utf-8").replace("João".encode("utf-8"), "João".encode("latin-1")), "p.toml")


def test_unreadable_policy_path_refused_naming_path(tmp_path):
    missing = tmp_path / "missing.toml"
    with pytest.raises(PolicyError, match=re.escape(f"cannot read policy {missing}")):
        load_policy(missing)


def test_policy_path_that_is_a_directory_refused(tmp_path):
    with pytest.raises(PolicyError, match="cannot read policy"):
        load_policy(tmp_path)


def test_edited_policy_file_loads_its_values(tmp_path):
    path = tmp_path / "strict.toml"
    path.write_text(edited("max_late_s = 300\nescalation_step_pct", "max_late_s = 120\nescalation_step_pct"),
                    encoding="utf-8")
    policy = load_policy(path)
    assert policy.d13.max_late_s == 120
    assert policy.b04.max_late_s == 300  # only [d13] was edited


@pytest.mark.parametrize("line,new,name", [
    ("terminal_zone_m = 100", "terminal_zone_m = -100", "trips.terminal_zone_m"),
    ("max_silence_s = 600", "max_silence_s = 0", "d19.max_silence_s"),
    ("ufir_brl = 1.0641", "ufir_brl = -1.0", "policy.ufir_brl"),
    ("[trips.terminal_zone_m_by_stop]\n", "[trips.terminal_zone_m_by_stop]\nT1 = 0\n",
     "trips.terminal_zone_m_by_stop.T1"),
])
def test_threshold_not_positive_refused_naming_it(line, new, name):
    # a zone of -100 m or a silence of 0 s has no meaning: every number must be > 0
    with pytest.raises(PolicyError, match=re.escape(f"{name} must be positive")):
        parse_policy(edited(line, new))


def test_shipped_policy_catraca_plausibility(policy):
    assert 1_000_000 in policy.d21.counter_moduli and 65_536 in policy.d21.counter_moduli
    assert policy.d21.wrap_margin == 0.01 and policy.d21.max_boardings_per_minute == 60


@pytest.mark.parametrize("line,new,message", [
    ("wrap_margin = 0.01", "wrap_margin = 0.6", "d21.wrap_margin must be in (0, 0.5)"),
    ("counter_moduli = [65536, 100000, 1000000, 10000000, 16777216, 100000000, 4294967296]", "counter_moduli = []",
     "d21.counter_moduli must list register sizes"),
])
def test_catraca_register_sizes_and_margin_are_checked(line, new, message):
    with pytest.raises(PolicyError, match=re.escape(message)):
        parse_policy(edited(line, new))


def test_noise_as_long_as_a_detour_is_refused():
    # 3 fixes off the corridor in a row are a path held (d11.min_consecutive_pings = 3): a
    # policy that called them noise would let trip coverage read past a provable detour
    with pytest.raises(PolicyError, match=re.escape("trips.max_noise_pings must be below d11.min_consecutive_pings")):
        parse_policy(edited("max_noise_pings = 2", "max_noise_pings = 3"))


LAFAIETE = SHIPPED.parent / "conselheiro-lafaiete.toml"


def test_conselheiro_lafaiete_policy_parses_with_its_fine_mapping():
    policy = load_policy(LAFAIETE)
    assert policy.policy.code == "conselheiro-lafaiete"
    assert (policy.policy.municipality, policy.policy.state) == ("Conselheiro Lafaiete", "MG")
    assert policy.tz == ZoneInfo("America/Sao_Paulo")
    assert policy.fines.unit == "Cr$ de 1948"
    assert policy.fines.brl_per_unit == pytest.approx(1518 / 380, abs=1e-4)  # minimum wages 2025 / 1948
    assert policy.policy.ufir_brl == policy.fines.brl_per_unit  # what fine_ufir × ufir_brl consumers read
    assert policy.fines.recidivism_window_days == 365
    # the physical thresholds are João Neiva's: the same telemetry, the same facts
    shipped = load_policy()
    for section in ("trips", "stream", "d11", "d13", "b04", "a07", "d19", "d21", "c01"):
        assert getattr(policy, section) == getattr(shipped, section), section


def test_joao_neiva_policy_has_no_fine_mapping():
    assert load_policy().fines is None


def test_a_policy_needs_exactly_one_value_of_the_fine_unit():
    lafaiete = LAFAIETE.read_text(encoding="utf-8")
    with pytest.raises(PolicyError, match="exactly one"):
        parse_policy(lafaiete.replace('timezone = "America/Sao_Paulo"\n',
                                      'timezone = "America/Sao_Paulo"\nufir_brl = 1.0641\n', 1))
    with pytest.raises(PolicyError, match="exactly one"):
        parse_policy(edited("ufir_brl = 1.0641\n", ""))


def test_the_optional_detector_sections_parse_and_refuse_thresholds_within_gps_noise():
    import pytest

    from kernel.policy import PolicyError, parse_policy, shipped_policy_path

    text = shipped_policy_path().read_text()
    assert parse_policy(text).turn_back is None and parse_policy(text).unmarked_stop is None
    turn_back = "\n[turn_back]\nmin_reversal_m = {}\nmin_consecutive_pings = 3\nmax_ping_gap_s = 120\n"
    assert parse_policy(text + turn_back.format(200)).turn_back.min_reversal_m == 200
    # corridor 50 m: a fix 100 m behind within it may be jitter on either side
    with pytest.raises(PolicyError, match="turn_back.min_reversal_m must exceed twice trips.corridor_m"):
        parse_policy(text + turn_back.format(100))
    stop = ("\n[unmarked_stop]\nmax_speed_kmh = 3\nmin_stop_distance_m = {}\nmin_consecutive_pings = 3\n"
            "min_duration_s = 20\nmax_ping_gap_s = 60\n")
    assert parse_policy(text + stop.format(80)).unmarked_stop.min_stop_distance_m == 80
    with pytest.raises(PolicyError, match="unmarked_stop.min_stop_distance_m must exceed trips.corridor_m"):
        parse_policy(text + stop.format(50))
