"""`datetime` as training scripts use it: `datetime.now().strftime("%Y%m%d-%H%M%S")` for a run's name, the time an
epoch took as `datetime.now() - start` or `timedelta(seconds=...)`, `date.today()`.

The values are Python's own (datetime, date, timedelta: immutable C objects holding numbers), read through the
attribute rules below; the classes are `BuiltinClass`es whose class functions (`now`, `today`, `fromtimestamp`,
`strptime`, `fromisoformat`) are listed here. Time zones other than naive local time are not here.
"""
from __future__ import annotations

import datetime as _dt

from .objects import Builtin, BuiltinClass, ModuleProxy

MAX_FORMAT_CHARS = 1000  # strftime / strptime formats: each directive expands to a few characters at most
_DATE = ("year", "month", "day", "weekday", "isoweekday", "isoformat", "strftime", "replace", "ctime", "toordinal")
_TIME = ("hour", "minute", "second", "microsecond")
_WRAPPED = ("strftime",)


def strftime_of(interp, value):
    def strftime(fmt):
        if type(fmt) is not str:
            raise TypeError(f"strftime() argument 1 must be str, not {interp.type_name(fmt)}")
        if len(fmt) > MAX_FORMAT_CHARS:
            raise ValueError(f"a strftime format has at most {MAX_FORMAT_CHARS} characters in flowgrad")
        return value.strftime(fmt)
    return strftime


# attribute rules (sandbox/attributes.py): (readable names, methods handed out instead)
ATTRIBUTE_RULES = {
    _dt.datetime: ((*_DATE, *_TIME, "date", "timestamp"), {"strftime": strftime_of}),
    _dt.date: (_DATE, {"strftime": strftime_of}),
    _dt.timedelta: (("days", "seconds", "microseconds", "total_seconds"), {}),
}
REPR_TYPES = (_dt.datetime, _dt.date, _dt.timedelta)  # printed as Python prints them (numbers and fixed words)


def datetime_module(interp) -> ModuleProxy:
    def text(value, what):
        if type(value) is not str:
            raise TypeError(f"{what} argument must be str, not {interp.type_name(value)}")
        if len(value) > MAX_FORMAT_CHARS:
            raise ValueError(f"a {what} text has at most {MAX_FORMAT_CHARS} characters in flowgrad")
        return value

    def naive(tz):
        if tz is not None:
            raise ValueError("time zones are not available in flowgrad's datetime (naive local time only)")

    def now(tz=None):
        naive(tz)
        return _dt.datetime.now()

    def fromtimestamp(t, tz=None):
        naive(tz)
        return _dt.datetime.fromtimestamp(t)

    def strptime(date_string, fmt):
        return _dt.datetime.strptime(text(date_string, "strptime()"), text(fmt, "strptime() format"))

    def functions(**fns):
        return {name: Builtin(name, f, interp) for name, f in fns.items()}

    datetime = BuiltinClass("datetime.datetime", _dt.datetime, _dt.datetime, interp, functions(
        now=now, today=_dt.datetime.today, utcnow=_dt.datetime.utcnow, fromtimestamp=fromtimestamp,
        strptime=strptime, fromisoformat=lambda s: _dt.datetime.fromisoformat(text(s, "fromisoformat()"))))
    date = BuiltinClass("datetime.date", _dt.date, _dt.date, interp, functions(
        today=_dt.date.today, fromtimestamp=_dt.date.fromtimestamp,
        fromisoformat=lambda s: _dt.date.fromisoformat(text(s, "fromisoformat()"))))
    timedelta = BuiltinClass("datetime.timedelta", _dt.timedelta, _dt.timedelta, interp)
    for cls, python in ((datetime, _dt.datetime), (date, _dt.date), (timedelta, _dt.timedelta)):
        cls.attrs.update(min=python.min, max=python.max)
    return ModuleProxy("datetime", {"datetime": datetime, "date": date, "timedelta": timedelta,
                                    "MINYEAR": _dt.MINYEAR, "MAXYEAR": _dt.MAXYEAR})
