import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Column } from "../../../src/env/blade/frame.js";
import {
  CsvReadError,
  parsePandasFloat,
  readCsvFile,
  readCsvFrame,
} from "../../../src/env/blade/read-csv.js";

// Expected values below were checked against pandas 1.5.3's pd.read_csv.

function columns(text: string): Record<string, Pick<Column, "dtype" | "values">> {
  const frame = readCsvFrame(text, "test.csv");
  return Object.fromEntries(
    frame.columns.map((c) => [c.name, { dtype: c.dtype, values: c.values }]),
  );
}

describe("readCsvFrame dtype inference", () => {
  it("reads ints, floats and an int column with a missing value as float64", () => {
    const c = columns("a,b,c\n1,1.5,1\n2,2,\n");
    expect(c.a).toEqual({ dtype: "int64", values: [1, 2] });
    expect(c.b).toEqual({ dtype: "float64", values: [1.5, 2] });
    expect(c.c?.dtype).toBe("float64");
    expect(c.c?.values[0]).toBe(1);
    expect(Number.isNaN(c.c?.values[1])).toBe(true);
  });

  it("accepts surrounding spaces in numbers, signs, exponents and infinity words", () => {
    const c = columns("a,b,c,d\n 1, 2.5,+inf,1E5\n3 ,4 ,-Infinity,1e-05\n");
    expect(c.a).toEqual({ dtype: "int64", values: [1, 3] });
    expect(c.b).toEqual({ dtype: "float64", values: [2.5, 4] });
    expect(c.c).toEqual({
      dtype: "float64",
      values: [Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY],
    });
    expect(c.d).toEqual({ dtype: "float64", values: [100000, 1e-5] });
  });

  it("keeps as text what the C parser rejects", () => {
    const c = columns("a,b,c,d\ninf ,1e400,5e,0x10\n1,2,3,4\n");
    expect(c.a).toEqual({ dtype: "object", values: ["inf ", "1"] });
    expect(c.b).toEqual({ dtype: "object", values: ["1e400", "2"] });
    expect(c.c).toEqual({ dtype: "object", values: ["5e", "3"] });
    expect(c.d).toEqual({ dtype: "object", values: ["0x10", "4"] });
  });

  it("reads true/false in any letter case as bool, and with a missing value as object texts", () => {
    const c = columns("a,b,c\nTrUe,True,yes\nfalse,,no\n");
    expect(c.a).toEqual({ dtype: "bool", values: [true, false] });
    expect(c.b).toEqual({ dtype: "object", values: ["True", null] });
    expect(c.c).toEqual({ dtype: "object", values: ["yes", "no"] });
  });

  it("treats pandas 1.5's NA strings, and only those, as missing", () => {
    const c = columns("a,b\nNA,None\n#N/A, NA\nnull,x\n");
    expect(c.a?.dtype).toBe("float64");
    expect(c.a?.values.every((v) => Number.isNaN(v))).toBe(true);
    expect(c.b).toEqual({ dtype: "object", values: ["None", " NA", "x"] });
  });

  it("keeps a column mixing numbers and text as the texts written", () => {
    expect(columns("a\n007\nabc\n1.50\n").a).toEqual({
      dtype: "object",
      values: ["007", "abc", "1.50"],
    });
  });

  it("follows the int64 → uint64 → float64 fallbacks", () => {
    expect(columns("a\n18446744073709551615\n1\n").a).toEqual({
      dtype: "other",
      values: ["18446744073709551615", "1"],
    });
    expect(columns("a\n99999999999999999999\n1\n").a?.dtype).toBe("object");
    expect(columns("a\n99999999999999999999.5\n1.5\n").a?.dtype).toBe("object");
    expect(columns("a\n1.5\n99999999999999999999.5\n").a).toEqual({
      dtype: "float64",
      values: [1.5, 1.0000000000000002e20],
    });
    expect(columns("a\n-5\n9223372036854775808\n").a).toEqual({
      dtype: "object",
      values: ["-5", "9223372036854775808"],
    });
    expect(columns("a\n-9223372036854775809\n1.5\n").a?.dtype).toBe("float64");
  });

  it("converts floats with pandas' own (not correctly rounded) parser", () => {
    expect(parsePandasFloat("391.66573353688705")).toBe(391.6657335368871);
    expect(Number("391.66573353688705")).toBe(391.66573353688705);
    expect(parsePandasFloat("1e-400")).toBe(0);
    expect(parsePandasFloat("1.8e308")).toBeNull();
    expect(parsePandasFloat(".")).toBeNull();
  });

  it("combines chunks of a long file as pandas' low_memory reader does", () => {
    // 1024 columns → chunks of 512 rows; the types of the two chunks differ.
    const width = 1024;
    const header = Array.from({ length: width }, (_, i) => `c${i}`).join(",");
    const rows = Array.from({ length: 600 }, (_, r) => {
      const first = r < 512 ? ["007", "1", "True", "1.5"] : ["abc", "2.5", "1", ""];
      return [...first, ...Array.from({ length: width - 4 }, () => "0")].join(",");
    });
    const frame = readCsvFrame(`${header}\n${rows.join("\n")}\n`, "wide.csv");
    const [c0, c1, c2, c3] = frame.columns;
    expect([c0?.dtype, c0?.values[0], c0?.values[599]]).toEqual(["object", "7", "abc"]);
    expect([c1?.dtype, c1?.values[0], c1?.values[599]]).toEqual(["float64", 1, 2.5]);
    expect([c2?.dtype, c2?.values[0], c2?.values[599]]).toEqual(["int64", 1, 1]);
    expect(c3?.dtype).toBe("float64");
  });
});

describe("readCsvFrame structure", () => {
  it("mangles duplicate names and names empty headers as pandas does", () => {
    const frame = readCsvFrame("a,a,a.1,,b,\n1,2,3,4,5,6\n", "t.csv");
    expect(frame.columns.map((c) => c.name)).toEqual([
      "a",
      "a.2",
      "a.1",
      "Unnamed: 3",
      "b",
      "Unnamed: 5",
    ]);
  });

  it("handles quotes, embedded newlines, CRLF, a BOM and blank lines", () => {
    const frame = readCsvFrame(
      '\ufeffa,b\r\n1,"x,\r\ny"\r\n\r\n   \r\n2,"say ""hi"""\r\n',
      "t.csv",
    );
    expect(frame.rowCount).toBe(2);
    expect(frame.columns.map((c) => c.name)).toEqual(["a", "b"]);
    expect(frame.columns[1]?.values).toEqual(["x,\r\ny", 'say "hi"']);
  });

  it("fills short rows with missing values", () => {
    const c = columns("a,b\n1\n2,3\n");
    expect(c.a).toEqual({ dtype: "int64", values: [1, 2] });
    expect(c.b?.dtype).toBe("float64");
  });

  it("reads a header without rows as empty object columns", () => {
    const frame = readCsvFrame("a,b\n", "t.csv");
    expect(frame.rowCount).toBe(0);
    expect(frame.columns).toEqual([
      { name: "a", dtype: "object", values: [] },
      { name: "b", dtype: "object", values: [] },
    ]);
  });
});

describe("readCsv errors", () => {
  const dir = mkdtempSync(join(tmpdir(), "clade-blade-csv-"));

  it("rejects a row longer than the header, naming the file and line", () => {
    expect(() => readCsvFrame("a,b\n1,2\n3,4,5\n", "data.csv")).toThrow(
      new CsvReadError("data.csv: expected 2 fields in line 3, saw 3"),
    );
  });

  it("rejects an implicit index column with an explanation", () => {
    expect(() => readCsvFrame("a,b\n1,2,3\n", "data.csv")).toThrow(
      /data\.csv: line 2 has 3 fields.*index/,
    );
  });

  it("rejects an empty file", () => {
    const path = join(dir, "empty.csv");
    writeFileSync(path, "\n\n");
    expect(() => readCsvFile(path)).toThrow(CsvReadError);
    expect(() => readCsvFile(path)).toThrow(/empty\.csv: no columns/);
  });

  it("rejects a missing file and invalid UTF-8", () => {
    expect(() => readCsvFile(join(dir, "missing.csv"))).toThrow(/missing\.csv: cannot read/);
    const path = join(dir, "latin1.csv");
    writeFileSync(path, Buffer.from([0x61, 0x0a, 0xe9, 0x0a]));
    expect(() => readCsvFile(path)).toThrow(/latin1\.csv: not valid UTF-8/);
  });

  it("rejects an unterminated quote", () => {
    expect(() => readCsvFrame('a,b\n1,"open\n', "q.csv")).toThrow(/q\.csv: cannot tokenize/);
  });
});
