/**
 * Python's float semantics that BLADE's column hashing depends on (docs/blade-spec.md §1.3):
 * the built-in `round(x, n)` on a float and `repr(x)`. JS differs on both — `toFixed` breaks
 * exact ties away from zero where Python breaks them to even, and `String(x)` writes `1` and
 * `1e-7` where Python writes `1.0` and `1e-07` — so hashes computed with JS defaults would not
 * match BLADE's.
 */

/** repr switches to scientific notation below this decimal exponent ... */
const MIN_FIXED_EXPONENT = -4;
/** ... and at or above this one (Python's float_repr_style 'r'). */
const MAX_FIXED_EXPONENT = 16;
/** Between these magnitudes both languages use fixed notation with the same digits. */
const FAST_PATH_MIN = 1e-4;
const FAST_PATH_MAX = 1e16;
/** Above this magnitude every double is an integer, so rounding to >= 0 digits is the identity. */
const ALL_INTEGERS_ABOVE = 2 ** 52;
/** `toFixed` accepts at most this many digits. */
const MAX_TO_FIXED_DIGITS = 100;

/**
 * Python 3 `round(x, digits)` for a float: the exact binary value of x rounded to `digits`
 * decimals, exact ties to even, read back as the nearest double. NaN and ±Infinity are returned
 * unchanged, and so are values too large to have a fractional part. The sign of zero survives
 * (`round(-1e-7, 5)` is `-0.0`), as in Python.
 */
export function pythonRound(x: number, digits: number): number {
  if (!Number.isFinite(x) || x === 0) return x;
  if (!Number.isInteger(digits))
    throw new RangeError(`pythonRound: digits must be an integer, got ${digits}`);
  if (digits >= 0) {
    if (Math.abs(x) >= ALL_INTEGERS_ABOVE || Number.isInteger(x)) return x;
    if (digits > MAX_TO_FIXED_DIGITS) return x;
    // toFixed rounds the exact binary value correctly, except that it breaks an exact tie away
    // from zero; only those ties need the exact (BigInt) path.
    if (!isExactTie(x, digits)) return Number(x.toFixed(digits));
  }
  return roundExact(x, digits);
}

/**
 * Whether x lies exactly halfway between two multiples of 10^-digits. Such a value is
 * (2k+1) / (2·10^digits), which is a double only when it is an odd multiple of
 * 2^-(digits+1) (the factor 5^digits must divide the numerator), so the test is exact.
 */
function isExactTie(x: number, digits: number): boolean {
  const scaled = x * 2 ** (digits + 1); // exact: a power-of-two scaling
  return Number.isInteger(scaled) && Math.abs(scaled % 2) === 1;
}

/** Round through the exact rational value of x (BigInt arithmetic), ties to even. */
function roundExact(x: number, digits: number): number {
  const { mantissa, exponent } = decompose(Math.abs(x));
  // |x| = mantissa · 2^exponent; we want q = |x| · 10^digits as a fraction num/den.
  let num = mantissa;
  let den = 1n;
  if (exponent >= 0) num <<= BigInt(exponent);
  else den <<= BigInt(-exponent);
  if (digits >= 0) num *= 10n ** BigInt(digits);
  else den *= 10n ** BigInt(-digits);
  let q = num / den;
  const twiceRemainder = 2n * (num - q * den);
  if (twiceRemainder > den || (twiceRemainder === den && q % 2n === 1n)) q += 1n;
  const text = digits >= 0 ? `${q}e-${digits}` : `${q}e${-digits}`;
  const rounded = Number(text);
  return x < 0 ? -rounded : rounded;
}

/** Split a finite positive double into an integer mantissa and a power-of-two exponent. */
function decompose(x: number): { mantissa: bigint; exponent: number } {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  const biased = Number((bits >> 52n) & 0x7ffn);
  const fraction = bits & ((1n << 52n) - 1n);
  if (biased === 0) return { mantissa: fraction, exponent: -1074 };
  return { mantissa: fraction | (1n << 52n), exponent: biased - 1075 };
}

/**
 * Python's `repr(float)`: the shortest digits that read back as x (JS computes the same digits,
 * ECMAScript's Number::toString rule), laid out the way Python does — fixed notation with at
 * least one decimal for decimal exponents -4 ≤ e < 16, otherwise `d.ddde±XX`.
 */
export function formatPythonFloat(x: number): string {
  if (Number.isNaN(x)) return "nan";
  if (x === Number.POSITIVE_INFINITY) return "inf";
  if (x === Number.NEGATIVE_INFINITY) return "-inf";
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const magnitude = Math.abs(x);
  if (magnitude >= FAST_PATH_MIN && magnitude < FAST_PATH_MAX) {
    // Here JS writes the same shortest digits in fixed notation; Python adds ".0" to integers.
    const text = String(x);
    return text.includes(".") ? text : `${text}.0`;
  }
  const sign = x < 0 ? "-" : "";
  // toExponential() without an argument gives the shortest round-trip digits.
  const exp = Math.abs(x).toExponential();
  const ePos = exp.indexOf("e");
  const digits = exp.slice(0, ePos).replace(".", "");
  const exponent = Number(exp.slice(ePos + 1));
  if (exponent < MIN_FIXED_EXPONENT || exponent >= MAX_FIXED_EXPONENT) {
    const mantissa = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const expSign = exponent < 0 ? "-" : "+";
    const expDigits = String(Math.abs(exponent)).padStart(2, "0");
    return `${sign}${mantissa}e${expSign}${expDigits}`;
  }
  if (exponent < 0) return `${sign}0.${"0".repeat(-exponent - 1)}${digits}`;
  const intLength = exponent + 1;
  if (digits.length <= intLength)
    return `${sign}${digits}${"0".repeat(intLength - digits.length)}.0`;
  return `${sign}${digits.slice(0, intLength)}.${digits.slice(intLength)}`;
}
