import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { hashFrame, prepareColumn, valueHashOfTexts } from "../../../src/env/blade/column-hash.js";
import type { Frame } from "../../../src/env/blade/frame.js";
import { parseDatetimeColumn } from "../../../src/env/blade/pandas-datetime.js";
import { readCsvFile } from "../../../src/env/blade/read-csv.js";

const FIXTURES = "tests/fixtures/blade/hash";

interface GoldenColumn {
  name: string;
  dtype: string;
  value: string;
  categorical: string | null;
}

const goldens = JSON.parse(readFileSync(`${FIXTURES}/goldens.json`, "utf8")) as {
  now: string;
  csv: Record<string, { rowCount: number; columns: GoldenColumn[] }>;
  frames: Record<string, Frame & { hashes: GoldenColumn[] }>;
  datetimes: {
    strings: [string, (string | null)[] | null][];
    columns: [string[], (string | null)[] | null][];
    fuzz: [string, (string | null)[] | null][];
  };
};
/** Time-only strings and two-digit years depend on the day the goldens were made. */
const now = new Date(goldens.now);

describe("parseDatetimeColumn against pandas 1.5.3", () => {
  it("agrees on every single-string case of the corpus", () => {
    expect(goldens.datetimes.strings.length).toBeGreaterThan(100);
    const disagreements = goldens.datetimes.strings.flatMap(([text, expected]) => {
      const got = parseDatetimeColumn([text], { now });
      return JSON.stringify(got) === JSON.stringify(expected) ? [] : [{ text, expected, got }];
    });
    expect(disagreements).toEqual([]);
  });

  it("agrees on the seeded random date-like strings", () => {
    const { fuzz } = goldens.datetimes;
    expect(fuzz.length).toBeGreaterThan(1000);
    expect(fuzz.filter(([, expected]) => expected !== null).length).toBeGreaterThan(
      fuzz.length / 3,
    );
    const disagreements = fuzz.flatMap(([text, expected]) => {
      const got = parseDatetimeColumn([text], { now });
      return JSON.stringify(got) === JSON.stringify(expected) ? [] : [{ text, expected, got }];
    });
    expect(disagreements).toEqual([]);
  });

  it("agrees on whole columns (NaT, mixed offsets, failures)", () => {
    for (const [texts, expected] of goldens.datetimes.columns) {
      expect(parseDatetimeColumn(texts, { now }), JSON.stringify(texts)).toEqual(expected);
    }
  });

  it("gives time-only strings the date of `now`", () => {
    expect(parseDatetimeColumn(["10:30"], { now: new Date("2001-02-03T12:00:00") })).toEqual([
      "2001-02-03 10:30:00",
    ]);
  });
});

describe("hashFrame against pandas 1.5.3 goldens", () => {
  for (const [file, golden] of Object.entries(goldens.csv)) {
    it(`reproduces dtypes and hashes of ${file}`, () => {
      const frame = readCsvFile(`${FIXTURES}/${file}`);
      expect(frame.rowCount).toBe(golden.rowCount);
      expect(frame.columns.map((c) => c.name)).toEqual(golden.columns.map((c) => c.name));
      const hashes = hashFrame(frame, { now });
      golden.columns.forEach((expected, i) => {
        const column = frame.columns[i];
        const got = hashes[i];
        // Integers beyond ±2^53 are typed "other" in clade (their exact text is kept).
        const dtype =
          column?.dtype === "other" && expected.dtype === "int64" ? "int64" : column?.dtype;
        expect(dtype, `${file}:${expected.name} dtype`).toBe(expected.dtype);
        expect(got?.value, `${file}:${expected.name} value hash`).toBe(expected.value);
        // null: BLADE raises (empty frame); clade falls back to the value hash.
        expect(got?.categorical, `${file}:${expected.name} categorical hash`).toBe(
          expected.categorical ?? expected.value,
        );
      });
    });
  }

  for (const [key, golden] of Object.entries(goldens.frames)) {
    it(`reproduces hashes of the Python-built frame ${key}`, () => {
      const hashes = hashFrame({ columns: golden.columns, rowCount: golden.rowCount }, { now });
      expect(hashes).toEqual(golden.hashes);
    });
  }
});

describe("hashFrame behaviour", () => {
  const frame = readCsvFile(`${FIXTURES}/categorical.csv`);
  const byName = new Map(hashFrame(frame, { now }).map((h) => [h.name, h]));

  it("gives relabelled categories the same categorical hash but different value hashes", () => {
    const a = byName.get("labels_a");
    const b = byName.get("labels_b");
    expect(a?.categorical).toBe(b?.categorical);
    expect(a?.value).not.toBe(b?.value);
  });

  it("factorises only below a unique ratio of 0.5", () => {
    const half = byName.get("ratio_half");
    const below = byName.get("ratio_below");
    expect(half?.categorical).toBe(half?.value);
    expect(below?.categorical).not.toBe(below?.value);
  });

  it("re-reads a unique integer year column as dates in the categorical pass (BLADE's quirk)", () => {
    const years = frame.columns.find((c) => c.name === "years");
    expect(years).toBeDefined();
    const texts = (years?.values ?? []).map((y) => `${y}-01-01 00:00:00`);
    expect(byName.get("years")?.categorical).toBe(valueHashOfTexts(texts));
  });

  it("hashes an empty column as the empty string and writes missing prepared values as nan", () => {
    expect(valueHashOfTexts([])).toBe(
      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    );
    expect(valueHashOfTexts(["a", null])).toBe(valueHashOfTexts(["a", "nan"]));
  });

  it("uses the runtime's own datetime parse when given", () => {
    const column = {
      name: "x",
      dtype: "object" as const,
      values: ["1", "2"],
      datetimeParse: ["1970-01-01 00:00:00", null],
    };
    expect(prepareColumn(column)).toEqual(["1970-01-01 00:00:00", null]);
    expect(prepareColumn({ ...column, datetimeParse: null })).toEqual(["1", "2"]);
    expect(prepareColumn({ ...column, datetimeParse: undefined })).toEqual(["1", "2"]);
  });

  it("prepares floats with Python's rounding and repr, NaN as 0.0", () => {
    const column = {
      name: "f",
      dtype: "float64" as const,
      values: [0.015625, Number.NaN, 1e-7, 1e16, -0],
    };
    expect(prepareColumn(column)).toEqual(["0.01562", "0.0", "0.0", "1e+16", "-0.0"]);
  });

  it("does not fail on a frame without rows", () => {
    const empty: Frame = { columns: [{ name: "a", dtype: "object", values: [] }], rowCount: 0 };
    const [hashes] = hashFrame(empty);
    expect(hashes?.categorical).toBe(hashes?.value);
  });
});
