/**
 * How frames travel between the runtimes' kernels (in the sandbox) and clade, as JSON: each
 * column with its pandas dtype, a kind that says how to read its values, and the values in a
 * JSON-safe form (NaN as null, infinities as the strings "inf"/"-inf", -0 as "-0"). Within one batch of
 * scripts a column's values travel once: the first column holding them carries them under a
 * block number, later columns with the same values name that block only (a 10k-row, 30-column
 * dataset run through 50 scripts is otherwise mostly the same columns again and again).
 *
 * Everything coming from a kernel is untrusted (the code in the sandbox can write anything on
 * the channel), so decoding checks every cell and fails with a FrameWireError.
 */
import type { Cell, Column, Dtype, Frame } from "../frame.js";

export type WireKind = "int" | "float" | "bool" | "object" | "datetime" | "other";

/**
 * A float on the wire: a number, null for NaN, "inf" / "-inf", or "-0" (JSON.stringify writes
 * -0 as 0, and BLADE's hashing tells -0.0 from 0.0).
 */
export type WireFloat = number | null | "inf" | "-inf" | "-0";

export interface WireColumn {
  name: string;
  /** The pandas dtype as pandas writes it ("int64", "float32", "datetime64[ns]", "category", ...). */
  dtype: string;
  kind: WireKind;
  /** The block of values this column uses; its first use carries `values`. */
  block: number;
  values?: unknown[];
  /** Object columns from pandas: pandas' own datetime parse of the column (frame.ts). */
  datetimeParse?: (string | null)[] | null;
}

export interface WireFrame {
  rowCount: number;
  columns: WireColumn[];
}

export class FrameWireError extends Error {
  override name = "FrameWireError";
}

const DTYPE_OF_KIND: Record<WireKind, Dtype> = {
  int: "int64",
  float: "float64",
  bool: "bool",
  object: "object",
  datetime: "datetime64",
  other: "other",
};

/** The text of a missing cell in an "other" column that arrived without one. */
const OTHER_MISSING_TEXT = "None";

interface Block {
  kind: WireKind;
  values: Cell[];
  datetimeParse?: (string | null)[] | null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function decodeFloat(value: unknown, where: () => string): number {
  if (typeof value === "number") return value;
  if (value === null) return Number.NaN;
  if (value === "inf") return Number.POSITIVE_INFINITY;
  if (value === "-inf") return Number.NEGATIVE_INFINITY;
  if (value === "-0") return -0;
  throw new FrameWireError(`${where()}: not a float (${JSON.stringify(value)})`);
}

function decodeValues(kind: WireKind, values: unknown[], where: (row: number) => string): Cell[] {
  switch (kind) {
    case "float":
      return values.map((value, row) => decodeFloat(value, () => where(row)));
    case "int":
      for (const [row, value] of values.entries()) {
        if (!Number.isSafeInteger(value)) {
          throw new FrameWireError(`${where(row)}: not a safe integer (${JSON.stringify(value)})`);
        }
      }
      return values as Cell[];
    case "bool":
      for (const [row, value] of values.entries()) {
        if (typeof value !== "boolean") throw new FrameWireError(`${where(row)}: not a boolean`);
      }
      return values as Cell[];
    case "object":
    case "datetime":
      for (const [row, value] of values.entries()) {
        if (value !== null && typeof value !== "string") {
          throw new FrameWireError(`${where(row)}: not a string or null`);
        }
      }
      return values as Cell[];
    case "other":
      return values.map((value, row) => {
        if (value === null) return OTHER_MISSING_TEXT;
        if (typeof value !== "string") throw new FrameWireError(`${where(row)}: not a string`);
        return value;
      });
  }
}

function decodeParse(value: unknown, rows: number, where: string): (string | null)[] | null {
  if (value === null) return null;
  if (!Array.isArray(value) || value.length !== rows) {
    throw new FrameWireError(`${where}: datetimeParse must be null or ${rows} texts`);
  }
  for (const cell of value) {
    if (cell !== null && typeof cell !== "string") {
      throw new FrameWireError(`${where}: datetimeParse holds a non-text cell`);
    }
  }
  return value as (string | null)[];
}

/**
 * Decodes the frames of one batch, in the order the kernel sent them (a block is defined by the
 * first column that uses it). Frames of one decoder share the value arrays of shared blocks:
 * treat decoded frames as read-only.
 */
export class FrameDecoder {
  private readonly blocks = new Map<number, Block>();

  decode(wire: unknown, label = "frame"): Frame {
    if (!isRecord(wire) || !Array.isArray(wire.columns)) {
      throw new FrameWireError(`${label}: not a frame (no columns)`);
    }
    const rowCount = wire.rowCount;
    if (!Number.isSafeInteger(rowCount) || (rowCount as number) < 0) {
      throw new FrameWireError(`${label}: rowCount must be a count of rows`);
    }
    const rows = rowCount as number;
    const columns: Column[] = wire.columns.map((raw: unknown, index: number) => {
      const where = `${label}, column ${index + 1}`;
      if (!isRecord(raw) || typeof raw.name !== "string" || typeof raw.dtype !== "string") {
        throw new FrameWireError(`${where}: needs a name and a dtype`);
      }
      const kind = raw.kind as WireKind;
      if (!Object.hasOwn(DTYPE_OF_KIND, kind)) {
        throw new FrameWireError(`${where} (${raw.name}): unknown kind ${JSON.stringify(kind)}`);
      }
      const blockId = raw.block;
      if (!Number.isSafeInteger(blockId)) {
        throw new FrameWireError(`${where} (${raw.name}): needs a block number`);
      }
      let block = this.blocks.get(blockId as number);
      if (raw.values !== undefined) {
        if (block !== undefined) {
          throw new FrameWireError(`${where} (${raw.name}): block ${blockId} is already defined`);
        }
        if (!Array.isArray(raw.values) || raw.values.length !== rows) {
          throw new FrameWireError(`${where} (${raw.name}): needs ${rows} values`);
        }
        block = {
          kind,
          values: decodeValues(kind, raw.values, (row) => `${where} (${raw.name}), row ${row + 1}`),
        };
        if (raw.datetimeParse !== undefined) {
          block.datetimeParse = decodeParse(raw.datetimeParse, rows, `${where} (${raw.name})`);
        }
        this.blocks.set(blockId as number, block);
      } else if (block === undefined) {
        throw new FrameWireError(`${where} (${raw.name}): block ${blockId} was never sent`);
      } else if (block.kind !== kind || block.values.length !== rows) {
        throw new FrameWireError(`${where} (${raw.name}): block ${blockId} does not fit it`);
      }
      const column: Column = { name: raw.name, dtype: DTYPE_OF_KIND[kind], values: block.values };
      if (kind === "object" && block.datetimeParse !== undefined) {
        column.datetimeParse = block.datetimeParse;
      }
      return column;
    });
    return { columns, rowCount: rows };
  }
}

const KIND_OF_DTYPE: Record<Dtype, WireKind> = {
  int64: "int",
  float64: "float",
  bool: "bool",
  object: "object",
  datetime64: "datetime",
  other: "other",
};

function encodeFloat(value: Cell): WireFloat {
  if (typeof value !== "number" || Number.isNaN(value)) return null;
  if (value === Number.POSITIVE_INFINITY) return "inf";
  if (value === Number.NEGATIVE_INFINITY) return "-inf";
  if (Object.is(value, -0)) return "-0";
  return value;
}

/** A frame in the wire format (each column its own block), e.g. to load it into a kernel. */
export function encodeFrame(frame: Frame): WireFrame {
  return {
    rowCount: frame.rowCount,
    columns: frame.columns.map((column, index) => {
      const kind = KIND_OF_DTYPE[column.dtype];
      return {
        name: column.name,
        dtype: column.dtype,
        kind,
        block: index,
        values: kind === "float" ? column.values.map(encodeFloat) : column.values,
      };
    }),
  };
}
