/**
 * pandas 1.5.3's `pd.to_datetime(series_of_strings, errors="raise")` — the datetime attempt
 * BLADE's hashing makes on every object column (docs/blade-spec.md §1.4). Without a format,
 * pandas 1.5 parses each string on its own (`tslib.array_to_datetime`):
 *
 *   1. "" and the NaT strings → NaT;
 *   2. its ISO 8601 parser (`np_datetime_strings.c`), also YYYYMMDD, "YYYY", "YYYY.M", ...;
 *   3. "now" / "today";
 *   4. `parsing.pyx: parse_datetime_string`: not date-like (a number below 1000, a single
 *      a/A/m/M/p/P/t/T) → error; "H:MM..." → dateutil with today's date as default;
 *      `_parse_delimited_date` (MM/DD/YYYY, DD/MM/YYYY when the first part is > 12, MM/YYYY);
 *      `_parse_dateabbr_string` ("YYYY", quarters like "2005Q1", "Mar 2005"); finally
 *      dateutil 2.8's parser with default date 0001-01-01 (a port of its non-fuzzy path below).
 *
 * Any string failing makes the whole column "not dates" (null). Dates outside pandas'
 * nanosecond range (1677-09-21 .. 2262-04-11) fail too — which is why a missing year
 * ("5 March" → year 1) is not a date. Verified against real pandas by the datetime corpus in
 * tests/fixtures/blade/hash/goldens.json.
 *
 * Assumptions and gaps (documented, not emulated): the machine's time zone is UTC (dateutil
 * treats names in `time.tzname` as local time); only ASCII digits count as digits (Python's
 * str.isdigit accepts other scripts too); a handful of inputs where pandas raises something other
 * than ValueError/TypeError (an AssertionError inside dateutil) are answered "not dates".
 */

/** pandas' datetime64[ns] range, as (year, month, day, hour, minute, second, microsecond). */
const MIN_TIMESTAMP = [1677, 9, 21, 0, 12, 43, 145225] as const;
const MAX_TIMESTAMP = [2262, 4, 11, 23, 47, 16, 854775] as const;
/** `nattype.pyx: nat_strings`. */
const NAT_STRINGS: ReadonlySet<string> = new Set(["NaT", "nat", "NAT", "nan", "NaN", "NAN"]);
/** `parsing.pyx: _not_datelike_strings`. */
const NOT_DATELIKE: ReadonlySet<string> = new Set(["a", "A", "m", "M", "p", "P", "t", "T"]);
/** Strings that parse as a number below this are not dates (`_does_string_look_like_datetime`). */
const MIN_DATELIKE_NUMBER = 1000;
/** dateutil's two-digit years fall within this many years of the current year. */
const TWO_DIGIT_YEAR_WINDOW = 50;

export interface DatetimeParseOptions {
  /** The current time, for time-only strings ("10:30" takes today's date), "now" and "today". */
  now?: Date;
}

/** A parsed instant as pandas holds it: wall-clock fields plus a UTC offset (null: naive). */
interface Parsed {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  microsecond: number;
  offsetSeconds: number | null;
}

type Outcome = Parsed | "nat" | null;

class NotADate extends Error {}

/**
 * The column as pandas would convert it: each value formatted "%Y-%m-%d %H:%M:%S" (null for NaT),
 * or null when pandas raises (the column is not dates). Values with different UTC offsets (or
 * naive and aware values mixed) make pandas return Python datetime objects instead; their texts
 * are then Python's `str(datetime)` ("2020-01-01 10:00:00+01:00") and "NaT", as BLADE would hash them.
 */
export function parseDatetimeColumn(
  texts: readonly string[],
  options: DatetimeParseOptions = {},
): (string | null)[] | null {
  const now = options.now ?? new Date();
  // Columns repeat values: parse and format each distinct string once.
  const cache = new Map<string, { outcome: Parsed | "nat"; text: string | null }>();
  const out: (string | null)[] = new Array(texts.length);
  const offsets = new Set<number | "naive">();
  for (let i = 0; i < texts.length; i++) {
    const text = texts[i] as string;
    let entry = cache.get(text);
    if (entry === undefined) {
      const outcome = parseOne(text, now);
      if (outcome === null) return null;
      if (outcome !== "nat") offsets.add(outcome.offsetSeconds ?? "naive");
      entry = { outcome, text: outcome === "nat" ? null : formatWallClock(outcome) };
      cache.set(text, entry);
    }
    out[i] = entry.text;
  }
  if (offsets.size <= 1) return out;
  return objectFallback(texts, now);
}

/** `tslib._array_to_datetime_object`: every string through parse_datetime_string, kept as objects. */
function objectFallback(texts: readonly string[], now: Date): string[] | null {
  const out: string[] = [];
  for (const text of texts) {
    if (text.length === 0 || NAT_STRINGS.has(text)) {
      out.push("NaT");
      continue;
    }
    try {
      const p = parseDatetimeString(text, now);
      if (!inBounds(p)) return null;
      out.push(pythonDatetimeStr(p));
    } catch (error) {
      if (error instanceof NotADate) return null;
      throw error;
    }
  }
  return out;
}

/** One value through `array_to_datetime`'s string branch; null = pandas raises. */
function parseOne(text: string, now: Date): Outcome {
  if (text.length === 0 || NAT_STRINGS.has(text)) return "nat";
  const iso = parseIso8601(text);
  if (iso === "error") {
    // A well-formed but impossible ISO value falls through to dateutil; out of range raises.
  } else if (iso !== null) {
    return inBounds(iso) ? iso : null;
  }
  if (text === "now") return fromDate(now, true);
  if (text === "today") return fromDate(now, false);
  try {
    const p = parseDatetimeString(text, now);
    return inBounds(p) ? p : null;
  } catch (error) {
    if (error instanceof NotADate) return null;
    throw error;
  }
}

function fromDate(date: Date, utc: boolean): Parsed {
  return utc
    ? {
        year: date.getUTCFullYear(),
        month: date.getUTCMonth() + 1,
        day: date.getUTCDate(),
        hour: date.getUTCHours(),
        minute: date.getUTCMinutes(),
        second: date.getUTCSeconds(),
        microsecond: date.getUTCMilliseconds() * 1000,
        offsetSeconds: null,
      }
    : {
        year: date.getFullYear(),
        month: date.getMonth() + 1,
        day: date.getDate(),
        hour: date.getHours(),
        minute: date.getMinutes(),
        second: date.getSeconds(),
        microsecond: date.getMilliseconds() * 1000,
        offsetSeconds: null,
      };
}

function inBounds(p: Parsed): boolean {
  const fields = [p.year, p.month, p.day, p.hour, p.minute, p.second, p.microsecond];
  return compareFields(fields, MIN_TIMESTAMP) >= 0 && compareFields(fields, MAX_TIMESTAMP) <= 0;
}

function compareFields(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < a.length; i++) {
    const d = (a[i] as number) - (b[i] as number);
    if (d !== 0) return d;
  }
  return 0;
}

const pad = (n: number, width = 2): string => String(n).padStart(width, "0");

function formatWallClock(p: Parsed): string {
  return `${pad(p.year, 4)}-${pad(p.month)}-${pad(p.day)} ${pad(p.hour)}:${pad(p.minute)}:${pad(p.second)}`;
}

/** Python `str(datetime)`. */
function pythonDatetimeStr(p: Parsed): string {
  let text = formatWallClock(p);
  if (p.microsecond) text += `.${pad(p.microsecond, 6)}`;
  if (p.offsetSeconds !== null) {
    const sign = p.offsetSeconds < 0 ? "-" : "+";
    const total = Math.abs(p.offsetSeconds);
    text += `${sign}${pad(Math.floor(total / 3600))}:${pad(Math.floor((total % 3600) / 60))}`;
    if (total % 60) text += `:${pad(total % 60)}`;
  }
  return text;
}

// ---------------------------------------------------------------------------------------------
// Calendar helpers

function isLeap(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysInMonth(year: number, month: number): number {
  if (month < 1 || month > 12) throw new NotADate("month out of range");
  return month === 2 && isLeap(year) ? 29 : (DAYS_IN_MONTH[month - 1] as number);
}

/** Python's `datetime(...)` validation. */
function makeDatetime(
  year: number,
  month: number,
  day: number,
  hour = 0,
  minute = 0,
  second = 0,
  microsecond = 0,
  offsetSeconds: number | null = null,
): Parsed {
  if (year < 1 || year > 9999) throw new NotADate("year out of range");
  if (day < 1 || day > daysInMonth(year, month)) throw new NotADate("day out of range");
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) {
    throw new NotADate("time out of range");
  }
  if (microsecond < 0 || microsecond > 999999) throw new NotADate("microsecond out of range");
  return { year, month, day, hour, minute, second, microsecond, offsetSeconds };
}

/** Days from 1970-01-01 in the proleptic Gregorian calendar (H. Hinnant's days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

function civilFromDays(days: number): [number, number, number] {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return [yoe + era * 400 + (month <= 2 ? 1 : 0), month, day];
}

/** Monday = 0, as Python's `date.weekday()` (1970-01-01 was a Thursday). */
function weekdayOf(year: number, month: number, day: number): number {
  return (((daysFromCivil(year, month, day) + 3) % 7) + 7) % 7;
}

// ---------------------------------------------------------------------------------------------
// pandas' ISO 8601 parser (np_datetime_strings.c: parse_iso_8601_datetime, pandas 1.5)

const YMD_SEPARATORS = new Set(["-", ".", "/", "\\", " "]);

const isDigitChar = (ch: string | undefined): boolean => ch !== undefined && ch >= "0" && ch <= "9";
const isCSpace = (ch: string | undefined): boolean =>
  ch === " " || ch === "\t" || ch === "\n" || ch === "\v" || ch === "\f" || ch === "\r";

/** null: not ISO (fall through to dateutil); "error": a field out of range (also falls through). */
function parseIso8601(s: string): Parsed | null | "error" {
  let i = 0;
  const n = s.length;
  while (i < n && isCSpace(s[i])) i++;
  const negative = s[i] === "-";
  if (negative) i++;
  if (i === n) return null;
  let year = 0;
  if (
    n - i >= 4 &&
    isDigitChar(s[i]) &&
    isDigitChar(s[i + 1]) &&
    isDigitChar(s[i + 2]) &&
    isDigitChar(s[i + 3])
  ) {
    year = Number(s.slice(i, i + 4));
    i += 4;
  }
  if (negative) year = -year;
  if (i === n) return rawDatetime(year, 1, 1);
  let sep = "";
  if (!isDigitChar(s[i])) {
    if (!YMD_SEPARATORS.has(s[i] as string)) return null;
    sep = s[i] as string;
    i++;
    if (i === n || !isDigitChar(s[i])) return null;
  }
  // month
  let month = Number(s[i]);
  i++;
  if (isDigitChar(s[i])) {
    month = month * 10 + Number(s[i]);
    i++;
  } else if (!sep) return null;
  if (month < 1 || month > 12) return "error";
  if (i === n) return sep ? rawDatetime(year, month, 1) : null;
  if (sep) {
    if (s[i] !== sep || i === n - 1) return null;
    i++;
  }
  // day
  if (!isDigitChar(s[i])) return null;
  let day = Number(s[i]);
  i++;
  if (isDigitChar(s[i])) {
    day = day * 10 + Number(s[i]);
    i++;
  } else if (!sep) return null;
  if (day < 1 || day > (month === 2 && isLeap(year) ? 29 : (DAYS_IN_MONTH[month - 1] as number)))
    return "error";
  if (i === n) return rawDatetime(year, month, day);
  if ((s[i] !== "T" && s[i] !== " ") || i === n - 1) return null;
  i++;
  // hour
  if (!isDigitChar(s[i])) return null;
  let hour = Number(s[i]);
  i++;
  let hourTwoDigits = false;
  if (isDigitChar(s[i])) {
    hourTwoDigits = true;
    hour = hour * 10 + Number(s[i]);
    i++;
    if (hour >= 24) return "error";
  }
  const result = rawDatetime(year, month, day);
  result.hour = hour;
  if (i === n) return hourTwoDigits ? result : null;
  let hmsSep = false;
  if (s[i] === ":") {
    hmsSep = true;
    i++;
    if (i === n || !isDigitChar(s[i])) return null;
  } else if (!isDigitChar(s[i])) {
    if (!hourTwoDigits) return null;
    return parseIsoTimezone(s, i, result);
  }
  // minute
  let minute = Number(s[i]);
  i++;
  if (isDigitChar(s[i])) {
    minute = minute * 10 + Number(s[i]);
    i++;
    if (minute >= 60) return "error";
  } else if (!hmsSep) return null;
  result.minute = minute;
  if (i === n) return result;
  if (hmsSep && s[i] === ":") {
    i++;
    if (i === n || !isDigitChar(s[i])) return null;
  } else if (!(!hmsSep && isDigitChar(s[i]))) {
    return parseIsoTimezone(s, i, result);
  }
  // second
  let second = Number(s[i]);
  i++;
  if (isDigitChar(s[i])) {
    second = second * 10 + Number(s[i]);
    i++;
    if (second >= 60) return "error";
  } else if (!hmsSep) return null;
  result.second = second;
  if (s[i] === ".") {
    i++;
    let digits = "";
    while (isDigitChar(s[i])) {
      digits += s[i];
      i++;
    }
    result.microsecond = Number(digits.slice(0, 6).padEnd(6, "0"));
  }
  return parseIsoTimezone(s, i, result);
}

function rawDatetime(year: number, month: number, day: number): Parsed {
  return { year, month, day, hour: 0, minute: 0, second: 0, microsecond: 0, offsetSeconds: null };
}

function parseIsoTimezone(s: string, start: number, result: Parsed): Parsed | null | "error" {
  let i = start;
  const n = s.length;
  while (i < n && isCSpace(s[i])) i++;
  if (i === n) return result;
  if (s[i] === "Z") {
    result.offsetSeconds = 0;
    i++;
  } else if (s[i] === "-" || s[i] === "+") {
    const sign = s[i] === "-" ? -1 : 1;
    i++;
    let hours: number;
    if (isDigitChar(s[i]) && isDigitChar(s[i + 1])) {
      hours = Number(s.slice(i, i + 2));
      i += 2;
      if (hours >= 24) return "error";
    } else if (isDigitChar(s[i])) {
      hours = Number(s[i]);
      i++;
    } else return null;
    let minutes = 0;
    if (i < n) {
      if (s[i] === ":") i++;
      if (isDigitChar(s[i]) && isDigitChar(s[i + 1])) {
        minutes = Number(s.slice(i, i + 2));
        i += 2;
        if (minutes >= 60) return "error";
      } else if (isDigitChar(s[i])) {
        minutes = Number(s[i]);
        i++;
      } else return null;
    }
    result.offsetSeconds = sign * (hours * 3600 + minutes * 60);
  }
  while (i < n && isCSpace(s[i])) i++;
  return i === n ? result : null;
}

// ---------------------------------------------------------------------------------------------
// parsing.pyx: parse_datetime_string and its helpers

function parseDatetimeString(s: string, now: Date): Parsed {
  if (!looksLikeDatetime(s)) throw new NotADate("not likely a datetime");
  if (looksLikeTime(s)) {
    const today = fromDate(now, false);
    return dateutilParse(s, { ...today, hour: 0, minute: 0, second: 0, microsecond: 0 }, now);
  }
  const delimited = parseDelimitedDate(s);
  if (delimited) return delimited;
  if (s === "now") return fromDate(now, false);
  if (s === "today") return fromDate(now, false);
  const abbreviated = parseDateAbbreviation(s);
  if (abbreviated) return abbreviated;
  return dateutilParse(s, rawDatetime(1, 1, 1), now);
}

/** `_does_string_look_like_datetime`. */
function looksLikeDatetime(s: string): boolean {
  if (s.length === 0) return true;
  if (s[0] === "0") return true;
  if (NOT_DATELIKE.has(s)) return false;
  const value = xstrtodWhole(s);
  return value === null ? true : value >= MIN_DATELIKE_NUMBER;
}

/** pandas' legacy xstrtod over the whole string (spaces allowed around); null if it fails. */
function xstrtodWhole(s: string): number | null {
  let i = 0;
  const n = s.length;
  while (i < n && isCSpace(s[i])) i++;
  const start = i;
  if (s[i] === "+" || s[i] === "-") i++;
  let digits = 0;
  while (isDigitChar(s[i])) {
    i++;
    digits++;
  }
  if (s[i] === ".") {
    i++;
    while (isDigitChar(s[i])) {
      i++;
      digits++;
    }
  }
  if (digits === 0) return null;
  let end = i;
  if (s[i] === "e" || s[i] === "E") {
    let j = i + 1;
    if (s[j] === "+" || s[j] === "-") j++;
    const expStart = j;
    while (isDigitChar(s[j])) j++;
    if (j > expStart) end = j;
    else if (s[i + 1] === "+" || s[i + 1] === "-") end = i + 1; // xstrtod consumes "e+" then backs up one
  }
  let k = end;
  while (k < n && isCSpace(s[k])) k++;
  if (k !== n) return null;
  const value = Number(s.slice(start, end).replace(/[eE][+-]?$/, ""));
  return Number.isFinite(value) ? value : null;
}

/** `does_string_look_like_time`: "H:MM" or "HH:MM" at the start, valid hour and minute. */
function looksLikeTime(s: string): boolean {
  if (s.length < 4) return false;
  const digit = (ch: string | undefined): number => (isDigitChar(ch) ? Number(ch) : -100);
  let hour = -1;
  let minute = -1;
  if (s[1] === ":") {
    hour = isDigitChar(s[0]) ? Number(s[0]) : -1;
    minute = digit(s[2]) * 10 + digit(s[3]);
  } else if (s[2] === ":") {
    hour = digit(s[0]) * 10 + digit(s[1]);
    minute = digit(s[3]) * 10 + digit(s[4]);
  }
  return hour >= 0 && hour <= 23 && minute >= 0 && minute <= 59;
}

const DELIMITERS = new Set([" ", "/", "-", "."]);

/**
 * `_parse_delimited_date` (dayfirst=False): MM?DD?YYYY with 1- or 2-digit parts, swapped to
 * DD?MM?YYYY when the first part is > 12, and MM?YYYY (not with "."). Impossible combinations
 * (both parts > 12, or 0) raise, which fails the whole column.
 */
function parseDelimitedDate(s: string): Parsed | null {
  const n = s.length;
  const isDelim = (i: number): boolean => DELIMITERS.has(s[i] as string);
  const num = (from: number, len: number): number => {
    const part = s.slice(from, from + len);
    return /^[0-9]+$/.test(part) && part.length === len ? Number(part) : -1;
  };
  let month: number;
  let day = 1;
  let year: number;
  let canSwap = true;
  if (n === 10 && isDelim(2) && isDelim(5)) {
    month = num(0, 2);
    day = num(3, 2);
    year = num(6, 4);
  } else if (n === 9 && isDelim(1) && isDelim(4)) {
    month = num(0, 1);
    day = num(2, 2);
    year = num(5, 4);
  } else if (n === 9 && isDelim(2) && isDelim(4)) {
    month = num(0, 2);
    day = num(3, 1);
    year = num(5, 4);
  } else if (n === 8 && isDelim(1) && isDelim(3)) {
    month = num(0, 1);
    day = num(2, 1);
    year = num(4, 4);
  } else if (n === 7 && isDelim(2)) {
    if (s[2] === ".") return null;
    month = num(0, 2);
    year = num(3, 4);
    canSwap = false;
  } else return null;
  if (month < 0 || day < 0 || year < 1000) return null;
  if (month >= 1 && month <= 31 && day >= 1 && day <= 31 && (month <= 12 || day <= 12)) {
    if (month > 12 && canSwap) [day, month] = [month, day];
    return makeDatetime(year, month, day);
  }
  throw new NotADate("invalid date specified");
}

const MONTH_ABBREVIATIONS = [
  "JAN",
  "FEB",
  "MAR",
  "APR",
  "MAY",
  "JUN",
  "JUL",
  "AUG",
  "SEP",
  "OCT",
  "NOV",
  "DEC",
];

/** `_parse_dateabbr_string` with freq=None and default 0001-01-01; null where it gives up. */
function parseDateAbbreviation(original: string): Parsed | null {
  const s = original.toUpperCase();
  const n = s.length;
  if (n === 4) {
    const year = pythonInt(s);
    if (year !== null && year >= 1 && year <= 9999) return rawDatetime(year, 1, 1);
  }
  if (n >= 4 && n <= 7) {
    const q = s.indexOf("Q", 1);
    if (q >= 1 && q < 6) {
      const quarterYear = parseQuarter(s, q);
      if (quarterYear !== null) {
        const [quarter, year] = quarterYear;
        if (quarter < 1 || quarter > 4) throw new NotADate("quarter out of range");
        // datetime.replace raising ValueError (a year out of range) only skips this step.
        if (year >= 1 && year <= 9999) return rawDatetime(year, (quarter - 1) * 3 + 1, 1);
      }
    }
  }
  // datetime.strptime with '%Y-%m', '%b %Y', '%b-%Y'.
  let match = /^(\d{4})-(1[0-2]|0[1-9]|[1-9])$/.exec(s);
  if (match && Number(match[1]) >= 1) return rawDatetime(Number(match[1]), Number(match[2]), 1);
  match = /^([A-Z]{3})(?:\s+|-)(\d{4})$/.exec(s);
  if (match) {
    const month = MONTH_ABBREVIATIONS.indexOf(match[1] as string);
    const year = Number(match[2]);
    if (month >= 0 && year >= 1) return rawDatetime(year, month + 1, 1);
  }
  return null;
}

/** The quarter and year of "2Q2005", "2Q05", "2005Q1", "05Q1" (dashes allowed); null = ValueError. */
function parseQuarter(s: string, q: number): [number, number] | null {
  const n = s.length;
  let quarter: number | null;
  let year: number | null;
  if (q === 1) {
    quarter = pythonInt(s[0] as string);
    if (n === 4 || (n === 5 && s[q + 1] === "-")) {
      const yy = pythonInt(s.slice(-2));
      year = yy === null ? null : 2000 + yy;
    } else if (n === 6 || (n === 7 && s[q + 1] === "-")) year = pythonInt(s.slice(-4));
    else return null;
  } else if (q === 2 || q === 3) {
    if (!(n === 4 || (n === 5 && s[q - 1] === "-"))) return null;
    quarter = pythonInt(s.slice(-1));
    const yy = pythonInt(s.slice(0, 2));
    year = yy === null ? null : 2000 + yy;
  } else {
    if (!(n === 6 || (n === 7 && s[q - 1] === "-"))) return null;
    quarter = pythonInt(s.slice(-1));
    year = pythonInt(s.slice(0, 4));
  }
  if (quarter === null || year === null) return null;
  return [quarter, year];
}

/** Python `int(text)` for ASCII input: surrounding whitespace, a sign, digits with single underscores. */
function pythonInt(text: string): number | null {
  const match = /^\s*([+-]?)(\d+(?:_\d+)*)\s*$/.exec(text);
  if (!match) return null;
  const value = Number((match[2] as string).replaceAll("_", ""));
  return match[1] === "-" ? -value : value;
}

// ---------------------------------------------------------------------------------------------
// dateutil 2.8 parser (dateutil/parser/_parser.py), non-fuzzy, default parserinfo

const JUMP = new Set([
  " ",
  ".",
  ",",
  ";",
  "-",
  "/",
  "'",
  "at",
  "on",
  "and",
  "ad",
  "m",
  "t",
  "of",
  "st",
  "nd",
  "rd",
  "th",
]);
const WEEKDAYS: Record<string, number> = {};
for (const [i, names] of [
  ["mon", "monday"],
  ["tue", "tuesday"],
  ["wed", "wednesday"],
  ["thu", "thursday"],
  ["fri", "friday"],
  ["sat", "saturday"],
  ["sun", "sunday"],
].entries()) {
  for (const name of names) WEEKDAYS[name] = i;
}
const MONTHS: Record<string, number> = {};
for (const [i, names] of [
  ["jan", "january"],
  ["feb", "february"],
  ["mar", "march"],
  ["apr", "april"],
  ["may"],
  ["jun", "june"],
  ["jul", "july"],
  ["aug", "august"],
  ["sep", "sept", "september"],
  ["oct", "october"],
  ["nov", "november"],
  ["dec", "december"],
].entries()) {
  for (const name of names) MONTHS[name] = i + 1;
}
const HMS: Record<string, number> = {
  h: 0,
  hour: 0,
  hours: 0,
  m: 1,
  minute: 1,
  minutes: 1,
  s: 2,
  second: 2,
  seconds: 2,
};
const AMPM: Record<string, number> = { am: 0, a: 0, pm: 1, p: 1 };
const UTC_ZONES = ["UTC", "GMT", "Z", "z"];

const lookup = (table: Record<string, number>, token: string): number | undefined =>
  Object.hasOwn(table, token.toLowerCase()) ? table[token.toLowerCase()] : undefined;
const isJump = (token: string): boolean => JUMP.has(token.toLowerCase());
const isAlpha = (ch: string): boolean => /^\p{L}$/u.test(ch);
const isSpace = (ch: string): boolean => /^\s$/u.test(ch);
const isAllDigits = (token: string): boolean => token.length > 0 && /^[0-9]+$/.test(token);

/** `_timelex.split`. */
function timelexSplit(s: string): string[] {
  const chars = [...s].filter((c) => c !== "\0");
  const tokens: string[] = [];
  let pos = 0;
  const pending: string[] = [];
  const next = (): string | undefined => chars[pos++];
  while (pos < chars.length || pending.length) {
    if (pending.length) {
      tokens.push(pending.shift() as string);
      continue;
    }
    let token: string | null = null;
    let state: "" | "a" | "0" | "a." | "0." = "";
    let seenLetters = false;
    while (pos < chars.length) {
      const c = next() as string;
      if (!state) {
        token = c;
        if (isAlpha(c)) state = "a";
        else if (isDigitChar(c)) state = "0";
        else if (isSpace(c)) {
          token = " ";
          break;
        } else break;
      } else if (state === "a") {
        seenLetters = true;
        if (isAlpha(c)) token += c;
        else if (c === ".") {
          token += c;
          state = "a.";
        } else {
          pos--;
          break;
        }
      } else if (state === "0") {
        if (isDigitChar(c)) token += c;
        else if (c === "." || (c === "," && (token as string).length >= 2)) {
          token += c;
          state = "0.";
        } else {
          pos--;
          break;
        }
      } else if (state === "a.") {
        seenLetters = true;
        if (c === "." || isAlpha(c)) token += c;
        else if (isDigitChar(c) && (token as string).endsWith(".")) {
          token += c;
          state = "0.";
        } else {
          pos--;
          break;
        }
      } else {
        if (c === "." || isDigitChar(c)) token += c;
        else if (isAlpha(c) && (token as string).endsWith(".")) {
          token += c;
          state = "a.";
        } else {
          pos--;
          break;
        }
      }
    }
    if (token === null) break;
    if (
      (state === "a." || state === "0.") &&
      (seenLetters ||
        (token.match(/\./g)?.length ?? 0) > 1 ||
        token.endsWith(".") ||
        token.endsWith(","))
    ) {
      const parts = token.split(/([.,])/);
      token = parts[0] as string;
      for (const part of parts.slice(1)) if (part) pending.push(part);
    }
    if (state === "0." && !token.includes(".")) token = token.replaceAll(",", ".");
    tokens.push(token);
  }
  return tokens;
}

/** An exact decimal token ("12", "12.5"): its text and value. dateutil uses Decimal here. */
interface DecimalToken {
  text: string;
  value: number;
}

function toDecimal(text: string): DecimalToken {
  if (!/^(\d+\.?\d*|\.\d+)$/.test(text)) throw new NotADate("unknown numeric token");
  return { text, value: Number(text) };
}

/** int(60 * (value % 1)) computed exactly from the decimal text. */
function sixtiethsOfFraction(text: string): number {
  const dot = text.indexOf(".");
  if (dot < 0) return 0;
  const fraction = text.slice(dot + 1);
  if (!/[1-9]/.test(fraction)) return 0;
  return Number((60n * BigInt(fraction)) / 10n ** BigInt(fraction.length));
}

const hasFraction = (text: string): boolean => {
  const dot = text.indexOf(".");
  return dot >= 0 && /[1-9]/.test(text.slice(dot + 1));
};

/** Python's float() on a timelex token: does the token count as a number? */
function isPythonFloat(token: string): boolean {
  return /^(\d+\.?\d*|\.\d+)$/.test(token) || /^(inf|infinity|nan)$/i.test(token);
}

class Ymd {
  values: number[] = [];
  centurySpecified = false;
  ystridx: number | null = null;
  mstridx: number | null = null;
  dstridx: number | null = null;

  couldBeDay(value: number): boolean {
    if (this.dstridx !== null) return false;
    if (this.mstridx === null) return value >= 1 && value <= 31;
    const month = this.values[this.mstridx] as number;
    const year = this.ystridx === null ? 2000 : (this.values[this.ystridx] as number);
    return value >= 1 && value <= daysInMonth(year, month);
  }

  /** `_ymd.append`: strings of > 2 digits and numbers > 100 are years. */
  append(val: string | number, label: "Y" | "M" | "D" | null = null): void {
    let numeric: number;
    if (typeof val === "string") {
      if (isAllDigits(val) && val.length > 2) {
        this.centurySpecified = true;
        if (label !== null && label !== "Y") throw new NotADate("label");
        label = "Y";
      }
      const parsed = pythonInt(val);
      if (parsed === null) throw new NotADate("not an integer");
      numeric = parsed;
    } else {
      if (val > 100) {
        this.centurySpecified = true;
        if (label !== null && label !== "Y") throw new NotADate("label");
        label = "Y";
      }
      numeric = Math.trunc(val);
    }
    this.values.push(numeric);
    const index = this.values.length - 1;
    if (label === "M") {
      if (this.mstridx !== null) throw new NotADate("month already set");
      this.mstridx = index;
    } else if (label === "D") {
      if (this.dstridx !== null) throw new NotADate("day already set");
      this.dstridx = index;
    } else if (label === "Y") {
      if (this.ystridx !== null) throw new NotADate("year already set");
      this.ystridx = index;
    }
  }

  resolve(): [number | null, number | null, number | null] {
    const v = this.values;
    const strids: Record<string, number> = {};
    if (this.ystridx !== null) strids.y = this.ystridx;
    if (this.mstridx !== null) strids.m = this.mstridx;
    if (this.dstridx !== null) strids.d = this.dstridx;
    const known = Object.keys(strids).length;
    if ((v.length === known && known > 0) || (v.length === 3 && known === 2)) {
      if (v.length === 3 && known === 2) {
        const used = new Set(Object.values(strids));
        const missing = [0, 1, 2].find((x) => !used.has(x)) as number;
        const key = ["y", "m", "d"].find((k) => !(k in strids)) as string;
        strids[key] = missing;
      }
      if (v.length !== Object.keys(strids).length) throw new NotADate("ambiguous");
      const get = (k: string): number | null =>
        k in strids ? (v[strids[k] as number] as number) : null;
      return [get("y"), get("m"), get("d")];
    }
    const m = this.mstridx;
    if (v.length > 3) throw new NotADate("more than three YMD values");
    let year: number | null = null;
    let month: number | null = null;
    let day: number | null = null;
    const [a, b, c] = v as [number, number, number];
    if (v.length === 1 || (m !== null && v.length === 2)) {
      let other: number;
      if (m !== null) {
        month = v[m] as number;
        other = v.at(m - 1) as number;
      } else other = a;
      if (v.length > 1 || m === null) {
        if (other > 31) year = other;
        else day = other;
      }
    } else if (v.length === 2) {
      if (a > 31) [year, month] = [a, b];
      else if (b > 31) [month, year] = [a, b];
      else [month, day] = [a, b];
    } else if (v.length === 3) {
      if (m === 0) {
        if (b > 31) [month, year, day] = [a, b, c];
        else [month, day, year] = [a, b, c];
      } else if (m === 1) {
        if (a > 31) [year, month, day] = [a, b, c];
        else [day, month, year] = [a, b, c];
      } else if (m === 2) {
        if (b > 31) [day, year, month] = [a, b, c];
        else [year, day, month] = [a, b, c];
      } else if (a > 31 || this.ystridx === 0) [year, month, day] = [a, b, c];
      else if (a > 12) [day, month, year] = [a, b, c];
      else [month, day, year] = [a, b, c];
    }
    return [year, month, day];
  }
}

interface DateutilResult {
  year: number | null;
  month: number | null;
  day: number | null;
  weekday: number | null;
  hour: number | null;
  minute: number | null;
  second: number | null;
  microsecond: number | null;
  tzname: string | null;
  tzoffset: number | null;
  ampm: number | null;
}

/** dateutil `parser.parse(s, default=...)` followed by pandas' reading of its result. */
function dateutilParse(s: string, defaults: Parsed, now: Date): Parsed {
  const res = dateutilFields(s, now);
  const set = Object.values(res).filter((x) => x !== null).length;
  if (set === 0) throw new NotADate("string does not contain a date");
  // _build_naive
  const year = res.year ?? defaults.year;
  const month = res.month ?? defaults.month;
  let day = res.day ?? defaults.day;
  if (res.day === null) day = Math.min(day, daysInMonth(year, month));
  let parsed = makeDatetime(
    year,
    month,
    day,
    res.hour ?? defaults.hour,
    res.minute ?? defaults.minute,
    res.second ?? defaults.second,
    res.microsecond ?? defaults.microsecond,
  );
  if (res.weekday !== null && !res.day) {
    const shift = (res.weekday - weekdayOf(parsed.year, parsed.month, parsed.day) + 7) % 7;
    parsed = addDays(parsed, shift);
  }
  // _build_tzaware, on a machine whose local zone is UTC.
  if (res.tzname !== null && ["UTC"].includes(res.tzname)) parsed.offsetSeconds = 0;
  else if (res.tzoffset === 0) parsed.offsetSeconds = 0;
  else if (res.tzoffset) parsed.offsetSeconds = res.tzoffset;
  return parsed;
}

function addDays(p: Parsed, days: number): Parsed {
  if (days === 0) return p;
  const [year, month, day] = civilFromDays(daysFromCivil(p.year, p.month, p.day) + days);
  return makeDatetime(year, month, day, p.hour, p.minute, p.second, p.microsecond);
}

/** `parser._parse` (fuzzy=False) plus `parserinfo.validate`; throws NotADate where it returns None. */
function dateutilFields(s: string, now: Date): DateutilResult {
  const res: DateutilResult = {
    year: null,
    month: null,
    day: null,
    weekday: null,
    hour: null,
    minute: null,
    second: null,
    microsecond: null,
    tzname: null,
    tzoffset: null,
    ampm: null,
  };
  const l = timelexSplit(s);
  const ymd = new Ymd();
  const at = (i: number): string => {
    const token = l[i];
    if (token === undefined) throw new NotADate("index out of range");
    return token;
  };
  const lenL = l.length;
  let i = 0;
  while (i < lenL) {
    const token = at(i);
    if (isPythonFloat(token)) {
      i = parseNumericToken(l, i, ymd, res);
    } else if (lookup(WEEKDAYS, token) !== undefined) {
      res.weekday = lookup(WEEKDAYS, token) as number;
    } else if (lookup(MONTHS, token) !== undefined) {
      ymd.append(lookup(MONTHS, token) as number, "M");
      if (i + 1 < lenL) {
        if (at(i + 1) === "-" || at(i + 1) === "/") {
          const sep = at(i + 1);
          ymd.append(at(i + 2));
          if (i + 3 < lenL && at(i + 3) === sep) {
            ymd.append(at(i + 4));
            i += 2;
          }
          i += 2;
        } else if (
          i + 4 < lenL &&
          at(i + 1) === " " &&
          at(i + 3) === " " &&
          at(i + 2).toLowerCase() === "of"
        ) {
          if (isAllDigits(at(i + 4))) {
            const year = convertYear(Number(at(i + 4)), false, now);
            ymd.append(String(year), "Y");
          }
          i += 4;
        }
      }
    } else if (lookup(AMPM, token) !== undefined) {
      if (res.hour === null) throw new NotADate("no hour specified with AM or PM");
      if (res.hour < 0 || res.hour > 12) throw new NotADate("invalid hour for a 12-hour clock");
      res.hour = adjustAmpm(res.hour, lookup(AMPM, token) as number);
      res.ampm = lookup(AMPM, token) as number;
    } else if (couldBeTzname(res, token)) {
      res.tzname = token;
      res.tzoffset = null; // parserinfo.TZOFFSET is empty; "utc"/"gmt"/"z" in lower case give 0
      if (["utc", "gmt", "z"].includes(token)) res.tzoffset = 0;
      if (i + 1 < lenL && (at(i + 1) === "+" || at(i + 1) === "-")) {
        l[i + 1] = at(i + 1) === "+" ? "-" : "+";
        res.tzoffset = null;
        if (UTC_ZONES.some((z) => z.toLowerCase() === token.toLowerCase())) res.tzname = null;
      }
    } else if (res.hour !== null && (token === "+" || token === "-")) {
      const sign = token === "+" ? 1 : -1;
      const next = at(i + 1);
      let hourOffset: number;
      let minOffset: number;
      if (next.length === 4) {
        hourOffset = requireInt(next.slice(0, 2));
        minOffset = requireInt(next.slice(2));
      } else if (i + 2 < lenL && at(i + 2) === ":") {
        hourOffset = requireInt(next);
        minOffset = requireInt(at(i + 3));
        i += 2;
      } else if (next.length <= 2) {
        hourOffset = requireInt(next.slice(0, 2));
        minOffset = 0;
      } else throw new NotADate("bad offset");
      res.tzoffset = sign * (hourOffset * 3600 + minOffset * 60);
      if (
        i + 5 < lenL &&
        isJump(at(i + 2)) &&
        at(i + 3) === "(" &&
        at(i + 5) === ")" &&
        at(i + 4).length >= 3 &&
        couldBeTzname({ ...res, tzoffset: null }, at(i + 4))
      ) {
        res.tzname = at(i + 4);
        i += 4;
      }
      i += 1;
    } else if (!isJump(token)) {
      throw new NotADate(`unknown token ${token}`);
    }
    i += 1;
  }
  const [year, month, day] = ymd.resolve();
  res.year = year === null ? null : convertYear(year, ymd.centurySpecified, now);
  res.month = month;
  res.day = day;
  // parserinfo.validate
  if ((res.tzoffset === 0 && !res.tzname) || res.tzname === "Z" || res.tzname === "z") {
    res.tzname = "UTC";
    res.tzoffset = 0;
  } else if (
    res.tzoffset !== 0 &&
    res.tzname &&
    UTC_ZONES.some((z) => z.toLowerCase() === res.tzname?.toLowerCase())
  ) {
    res.tzoffset = 0;
  }
  return res;
}

function requireInt(text: string): number {
  const value = pythonInt(text);
  if (value === null) throw new NotADate("not an integer");
  return value;
}

function convertYear(year: number, centurySpecified: boolean, now: Date): number {
  if (year < 100 && !centurySpecified) {
    const current = now.getFullYear();
    let full = year + Math.floor(current / 100) * 100;
    if (full >= current + TWO_DIGIT_YEAR_WINDOW) full -= 100;
    else if (full < current - TWO_DIGIT_YEAR_WINDOW) full += 100;
    return full;
  }
  return year;
}

function adjustAmpm(hour: number, ampm: number): number {
  if (hour < 12 && ampm === 1) return hour + 12;
  if (hour === 12 && ampm === 0) return 0;
  return hour;
}

function couldBeTzname(res: DateutilResult, token: string): boolean {
  return (
    res.hour !== null &&
    res.tzname === null &&
    res.tzoffset === null &&
    token.length <= 5 &&
    (/^[A-Z]*$/.test(token) || UTC_ZONES.includes(token))
  );
}

function hmsIndex(idx: number, tokens: readonly string[], allowJump: boolean): number | null {
  const lenL = tokens.length;
  const hms = (i: number): boolean => lookup(HMS, tokens[i] as string) !== undefined;
  if (idx + 1 < lenL && hms(idx + 1)) return idx + 1;
  if (allowJump && idx + 2 < lenL && tokens[idx + 1] === " " && hms(idx + 2)) return idx + 2;
  if (idx > 0 && hms(idx - 1)) return idx - 1;
  if (idx > 1 && idx === lenL - 1 && tokens[idx - 1] === " " && hms(idx - 2)) return idx - 2;
  return null;
}

/** `_parsems`: "SS[.ffffff]" → [seconds, microseconds]. */
function parseSecondsText(text: string): [number, number] {
  if (!text.includes(".")) return [requireInt(text), 0];
  const parts = text.split(".");
  if (parts.length !== 2) throw new NotADate("bad seconds");
  const fraction = (parts[1] as string).padEnd(6, "0").slice(0, 6);
  return [requireInt(parts[0] as string), requireInt(fraction)];
}

/** `_parse_numeric_token`; returns the index of the last token consumed. */
function parseNumericToken(tokens: string[], idx: number, ymd: Ymd, res: DateutilResult): number {
  const valueRepr = tokens[idx] as string;
  const value = toDecimal(valueRepr);
  const lenLi = valueRepr.length;
  const lenL = tokens.length;
  const at = (i: number): string => {
    const token = tokens[i];
    if (token === undefined) throw new NotADate("index out of range");
    return token;
  };
  if (
    ymd.values.length === 3 &&
    (lenLi === 2 || lenLi === 4) &&
    res.hour === null &&
    (idx + 1 >= lenL || (at(idx + 1) !== ":" && lookup(HMS, at(idx + 1)) === undefined))
  ) {
    // 19990101T23[59]
    res.hour = requireInt(valueRepr.slice(0, 2));
    if (lenLi === 4) res.minute = requireInt(valueRepr.slice(2));
  } else if (lenLi === 6 || (lenLi > 6 && valueRepr.indexOf(".") === 6)) {
    // YYMMDD or HHMMSS[.ss]
    if (ymd.values.length === 0 && !valueRepr.includes(".")) {
      ymd.append(valueRepr.slice(0, 2));
      ymd.append(valueRepr.slice(2, 4));
      ymd.append(valueRepr.slice(4));
    } else {
      res.hour = requireInt(valueRepr.slice(0, 2));
      res.minute = requireInt(valueRepr.slice(2, 4));
      [res.second, res.microsecond] = parseSecondsText(valueRepr.slice(4));
    }
  } else if (lenLi === 8 || lenLi === 12 || lenLi === 14) {
    // YYYYMMDD[hhmm[ss]]
    ymd.append(valueRepr.slice(0, 4), "Y");
    ymd.append(valueRepr.slice(4, 6));
    ymd.append(valueRepr.slice(6, 8));
    if (lenLi > 8) {
      res.hour = requireInt(valueRepr.slice(8, 10));
      res.minute = requireInt(valueRepr.slice(10, 12));
      if (lenLi > 12) res.second = requireInt(valueRepr.slice(12));
    }
  } else if (hmsIndex(idx, tokens, true) !== null) {
    // HH[ ]h or MM[ ]m or SS[.ss][ ]s
    const hmsIdx = hmsIndex(idx, tokens, true) as number;
    let hms: number;
    if (hmsIdx > idx) {
      hms = lookup(HMS, at(hmsIdx)) as number;
      idx = hmsIdx;
    } else {
      hms = (lookup(HMS, at(hmsIdx)) as number) + 1;
    }
    if (hms === 0) {
      res.hour = Math.trunc(value.value);
      if (hasFraction(valueRepr)) res.minute = sixtiethsOfFraction(valueRepr);
    } else if (hms === 1) {
      res.minute = Math.trunc(value.value);
      res.second = hasFraction(valueRepr) ? sixtiethsOfFraction(valueRepr) : null;
    } else if (hms === 2) {
      [res.second, res.microsecond] = parseSecondsText(valueRepr);
    }
  } else if (idx + 2 < lenL && at(idx + 1) === ":") {
    // HH:MM[:SS[.ss]]
    res.hour = Math.trunc(value.value);
    const minuteToken = toDecimal(at(idx + 2));
    res.minute = Math.trunc(minuteToken.value);
    res.second = hasFraction(minuteToken.text) ? sixtiethsOfFraction(minuteToken.text) : null;
    if (idx + 4 < lenL && at(idx + 3) === ":") {
      [res.second, res.microsecond] = parseSecondsText(at(idx + 4));
      idx += 2;
    }
    idx += 2;
  } else if (idx + 1 < lenL && ["-", "/", "."].includes(at(idx + 1))) {
    const sep = at(idx + 1);
    ymd.append(valueRepr);
    if (idx + 2 < lenL && !isJump(at(idx + 2))) {
      if (isAllDigits(at(idx + 2))) {
        ymd.append(at(idx + 2));
      } else {
        const month = lookup(MONTHS, at(idx + 2));
        if (month === undefined) throw new NotADate("unknown month");
        ymd.append(month, "M");
      }
      if (idx + 3 < lenL && at(idx + 3) === sep) {
        const month = lookup(MONTHS, at(idx + 4));
        if (month !== undefined) ymd.append(month, "M");
        else ymd.append(at(idx + 4));
        idx += 2;
      }
      idx += 1;
    }
    idx += 1;
  } else if (idx + 1 >= lenL || isJump(at(idx + 1))) {
    if (idx + 2 < lenL && lookup(AMPM, at(idx + 2)) !== undefined) {
      // 12 am
      res.hour = adjustAmpm(Math.trunc(value.value), lookup(AMPM, at(idx + 2)) as number);
      idx += 1;
    } else {
      ymd.append(value.value);
    }
    idx += 1;
  } else if (lookup(AMPM, at(idx + 1)) !== undefined && value.value >= 0 && value.value < 24) {
    // 12am
    res.hour = adjustAmpm(Math.trunc(value.value), lookup(AMPM, at(idx + 1)) as number);
    idx += 1;
  } else if (ymd.couldBeDay(value.value)) {
    ymd.append(value.value);
  } else {
    throw new NotADate("unexpected number");
  }
  return idx;
}
