"""The procedural calendar of a municipality: its business days and the terms its law sets
(João Neiva: Lei 867/1998, arts. 5, 7, 8; each law's `rules.law.Terms`).

A day is a business day (dia útil) when it is Monday to Friday and not a holiday: national
and state holidays come from the `holidays` library (country "BR", the state as its
subdivision), municipal ones from the configuration. Holiday tables are computed per year on
demand, so any year works; nothing is fixed at construction.

Counting follows Brazilian administrative procedure (Lei 9.784/1999, art. 66, applied by
analogy since the municipal code is silent): the day of ciência is excluded and the day of
the deadline is included.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
from collections.abc import Iterable, Mapping
from types import MappingProxyType

import holidays

from rules.law import Law, Term, Terms

MUNICIPAL_HOLIDAY_NAME = "Feriado municipal"
_ONE_DAY = dt.timedelta(days=1)
# a leap year, so that a recurring 29 February is accepted by the validation
_LEAP_YEAR = 2000


@functools.lru_cache(maxsize=None)
def _official_holidays(subdivision: str, include_optional: bool, year: int) -> Mapping[dt.date, str]:
    """National + state holidays of one year, with their pt-BR names (memoized, read-only)."""
    categories = (holidays.PUBLIC, holidays.OPTIONAL) if include_optional else (holidays.PUBLIC,)
    table = holidays.country_holidays(
        "BR", subdiv=subdivision, years=year, categories=categories, language="pt_BR")
    return MappingProxyType(dict(table))


@dataclasses.dataclass(frozen=True)
class BusinessCalendar:
    """The business-day calendar of the Órgão Gerencial.

    `include_optional` (default True) also treats the library's OPTIONAL category for Brazil
    as non-business days. In `holidays` 0.109 that category is the federal pontos
    facultativos: Carnival Monday and Tuesday, Ash Wednesday, Corpus Christi, Dia do
    Servidor Público (28 Oct), Christmas Eve and New Year's Eve. Carnival and Corpus Christi
    are not legal holidays but pontos facultativos on which public offices close, so no act
    can be filed and no deadline should end there. Ash Wednesday and the two eves are
    usually half days (office opens at 14h, or closes at 14h); they are counted as whole
    non-business days because Lei 9.784/1999, art. 66 §1º, moves a deadline falling on a day
    whose office hours are shortened to the next business day. For the operator's deadlines
    (defesa, recurso, pagamento) this only ever gives more time; for the Órgão's own
    notification deadline (art. 5 §3º) it gives the Órgão more time, so a municipality that
    keeps its offices open on those days should pass `include_optional=False` and list the
    days it does close as municipal holidays.

    `municipal_holidays` are single dates (e.g. a decree's holiday); `recurring_municipal`
    are `(month, day, name)` holidays repeated every year (a 29 February one only falls in
    leap years).
    """

    subdivision: str  # the state (UF) whose holidays count: the policy's `state`
    include_optional: bool = True
    municipal_holidays: frozenset[dt.date] = frozenset()
    recurring_municipal: tuple[tuple[int, int, str], ...] = ()
    # the municipality's law, whose terms the deadlines count and whose articles the auto
    # cites (`dockets.config.calendar_for`); None: a calendar of days only, on which no
    # deadline of an auto can be computed
    law: Law | None = None
    # how far back an upheld auto of the same article makes a fine a recidivist's, where the
    # law doubles it without saying (the policy's [fines] recidivism_window_days)
    recidivism_window_days: int | None = None

    def __post_init__(self) -> None:
        # normalized here so that equal configurations compare and hash equal
        object.__setattr__(self, "municipal_holidays", frozenset(self.municipal_holidays))
        recurring = tuple(sorted((int(m), int(d), str(name)) for m, d, name in self.recurring_municipal))
        for month, day, name in recurring:
            try:
                dt.date(_LEAP_YEAR, month, day)
            except ValueError:
                raise ValueError(
                    f"Feriado municipal recorrente com data inválida: {day}/{month} ({name}).") from None
        object.__setattr__(self, "recurring_municipal", recurring)
        try:
            _official_holidays(self.subdivision, self.include_optional, _LEAP_YEAR)
        except NotImplementedError:
            raise ValueError(f"Unidade federativa desconhecida: {self.subdivision!r}.") from None

    @classmethod
    def for_municipality(
        cls,
        subdivision: str,
        municipal_holidays: Iterable[dt.date] = (),
        recurring_municipal: Iterable[tuple[int, int, str]] = (),
        *,
        include_optional: bool = True,
        law: Law | None = None,
        recidivism_window_days: int | None = None,
    ) -> BusinessCalendar:
        """National + `subdivision` (state) holidays plus the municipality's own."""
        return cls(
            subdivision=subdivision,
            include_optional=include_optional,
            municipal_holidays=frozenset(municipal_holidays),
            recurring_municipal=tuple(recurring_municipal),
            law=law,
            recidivism_window_days=recidivism_window_days,
        )

    @property
    def law_terms(self) -> Terms:
        if self.law is None or self.law.terms is None:
            raise ValueError("calendar without the law's terms: build it with dockets.config.calendar_for(policy)")
        return self.law.terms

    def add_term(self, start: dt.date, term: Term) -> dt.date:
        """The last day of `term` counted from `start`, in its own unit."""
        return self.add_business_days(start, term.days) if term.business_days else self.add_calendar_days(start, term.days)

    def holiday_name(self, d: dt.date) -> str | None:
        """The pt-BR name of the holiday (or ponto facultativo) on `d`, `None` if there is none.

        Several holidays on one day are joined with "; ", as the `holidays` library does.
        """
        names = []
        official = _official_holidays(self.subdivision, self.include_optional, d.year).get(d)
        if official:
            names.append(official)
        names.extend(name for month, day, name in self.recurring_municipal if (month, day) == (d.month, d.day))
        if d in self.municipal_holidays:
            names.append(MUNICIPAL_HOLIDAY_NAME)
        return "; ".join(names) or None

    def is_business_day(self, d: dt.date) -> bool:
        """Monday to Friday and not a holiday."""
        return d.weekday() < 5 and self.holiday_name(d) is None

    def next_business_day(self, d: dt.date) -> dt.date:
        """`d` itself if it is a business day, else the first business day after it."""
        while not self.is_business_day(d):
            d += _ONE_DAY
        return d

    def add_business_days(self, start: dt.date, n: int) -> dt.date:
        """The n-th business day after `start` (a deadline of n dias úteis).

        `start` (the day of ciência) is excluded even if it is a business day; counting
        begins on the next business day and day n is the deadline: ciência on a Friday with
        n=1 gives the next Monday when it is a business day. n=0 gives `start`.
        """
        if n < 0:
            raise ValueError(f"Prazo negativo: {n} dias úteis.")
        d = start
        for _ in range(n):
            d = self.next_business_day(d + _ONE_DAY)
        return d

    def business_days_between(self, start: dt.date, end: dt.date) -> int:
        """How many business days fall after `start` up to and including `end` (0 when
        `end` is not after `start`): the inverse of `add_business_days`, so that
        `business_days_between(s, add_business_days(s, n)) == n`. A deadline's remaining
        days ("faltam N dias úteis") as of `start`."""
        count = 0
        d = start + _ONE_DAY
        while d <= end:
            count += self.is_business_day(d)
            d += _ONE_DAY
        return count

    def add_calendar_days(self, start: dt.date, n: int) -> dt.date:
        """The deadline of n (calendar) days counted from `start`.

        `start` is excluded and the n-th day is the deadline; when that day is not a business
        day the deadline moves to the next business day (Lei 9.784/1999, art. 66 §1º, by
        analogy: a deadline never ends on a day the office is closed).
        """
        if n < 0:
            raise ValueError(f"Prazo negativo: {n} dias.")
        return self.next_business_day(start + dt.timedelta(days=n))
