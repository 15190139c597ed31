"""Business days on the real 2026 and 2027 calendars of João Neiva (ES).

Every expected date is counted by hand in a comment: the day of ciência is excluded, then
each day is listed as counted (n) or skipped (why). Holidays used (from `holidays` 0.109 for
BR/ES, checked against the published calendars):
2026: Tiradentes Tue 21 Apr; Nossa Senhora da Penha (ES, Easter 5 Apr + 8) Mon 13 Apr;
      Zumbi/Consciência Negra (national since 2024) Fri 20 Nov; Véspera de Natal Thu 24 Dec
      (ponto facultativo); Natal Fri 25 Dec; Véspera de Ano-Novo Thu 31 Dec (ponto facultativo);
      municipal holiday of the project policy Tue 8 Dec.
2027: Confraternização Universal Fri 1 Jan; Carnival Mon 8 / Tue 9 Feb and Ash Wednesday
      10 Feb (Easter 28 Mar; pontos facultativos); Sexta-feira Santa Fri 26 Mar; Nossa Senhora
      da Penha Mon 5 Apr (28 Mar + 8).
"""

from __future__ import annotations

import datetime as dt

import pytest

from dockets.calendar import MUNICIPAL_HOLIDAY_NAME, BusinessCalendar

D = dt.date
ANIVERSARIO = (10, 20, "Aniversário do município (data ilustrativa)")


@pytest.fixture(scope="module")
def cal() -> BusinessCalendar:
    return BusinessCalendar.for_municipality("ES", [D(2026, 12, 8)], [ANIVERSARIO])


@pytest.fixture(scope="module")
def cal_no_optional() -> BusinessCalendar:
    return BusinessCalendar.for_municipality("ES", [D(2026, 12, 8)], [ANIVERSARIO], include_optional=False)


# --- what the library gives ---------------------------------------------------------------


def test_state_holiday_nossa_senhora_da_penha_is_eight_days_after_easter(cal):
    # Easter 2026 = 5 Apr -> 13 Apr (Mon); Easter 2027 = 28 Mar -> 5 Apr (Mon)
    assert cal.holiday_name(D(2026, 4, 13)) == "Nossa Senhora da Penha"
    assert cal.holiday_name(D(2027, 4, 5)) == "Nossa Senhora da Penha"
    assert not cal.is_business_day(D(2027, 4, 5))


def test_penha_is_not_a_holiday_outside_espirito_santo():
    assert BusinessCalendar.for_municipality("MG").holiday_name(D(2027, 4, 5)) is None


def test_consciencia_negra_is_a_national_holiday_since_2024(cal):
    assert cal.holiday_name(D(2026, 11, 20)) == "Dia Nacional de Zumbi e da Consciência Negra"
    assert cal.holiday_name(D(2023, 11, 20)) is None  # before Lei 14.759/2023, not in ES


def test_carnival_2027_is_a_non_business_ponto_facultativo_by_default(cal, cal_no_optional):
    assert cal.holiday_name(D(2027, 2, 8)) == "Carnaval"
    assert cal.holiday_name(D(2027, 2, 9)) == "Carnaval"
    assert cal.holiday_name(D(2027, 2, 10)) == "Quarta-feira de Cinzas"
    assert not cal.is_business_day(D(2027, 2, 9))
    # without the pontos facultativos Carnival is an ordinary working day
    assert cal_no_optional.holiday_name(D(2027, 2, 9)) is None
    assert cal_no_optional.is_business_day(D(2027, 2, 9))


def test_corpus_christi_follows_include_optional(cal, cal_no_optional):
    # Corpus Christi 2027 = Easter 28 Mar + 60 days = Thu 27 May
    assert cal.holiday_name(D(2027, 5, 27)) == "Corpus Christi"
    assert cal_no_optional.is_business_day(D(2027, 5, 27))


def test_weekend_and_ordinary_weekday(cal):
    assert not cal.is_business_day(D(2026, 12, 5))  # Saturday
    assert not cal.is_business_day(D(2026, 12, 6))  # Sunday
    assert cal.is_business_day(D(2026, 12, 7))  # Monday
    assert cal.holiday_name(D(2026, 12, 7)) is None


def test_configured_municipal_holidays(cal):
    assert cal.holiday_name(D(2026, 12, 8)) == MUNICIPAL_HOLIDAY_NAME
    assert cal.is_business_day(D(2027, 12, 8))  # a single date, not recurring
    assert cal.holiday_name(D(2026, 10, 20)) == ANIVERSARIO[2]
    assert cal.holiday_name(D(2027, 10, 20)) == ANIVERSARIO[2]


def test_any_year_works_without_a_fixed_range(cal):
    assert cal.holiday_name(D(2100, 12, 25)) == "Natal"
    assert cal.holiday_name(D(2100, 10, 20)) == ANIVERSARIO[2]


def test_holidays_on_the_same_day_are_joined():
    c = BusinessCalendar.for_municipality("ES", [D(2026, 12, 25)])
    assert c.holiday_name(D(2026, 12, 25)) == "Natal; Feriado municipal"


def test_equal_configurations_are_equal_and_hashable():
    a = BusinessCalendar.for_municipality("ES", [D(2026, 12, 8)], [ANIVERSARIO])
    b = BusinessCalendar.for_municipality("ES", (D(2026, 12, 8), D(2026, 12, 8)), (ANIVERSARIO,))
    assert a == b and hash(a) == hash(b)


def test_unknown_state_is_refused():
    with pytest.raises(ValueError, match="Unidade federativa desconhecida"):
        BusinessCalendar.for_municipality("XX")


def test_invalid_recurring_date_is_refused():
    with pytest.raises(ValueError, match="data inválida"):
        BusinessCalendar.for_municipality("ES", recurring_municipal=[(2, 30, "Impossível")])


def test_recurring_29_february_only_in_leap_years():
    # (2028-02-29 is also Carnival Tuesday, hence without the pontos facultativos)
    c = BusinessCalendar.for_municipality("ES", recurring_municipal=[(2, 29, "Bissexto")], include_optional=False)
    assert c.holiday_name(D(2028, 2, 29)) == "Bissexto"
    assert c.holiday_name(D(2027, 2, 28)) is None
    assert c.holiday_name(D(2027, 3, 1)) is None


# --- add_business_days --------------------------------------------------------------------


def test_ciencia_on_friday_one_business_day_is_monday(cal):
    # ciência Fri 2026-12-04 (excluded); Sat 5, Sun 6 skipped; Mon 7 = day 1
    assert cal.add_business_days(D(2026, 12, 4), 1) == D(2026, 12, 7)


def test_zero_days_is_the_start_and_negative_is_refused(cal):
    assert cal.add_business_days(D(2026, 12, 4), 0) == D(2026, 12, 4)
    with pytest.raises(ValueError):
        cal.add_business_days(D(2026, 12, 4), -1)


def test_one_business_day_across_carnival_2027(cal, cal_no_optional):
    # ciência Fri 2027-02-05 (excluded); Sat 6, Sun 7 skipped; Mon 8 Carnaval, Tue 9 Carnaval,
    # Wed 10 Cinzas skipped; Thu 11 = day 1
    assert cal.add_business_days(D(2027, 2, 5), 1) == D(2027, 2, 11)
    # without pontos facultativos: Sat 6, Sun 7 skipped; Mon 8 = day 1
    assert cal_no_optional.add_business_days(D(2027, 2, 5), 1) == D(2027, 2, 8)


def test_ten_business_days_across_carnival_2027(cal):
    # ciência Fri 2027-02-05 (excluded); 6-7 weekend; 8, 9 Carnaval; 10 Cinzas;
    # Thu 11 (1), Fri 12 (2); 13-14 weekend; Mon 15 (3), 16 (4), 17 (5), 18 (6), Fri 19 (7);
    # 20-21 weekend; Mon 22 (8), Tue 23 (9), Wed 24 (10)
    assert cal.add_business_days(D(2027, 2, 5), 10) == D(2027, 2, 24)


def test_ten_business_days_across_good_friday_and_penha_2027(cal):
    # ciência Thu 2027-03-25 (excluded); Fri 26 Sexta-feira Santa; 27-28 weekend;
    # Mon 29 (1), 30 (2), 31 (3), Thu Apr 1 (4), Fri 2 (5); 3-4 weekend; Mon 5 Penha;
    # Tue 6 (6), 7 (7), 8 (8), Fri 9 (9); 10-11 weekend; Mon 12 (10)
    assert cal.add_business_days(D(2027, 3, 25), 10) == D(2027, 4, 12)


def test_one_business_day_across_penha_2026(cal):
    # ciência Fri 2026-04-10 (excluded); 11-12 weekend; Mon 13 Penha; Tue 14 = day 1
    assert cal.add_business_days(D(2026, 4, 10), 1) == D(2026, 4, 14)


def test_five_business_days_across_tiradentes_2026(cal):
    # ciência Fri 2026-04-17 (excluded); 18-19 weekend; Mon 20 (1); Tue 21 Tiradentes;
    # Wed 22 (2), Thu 23 (3), Fri 24 (4); 25-26 weekend; Mon 27 (5)
    assert cal.add_business_days(D(2026, 4, 17), 5) == D(2026, 4, 27)


def test_three_business_days_across_consciencia_negra_2026(cal):
    # ciência Wed 2026-11-18 (excluded); Thu 19 (1); Fri 20 Zumbi/Consciência Negra;
    # 21-22 weekend; Mon 23 (2), Tue 24 (3)
    assert cal.add_business_days(D(2026, 11, 18), 3) == D(2026, 11, 24)


def test_five_business_days_across_christmas_and_new_year(cal, cal_no_optional):
    # ciência Tue 2026-12-22 (excluded); Wed 23 (1); Thu 24 Véspera de Natal; Fri 25 Natal;
    # 26-27 weekend; Mon 28 (2), 29 (3), Wed 30 (4); Thu 31 Véspera de Ano-Novo;
    # Fri 2027-01-01 Confraternização; 2-3 weekend; Mon 4 (5)
    assert cal.add_business_days(D(2026, 12, 22), 5) == D(2027, 1, 4)
    # without pontos facultativos the eves count: Wed 23 (1), Thu 24 (2); Fri 25 Natal;
    # 26-27 weekend; Mon 28 (3), Tue 29 (4), Wed 30 (5)
    assert cal_no_optional.add_business_days(D(2026, 12, 22), 5) == D(2026, 12, 30)


def test_ten_business_days_across_the_municipal_holiday(cal):
    # ciência Fri 2026-12-04 (excluded); 5-6 weekend; Mon 7 (1); Tue 8 feriado municipal;
    # Wed 9 (2), Thu 10 (3), Fri 11 (4); 12-13 weekend; Mon 14 (5), 15 (6), 16 (7), 17 (8),
    # Fri 18 (9); 19-20 weekend; Mon 21 (10)
    assert cal.add_business_days(D(2026, 12, 4), 10) == D(2026, 12, 21)


def test_recurring_municipal_holiday_skipped_every_year(cal):
    # ciência Mon 2026-10-19 (excluded); Tue 20 aniversário; Wed 21 (1)
    assert cal.add_business_days(D(2026, 10, 19), 1) == D(2026, 10, 21)
    # ciência Tue 2027-10-19 (excluded); Wed 20 aniversário; Thu 21 (1)
    assert cal.add_business_days(D(2027, 10, 19), 1) == D(2027, 10, 21)


def test_ciencia_on_a_saturday_counts_from_monday(cal):
    # ciência Sat 2026-12-12 (excluded); Sun 13 skipped; Mon 14 (1), Tue 15 (2)
    assert cal.add_business_days(D(2026, 12, 12), 2) == D(2026, 12, 15)


# --- add_calendar_days --------------------------------------------------------------------


def test_calendar_days_ending_on_a_business_day(cal):
    # start Mon 2026-03-02 (excluded); Mar 3..12 are days 1..10; Thu 12 is a business day
    assert cal.add_calendar_days(D(2026, 3, 2), 10) == D(2026, 3, 12)


def test_calendar_days_ending_on_sunday_move_to_monday(cal):
    # start Thu 2026-12-10 (excluded); Dec 11..20 are days 1..10; Sun 20 -> Mon 21
    assert cal.add_calendar_days(D(2026, 12, 10), 10) == D(2026, 12, 21)


def test_calendar_days_ending_on_christmas_move_past_the_weekend(cal):
    # start Tue 2026-12-15 (excluded); Dec 16..25 are days 1..10; Fri 25 Natal,
    # Sat 26, Sun 27 -> Mon 28
    assert cal.add_calendar_days(D(2026, 12, 15), 10) == D(2026, 12, 28)


def test_calendar_days_ending_in_carnival_move_past_ash_wednesday(cal, cal_no_optional):
    # start Sat 2027-01-30 (excluded); Jan 31..Feb 9 are days 1..10; Tue 9 Carnaval,
    # Wed 10 Cinzas -> Thu 11
    assert cal.add_calendar_days(D(2027, 1, 30), 10) == D(2027, 2, 11)
    # without pontos facultativos Tue 9 is a business day
    assert cal_no_optional.add_calendar_days(D(2027, 1, 30), 10) == D(2027, 2, 9)


# --- business days left ------------------------------------------------------------------


def test_business_days_between_skips_weekend_and_the_municipal_holiday(cal):
    # Wed 2/12 -> Mon 21/12: 3, 4, 7, (8 holiday), 9, 10, 11, 14..18, 21 = 12 business days
    assert cal.business_days_between(D(2026, 12, 2), D(2026, 12, 21)) == 12


def test_business_days_between_same_day_past_and_next(cal):
    assert cal.business_days_between(D(2026, 12, 21), D(2026, 12, 21)) == 0
    assert cal.business_days_between(D(2026, 12, 22), D(2026, 12, 21)) == 0
    assert cal.business_days_between(D(2026, 12, 4), D(2026, 12, 7)) == 1  # Fri -> Mon


@pytest.mark.parametrize("start", [D(2026, 12, 2), D(2026, 12, 5), D(2026, 12, 23), D(2027, 2, 5)])
@pytest.mark.parametrize("n", [0, 1, 5, 10])
def test_business_days_between_inverts_add_business_days(cal, start, n):
    assert cal.business_days_between(start, cal.add_business_days(start, n)) == n
