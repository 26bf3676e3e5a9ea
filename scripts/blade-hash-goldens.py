#!/usr/bin/python3
"""Golden values for clade's BLADE column hashing and pandas-compatible CSV reading.

Run with the Python that has BLADE's pinned pandas (1.5.3):

    /usr/bin/python3 scripts/blade-hash-goldens.py

It reads every tests/fixtures/blade/hash/*.csv with plain pd.read_csv (as BLADE loads data.csv),
hashes each column with a Python implementation of BLADE's algorithm written from
docs/blade-spec.md section 1 (value pass in place, then the categorical pass on the prepared
frame), and writes tests/fixtures/blade/hash/goldens.json with:

  - csv: per file, each column's name, dtype, value hash and categorical hash (null where BLADE
    itself raises, i.e. the categorical pass of an empty frame);
  - frames: frames built directly in Python (datetime64, category and object-of-int columns, as
    the pandas runtime would hand them to clade), with the column data in clade's Frame form;
  - datetimes: single strings (a hand-picked corpus and a seeded random "fuzz" set of date-like
    strings) and whole columns through pd.to_datetime(errors="raise"), each [input, result]: the
    list of formatted values (null for NaT) or null where pandas raises;
  - floats: [repr(x), repr(round(x, 5))] pairs;
  - now: the time of generation, which time-only strings ("10:30") and two-digit years depend on.

Regenerate after adding a fixture CSV or a corpus string, then run
`npx vitest run tests/env/blade` to compare clade against the new goldens.
"""

import hashlib
import json
import math
import random
import sys
import warnings
from datetime import datetime
from pathlib import Path

import numpy as np
import pandas as pd
from pandas.api.types import (
    is_datetime64_any_dtype,
    is_float_dtype,
    is_integer_dtype,
    is_numeric_dtype,
    is_object_dtype,
)

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "blade" / "hash"
SEPARATOR = ":"
DECIMALS = 5
UNIQUE_RATIO = 0.5
DATE_FORMAT = "%Y-%m-%d %H:%M:%S"
FLOAT_SAMPLES = 2000
FUZZ_STRINGS = 2000
SAFE_INTEGER = 2**53 - 1


# --- BLADE's algorithm, restated from docs/blade-spec.md section 1 -------------------------


def try_dates(series):
    """pd.to_datetime(errors="raise") with warnings silenced; None when pandas rejects it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return pd.to_datetime(series, errors="raise")
        except (ValueError, TypeError):
            return None


def value_texts(series):
    """Section 1.2: the cell texts of one column, by dtype."""
    dtype = series.dtype
    if is_numeric_dtype(dtype):
        series = series.fillna(0)
    elif is_object_dtype(dtype):
        series = series.fillna("")
    if is_integer_dtype(dtype):
        return series.astype(str)
    if is_float_dtype(dtype):
        return series.apply(lambda x: round(x, DECIMALS)).fillna(0).astype(str)
    if dtype == bool:
        return series.astype(str)
    if dtype == object:
        parsed = try_dates(series)
        if parsed is None:
            return series.astype(str)
        series = parsed
        dtype = parsed.dtype
    if is_datetime64_any_dtype(dtype):
        return series.dt.strftime(DATE_FORMAT)
    return series.astype(str)


def categorical_texts(series):
    """Section 1.5, applied to an already prepared column."""
    dtype = series.dtype
    if (is_object_dtype(dtype) or is_integer_dtype(dtype)) and series.nunique() / len(series) < UNIQUE_RATIO:
        return pd.Series(pd.factorize(series)[0])
    return value_texts(series)


def digest(texts):
    return hashlib.sha256(SEPARATOR.join(texts.astype(str)).encode("utf-8")).hexdigest()


def hash_frame(df):
    frame = df.copy(deep=True)
    values = {}
    for name in frame.columns:
        frame[name] = value_texts(frame[name])
        values[name] = digest(frame[name])
    out = []
    for name in frame.columns:
        try:
            categorical = digest(categorical_texts(frame[name]))
        except ZeroDivisionError:  # BLADE raises here on an empty frame
            categorical = None
        out.append({"name": name, "value": values[name], "categorical": categorical})
    return out


def dtype_name(dtype):
    if dtype == bool:
        return "bool"
    if is_integer_dtype(dtype):
        return "int64"
    if is_float_dtype(dtype):
        return "float64"
    if is_datetime64_any_dtype(dtype):
        return "datetime64"
    if is_object_dtype(dtype):
        return "object"
    return "other"


# --- goldens ---------------------------------------------------------------------------------


def csv_goldens():
    out = {}
    for path in sorted(FIXTURES.glob("*.csv")):
        df = pd.read_csv(path)
        hashes = hash_frame(df)
        for entry, name in zip(hashes, df.columns):
            entry["dtype"] = dtype_name(df[name].dtype)
            entry["pandasDtype"] = str(df[name].dtype)
        out[path.name] = {"rowCount": len(df), "columns": hashes}
    return out


def frame_column(series, dtype):
    """A column in clade's Frame form, as the pandas runtime would report it."""
    column = {"name": series.name, "dtype": dtype}
    if dtype == "datetime64":
        column["values"] = [None if pd.isna(v) else v.strftime(DATE_FORMAT) for v in series]
    elif dtype == "object":
        column["values"] = [None if v is None or (isinstance(v, float) and math.isnan(v)) else str(v) for v in series]
        parsed = try_dates(series.fillna(""))
        if parsed is None or not is_datetime64_any_dtype(parsed.dtype):
            column["datetimeParse"] = None
        else:
            column["datetimeParse"] = [None if pd.isna(v) else v.strftime(DATE_FORMAT) for v in parsed]
    else:
        column["values"] = [str(v) for v in series.astype(str)]
    return column


def python_frames():
    frames = {
        "datetime64": pd.DataFrame(
            {
                "when": pd.to_datetime(["2020-01-01 10:00", None, "1999-12-31 23:59:59", "2020-01-01 10:00"]),
                "label": ["a", "b", "a", "b"],
            }
        ),
        "category_and_object_ints": pd.DataFrame(
            {
                "cat": pd.Categorical(["lo", "hi", None, "lo"]),
                "object_ints": pd.Series([1, 2, 3, 4], dtype=object),
            }
        ),
    }
    out = {}
    for key, df in frames.items():
        columns = [frame_column(df[name], dtype_name(df[name].dtype)) for name in df.columns]
        out[key] = {"rowCount": len(df), "columns": columns, "hashes": hash_frame(df)}
    return out


DATETIME_STRINGS = [
    "2020-01-05", "2020-1-5", "2020/01/05", "2020.01.05", "20200105", "2020-01", "2020", "2000.5",
    "2020-01-05T10:30", "2020-01-05 10:30:15", "2020-01-05 10:30:15.250", "2020-01-05T10:30:15Z",
    "2020-01-05T10:30:15+01:00", "2020-01-05 10", "  2020-01-05", "2020-01-05  ", "2020-13-01",
    "2020-02-30", "04/06/1989", "4/6/1989", "04/6/1989", "4/06/1989", "13/01/2000", "13/13/2000",
    "00/00/2000", "02/30/2000", "06.04.1989", "06-04-1989", "06 04 1989", "03/2001", "03-2001",
    "03.2001", "13/2001", "March 5, 2001", "5 March 2001", "Mar 5 2001", "March 2001", "Mar-2001",
    "MAR 2001", "5 March", "March", "Monday", "Monday 2020", "Jan 2, 2002 10:30 PM", "2 Jan 2002",
    "January 1st, 2000", "1st of January 2000", "2001-Mar-05", "05-Mar-2001", "5-Mar-01",
    "Tuesday, March 6, 2001", "1999", "999", "12", "0", "00", "012", "1000", "2262", "2263", "1677",
    "1678", "1e5", "12.5", "1234.5", "2001.0", "-5", "abc", "a", "t", "T", "x", "NaT", "nan", "NaN",
    "", "2005Q1", "1Q05", "2Q2005", "2005-Q3", "05Q1", "2005Q5", "01/05/09", "1/2/3", "10:30",
    "9:05", "10:30:15 PM", "10 PM", "10PM", "13 PM", "noon", "10h30", "10h30m15s", "5 hours",
    "2020-01-05 10:00 UTC", "2020-01-05 10:00 GMT", "2020-01-05 10:00 EST", "2020-01-05 10:00 +0530",
    "2020-01-05 10:00 -05:00", "2020-01-05 10:00 XYZ", "Sat Jan 04 2020", "19990101T2359",
    "199901012359", "19990101235959", "990105", "123456", "20.01.2020", "2020.13.01", "1.2.2020",
    "01.02.20", "Sept 3 2003", "3rd March 2003", "the 3rd", "on 5 March 2001", "5 March 2001 at 10:00",
    "2001, March 5", "5 of March", "1,5", "10,5", "1/2", "12/25", "1999-12", "99-12-01", "true",
    "True", "today 2020", "now 2020", "1_999", "02139", "0.5", "05/06/2020 10:00",
]

DATETIME_COLUMNS = [
    ["2020-01-05", "", "2020-02-01"],
    ["2020-01-05", "abc"],
    ["2020-01-05T10:00:00+01:00", "2020-01-06T10:00:00+02:00", ""],
    ["2020-01-05T10:00:00+01:00", "2020-01-06T10:00:00"],
    ["2020-01-05T10:00:00Z", "2020-01-05 10:00 UTC"],
    ["2020-01-05 10:00 +0100", "2020-01-06 09:00 +0100"],
    ["", ""],
    ["NaT", "2020-01-05"],
    ["1999", "2004", "2010"],
    ["1999", "5"],
    ["True", "False"],
    ["0.33333", "1.5"],
    ["2020-01-05 10:00:00.5+01:00", "2020-01-06 10:00:00-05:30"],
]


def datetime_result(texts):
    parsed = try_dates(pd.Series(texts, dtype=object))
    if parsed is None:
        return None
    if is_datetime64_any_dtype(parsed.dtype):
        return [None if pd.isna(v) else v.strftime(DATE_FORMAT) for v in parsed]
    return [str(v) for v in parsed.astype(str)]


MONTH_WORDS = ["Jan", "January", "Feb", "mar", "MARCH", "Apr", "May", "June", "Jul", "Aug", "Sep", "Sept",
               "Oct", "Nov", "Dec", "December"]
WEEKDAY_WORDS = ["Mon", "Monday", "tue", "Wed", "Thursday", "Fri", "Sat", "Sunday"]
TZ_SUFFIXES = ["", "", "", " UTC", "Z", " GMT", " EST", "+01:00", " -0500", " +3", "+05:30", " XYZ", " z"]


def fuzz_strings(count):
    """Random date-like strings built from the shapes people write (seeded, so stable)."""
    rng = random.Random(11)

    def num(lo, hi):
        v = rng.randint(lo, hi)
        return f"{v:02d}" if rng.random() < 0.5 else str(v)

    def year():
        return rng.choice([str(rng.randint(1600, 2300)), f"{rng.randint(0, 99):02d}", str(rng.randint(0, 99))])

    def date():
        sep = rng.choice(["-", "/", ".", " ", ""])
        d, m, y = num(0, 33), num(0, 13), year()
        shape = rng.randrange(8)
        if shape == 0:
            return f"{m}{sep}{d}{sep}{y}"
        if shape == 1:
            return f"{y}{sep}{m}{sep}{d}"
        if shape == 2:
            return f"{d}{sep}{m}{sep}{y}"
        if shape == 3:
            return f"{rng.choice(MONTH_WORDS)}{rng.choice([' ', '-', '. ', ''])}{d}{rng.choice([', ', ' ', '-'])}{y}"
        if shape == 4:
            return f"{d}{rng.choice([' ', '-', 'th ', ''])}{rng.choice(MONTH_WORDS)}{rng.choice([' ', '-', ', '])}{y}"
        if shape == 5:
            return f"{rng.choice(WEEKDAY_WORDS)}{rng.choice([', ', ' '])}{rng.choice(MONTH_WORDS)} {d} {y}"
        if shape == 6:
            return f"{m}{sep}{y}"
        if rng.random() < 0.5:
            return f"{y}{rng.choice(['Q', '-Q', 'q'])}{rng.randint(0, 5)}"
        return f"{rng.choice(MONTH_WORDS)} {y}"

    def time():
        h, m, s = num(0, 25), num(0, 61), num(0, 61)
        shape = rng.randrange(6)
        if shape == 0:
            return f"{h}:{m}"
        if shape == 1:
            return f"{h}:{m}:{s}"
        if shape == 2:
            return f"{h}:{m}:{s}.{rng.randint(0, 999999)}"
        if shape == 3:
            return f"{num(0, 13)}{rng.choice([' ', ''])}{rng.choice(['am', 'PM', 'a', 'p'])}"
        if shape == 4:
            return f"{num(0, 13)}:{m} {rng.choice(['AM', 'pm'])}"
        return f"{h}h{m}m" if rng.random() < 0.5 else f"{h}{m}{s}"

    out, seen = [], set()
    while len(out) < count:
        kind = rng.randrange(5)
        if kind == 0:
            text = date()
        elif kind == 1:
            text = date() + rng.choice([" ", "T", " at "]) + time() + rng.choice(TZ_SUFFIXES)
        elif kind == 2:
            text = time() + rng.choice(TZ_SUFFIXES)
        elif kind == 3:
            text = time() + " " + date()
        else:
            text = rng.choice([" ", ""]) + date() + rng.choice([" ", ""])
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out


def float_cases():
    rng = random.Random(14)
    values = [0.015625, 2.675, 1e-7, 1e16, -0.0, 0.0, 1e-5, 1.5e-5, 0.000015, 1.000005, -1.000005,
              0.5, 2.5, 123456.789012345, 1e22, 1.7976931348623157e308, 5e-324, -1e-7, 0.1, 1 / 3,
              2 / 3, 1e15 + 0.3, 12345678901.234567, 0.00001, 0.0001, 1234567890123456.0,
              float("inf"), float("-inf")]
    for _ in range(FLOAT_SAMPLES):
        kind = rng.randrange(4)
        if kind == 0:
            values.append(rng.randrange(-10**8, 10**8) / 64 / 10**rng.randrange(0, 4))
        elif kind == 1:
            values.append(rng.uniform(-1000, 1000))
        elif kind == 2:
            values.append(rng.random() * 10 ** rng.randrange(-12, 20))
        else:
            values.append(round(rng.uniform(-100, 100), rng.randrange(0, 8)))
    return [[repr(x), repr(round(x, DECIMALS))] for x in values]


def main():
    if pd.__version__ != "1.5.3":
        sys.exit(f"pandas 1.5.3 is required (BLADE's pin); this Python has {pd.__version__}")
    now = datetime.now().astimezone()
    goldens = {
        "generatedWith": {"pandas": pd.__version__, "numpy": np.__version__},
        "now": now.isoformat(),
        "csv": csv_goldens(),
        "frames": python_frames(),
        "datetimes": {
            "strings": [[s, datetime_result([s])] for s in DATETIME_STRINGS],
            "columns": [[texts, datetime_result(texts)] for texts in DATETIME_COLUMNS],
            "fuzz": [[s, datetime_result([s])] for s in fuzz_strings(FUZZ_STRINGS)],
        },
        "floats": float_cases(),
    }
    target = FIXTURES / "goldens.json"
    target.write_text(json.dumps(goldens, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
