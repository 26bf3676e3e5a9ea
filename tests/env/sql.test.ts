import { describe, expect, it } from "vitest";
import { solveSql } from "../../src/agent/reference/sql.js";
import {
  DATABASES,
  databaseContent,
  generateTask,
  goldResult,
  hasOuterOrderBy,
  loadDatabase,
  MAX_RESULT_BYTES,
  MAX_ROWS,
  parseAction,
  QUERY_TIME_LIMIT_MS,
  questionPool,
  runQuery,
  SHOWN_ROWS,
  sameResult,
  sqlEnv,
} from "../../src/env/sql/index.js";
import { EpisodeDoneError } from "../../src/env/types.js";
import { runReferenceEpisode } from "../fixtures/reference-episode.js";

const info = sqlEnv.info;

async function transcript(taskIndex: number, seed: number, actions: string[]): Promise<string[]> {
  const env = sqlEnv.create();
  const texts = [(await env.reset(taskIndex, { seed })).text];
  for (const action of actions) texts.push((await env.step(action)).observation.text);
  return texts;
}

/** A task index (test split) whose question matches the predicate. */
function findTask(predicate: (task: ReturnType<typeof generateTask>) => boolean): number {
  for (let index = 0; index < 500; index++) if (predicate(generateTask(index))) return index;
  throw new Error("no such task");
}

/** Runs one answer on a fresh episode of the task and returns the step result. */
async function answer(taskIndex: number, sql: string) {
  const env = sqlEnv.create();
  await env.reset(taskIndex);
  return env.step(`answer: ${sql}`);
}

const shop = () => loadDatabase("shop");

describe("sql info and splits", () => {
  it("has the agreed splits, version, limits and action syntax", () => {
    expect(info.name).toBe("sql");
    expect(info.version).toBe("1.0.0");
    expect(info.splits.test).toEqual({ start: 0, end: 100 });
    expect(info.splits.train).toEqual({ start: 100, end: 500 });
    expect(info.successThreshold).toBe(1);
    expect(info.maxSteps).toBe(10);
    expect(info.instruction).toContain("query: <SQL>");
    expect(info.instruction).toContain("answer: <SQL>");
  });
});

describe("sql databases", () => {
  it("builds five databases whose tables hold the shipped rows", () => {
    expect(DATABASES.map((db) => db.name)).toEqual(["shop", "school", "library", "flights", "hr"]);
    for (const db of DATABASES) {
      const { tables } = databaseContent(db.name);
      const loaded = loadDatabase(db.name);
      expect(tables.length).toBeGreaterThanOrEqual(4);
      for (const table of tables) {
        const count = loaded.connection.prepare(`SELECT COUNT(*) AS n FROM ${table.name}`).get();
        expect(count, `${db.name}.${table.name}`).toEqual({ n: table.rows.length });
        expect(table.rows.length).toBeGreaterThanOrEqual(7);
        expect(table.rows.length).toBeLessThanOrEqual(1000);
        expect(loaded.schema).toContain(`CREATE TABLE ${table.name} (`);
      }
      expect(loadDatabase(db.name)).toBe(loaded); // built once per process
    }
  });

  it("generates the same records and questions every time", () => {
    for (const db of DATABASES) expect(db.generate()).toEqual(databaseContent(db.name));
  });

  it("runs every gold query to a non-empty, non-trivial result", () => {
    for (const db of DATABASES) {
      const loaded = loadDatabase(db.name);
      const { questions } = databaseContent(db.name);
      expect(questions.length, db.name).toBeGreaterThanOrEqual(100);
      for (const question of questions) {
        const outcome = runQuery(loaded, question.sql);
        if (!outcome.ok) throw new Error(`${question.sql}: ${outcome.error}`);
        const { rows, truncated } = outcome.result;
        expect(rows.length, question.sql).toBeGreaterThan(0);
        expect(truncated).toBe(false);
        // A single 0 or NULL would make a weak question (e.g. counting nothing).
        if (rows.length === 1 && rows[0]?.length === 1) {
          expect([0, null], question.sql).not.toContain(rows[0][0]);
        }
      }
    }
  });

  it("has no ties where ordered questions need a unique order", () => {
    // Ordered questions select their sort key last; it must be strictly monotonic over the
    // rows asked for plus the next one, so that "top k" has exactly one answer.
    let checked = 0;
    for (const db of DATABASES) {
      const loaded = loadDatabase(db.name);
      for (const { sql } of databaseContent(db.name).questions) {
        if (!hasOuterOrderBy(sql)) continue;
        const limit = /LIMIT (\d+)(?: OFFSET (\d+))?$/.exec(sql);
        const probe = limit
          ? sql.replace(/LIMIT .*$/, `LIMIT ${Number(limit[1]) + Number(limit[2] ?? 0) + 1}`)
          : sql;
        const outcome = runQuery(loaded, probe);
        if (!outcome.ok) throw new Error(outcome.error);
        const keys = outcome.result.rows.map((row) => row[row.length - 1]);
        expect(new Set(keys).size, sql).toBe(keys.length);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(50);
  });
});

describe("sql tasks", () => {
  it("gives 500 distinct questions, a fifth of each split per database", () => {
    const questions = new Set<string>();
    const perDatabase = { test: new Map<string, number>(), train: new Map<string, number>() };
    for (let index = 0; index < 500; index++) {
      const task = generateTask(index);
      questions.add(`${task.database}: ${task.question}`);
      const split = index < 100 ? perDatabase.test : perDatabase.train;
      split.set(task.database, (split.get(task.database) ?? 0) + 1);
    }
    expect(questions.size).toBe(500);
    expect([...perDatabase.test.values()]).toEqual([20, 20, 20, 20, 20]);
    expect([...perDatabase.train.values()]).toEqual([80, 80, 80, 80, 80]);
  });

  it("keeps test and train gold queries apart", () => {
    const gold = (from: number, to: number) =>
      new Set(Array.from({ length: to - from }, (_, i) => generateTask(from + i).gold));
    const test = gold(0, 100);
    const train = gold(100, 500);
    expect([...test].filter((sql) => train.has(sql))).toEqual([]);
    const templates = new Set(Array.from({ length: 100 }, (_, i) => generateTask(i).template));
    expect(templates.size).toBeGreaterThan(40);
  });

  it("uses the seed for the phrasing only", () => {
    const phrasings = new Set<string>();
    for (let seed = 0; seed < 8; seed++) {
      const task = generateTask(7, seed);
      expect(task.gold).toBe(generateTask(7).gold);
      phrasings.add(task.question);
    }
    expect(phrasings.size).toBe(2);
    expect(generateTask(7, 3)).toEqual(generateTask(7, 3));
    expect(questionPool("hr")).toBe(questionPool("hr"));
  });

  it("states the database, schema, question and action syntax at reset", async () => {
    const task = generateTask(12);
    const observation = await sqlEnv.create().reset(12);
    expect(observation.text).toContain(`Database "${task.database}"`);
    expect(observation.text).toContain(`Question: ${task.question}`);
    for (const table of databaseContent(task.database).tables) {
      expect(observation.text).toContain(table.ddl);
    }
    expect(observation.text).toContain('"query: <SQL>"');
    expect(observation.text).toContain('"answer: <SQL>"');
  });
});

describe("sql result comparison", () => {
  const result = (rows: unknown[][], columns = rows[0]?.length ?? 1) => ({
    columns: Array.from({ length: columns }, (_, i) => `c${i}`),
    rows,
  });

  it("ignores row order unless the gold query orders its rows", () => {
    const gold = result([
      ["a", 1],
      ["b", 2],
    ]);
    const swapped = result([
      ["b", 2],
      ["a", 1],
    ]);
    expect(sameResult(gold, swapped, false)).toBe(true);
    expect(sameResult(gold, swapped, true)).toBe(false);
    expect(
      sameResult(
        gold,
        result([
          ["a", 1],
          ["b", 2],
        ]),
        true,
      ),
    ).toBe(true);
  });

  it("counts duplicates and rows", () => {
    const gold = result([["a"], ["a"], ["b"]]);
    expect(sameResult(gold, result([["a"], ["b"], ["a"]]), false)).toBe(true);
    expect(sameResult(gold, result([["a"], ["b"], ["b"]]), false)).toBe(false);
    expect(sameResult(gold, result([["a"], ["b"]]), false)).toBe(false);
    expect(sameResult(result([], 1), result([], 1), false)).toBe(true);
  });

  it("compares numbers by value, but not numbers with text", () => {
    const [one, onePointZero] = [
      runQuery(shop(), "SELECT 1"),
      runQuery(shop(), "SELECT CAST(1 AS REAL)"),
    ];
    if (!one.ok || !onePointZero.ok) throw new Error("query failed");
    expect(sameResult(one.result, onePointZero.result, false)).toBe(true);
    expect(sameResult(result([[0.1 + 0.2]]), result([[0.3]]), false)).toBe(true);
    expect(sameResult(result([[0.3]]), result([[0.31]]), false)).toBe(false);
    expect(sameResult(result([[1]]), result([["1"]]), false)).toBe(false);
    expect(sameResult(result([[null]]), result([[0]]), false)).toBe(false);
    expect(sameResult(result([[null]]), result([[null]]), false)).toBe(true);
  });

  it("needs the same number of columns, in any order", () => {
    const gold = result([
      ["a", 1],
      ["b", 2],
    ]);
    expect(
      sameResult(
        gold,
        result([
          [1, "a"],
          [2, "b"],
        ]),
        true,
      ),
    ).toBe(true);
    expect(
      sameResult(
        gold,
        result([
          [1, "a"],
          ["b", 2],
        ]),
        false,
      ),
    ).toBe(false);
    expect(sameResult(gold, result([["a"], ["b"]]), false)).toBe(false);
    expect(
      sameResult(
        gold,
        result([
          ["a", 1, 1],
          ["b", 2, 2],
        ]),
        false,
      ),
    ).toBe(false);
  });

  it("finds ORDER BY only in the outermost query", () => {
    expect(hasOuterOrderBy("SELECT a FROM t ORDER BY a DESC LIMIT 3")).toBe(true);
    expect(hasOuterOrderBy("SELECT MAX(x) FROM (SELECT x FROM t ORDER BY x)")).toBe(false);
    expect(hasOuterOrderBy("SELECT order_date FROM orders WHERE s = 'ORDER BY'")).toBe(false);
  });

  it("judges answers through the env: order, columns and aliases", async () => {
    const ordered = findTask((t) => t.template === "shop.category-price-list");
    const category = /'(\w+)' category/.exec(generateTask(ordered).question)?.[1];
    const base = `SELECT name AS n, price AS p FROM products WHERE category = '${category}'`;
    expect((await answer(ordered, `${base} ORDER BY price DESC`)).reward).toBe(1);
    expect((await answer(ordered, `${base} ORDER BY price ASC`)).reward).toBe(0);
    const wrong = await answer(ordered, `SELECT name FROM products WHERE category = '${category}'`);
    expect(wrong).toMatchObject({ reward: 0, done: true, info: { success: false } });
    expect(wrong.observation.text).toContain("1 column; the expected result has");

    const unordered = findTask((t) => t.template === "shop.customers-in-city");
    const city = /live in (\w+)\?/.exec(generateTask(unordered).question)?.[1];
    const count = `SELECT COUNT(id) AS how_many FROM customers WHERE city = '${city}'`;
    const right = await answer(unordered, count);
    expect(right).toMatchObject({ reward: 1, done: true, info: { success: true } });
    expect(right.observation.text).toContain("correct");
  });

  it("ignores row order for unordered questions with several rows", async () => {
    let index = -1;
    for (let i = 0; index < 0; i++) {
      const candidate = generateTask(i);
      if (!candidate.ordered && (await goldResult(candidate)).rows.length > 2) index = i;
    }
    const task = generateTask(index);
    const reversed = `SELECT * FROM (${task.gold}) ORDER BY 1 DESC`;
    expect((await answer(index, reversed)).reward).toBe(1);
    expect((await answer(index, `${task.gold} LIMIT 1`)).reward).toBe(0);
  });
});

describe("sql value-building functions", () => {
  it("caps blobs built from nothing, which could stall the process for seconds", () => {
    const shop = loadDatabase("shop");
    const started = performance.now();
    const huge = runQuery(shop, "SELECT sum(length(hex(randomblob(10000000)))) FROM order_items");
    expect(huge).toMatchObject({ ok: false, error: expect.stringMatching(/blobs are limited/) });
    expect(runQuery(shop, "SELECT length(zeroblob(100000000))")).toMatchObject({ ok: false });
    expect(performance.now() - started).toBeLessThan(1000);
    expect(runQuery(shop, "SELECT length(randomblob(16)), hex(zeroblob(2))")).toMatchObject({
      ok: true,
      result: { rows: [[16, "0000"]] },
    });
  });

  it("refuses printf widths that build huge text, and keeps ordinary printf", () => {
    const shop = loadDatabase("shop");
    for (const sql of ["SELECT printf('%.100000000c', 'x')", "SELECT format('%*d', 99999999, 1)"]) {
      expect(runQuery(shop, sql)).toMatchObject({ ok: false, error: expect.stringMatching(/999/) });
    }
    expect(runQuery(shop, "SELECT printf('%5.2f items', 3.14159)")).toMatchObject({
      ok: true,
      result: { rows: [[" 3.14 items"]] },
    });
  });
});

describe("sql query guards", () => {
  const refused = [
    "INSERT INTO customers (name, city, signup_date) VALUES ('X', 'Y', '2024-01-01')",
    "UPDATE products SET price = 0",
    "DELETE FROM orders",
    "DROP TABLE customers",
    "CREATE TABLE t (x)",
    "CREATE TEMP TABLE t (x)",
    "ALTER TABLE customers ADD COLUMN x",
    "PRAGMA query_only = 0",
    "PRAGMA journal_mode = WAL",
    "PRAGMA writable_schema = 1",
    "/* hidden */ PRAGMA query_only = OFF",
    "EXPLAIN PRAGMA query_only = 0",
    "SELECT 1; PRAGMA query_only = 0",
    "ATTACH ':memory:' AS other",
    "DETACH main",
    "BEGIN",
    "VACUUM",
    "WITH x AS (SELECT 1) DELETE FROM orders",
    "REPLACE INTO products (id, name, category, price, stock) VALUES (1, 'x', 'y', 1, 1)",
  ];

  it("refuses every statement that could change the database or the connection", () => {
    const counts = () =>
      ["customers", "products", "orders"].map(
        (t) => shop().connection.prepare(`SELECT COUNT(*) AS n FROM ${t}`).get() as { n: number },
      );
    const before = counts();
    for (const sql of refused) {
      const outcome = runQuery(shop(), sql);
      expect(outcome.ok, sql).toBe(false);
    }
    expect(counts()).toEqual(before);
    expect(shop().connection.pragma("query_only", { simple: true })).toBe(1);
    // Writes stay refused by SQLite itself too: the connection is query_only.
    expect(() => shop().connection.prepare("DELETE FROM orders").run()).toThrow(/readonly/);
  });

  it("reports refusals and SQL errors as observations, and the episode goes on", async () => {
    const env = sqlEnv.create();
    await env.reset(0);
    const drop = await env.step("query: DROP TABLE customers");
    expect(drop).toMatchObject({ reward: 0, done: false });
    expect(drop.observation.text).toContain("DROP statements are not allowed");
    const typo = await env.step("query: SELEC * FROM customers");
    expect(typo.observation.text).toContain('near "selec": syntax error');
    const missing = await env.step("query: SELECT nope FROM customers");
    expect(missing.observation.text).toContain("Error: no such column: nope");
    const badAnswer = await env.step("answer: SELECT * FROM no_such_table");
    expect(badAnswer).toMatchObject({ done: false, info: { kind: "answer", invalid: true } });
    expect(badAnswer.observation.text).toContain("could not be run: no such table");
    const schema = await env.step("query: PRAGMA table_info(customers)");
    expect(schema.observation.text).toContain("signup_date");
    expect(schema.info).toMatchObject({ kind: "query", rows: 4 });
  });

  it("caps rows and shows at most 20 of them", () => {
    const outcome = runQuery(shop(), "SELECT * FROM order_items a, order_items b");
    if (!outcome.ok) throw new Error(outcome.error);
    expect(outcome.result.rows.length).toBe(MAX_ROWS);
    expect(outcome.result.truncated).toBe(true);
  });

  it("tells the agent when results are cut", async () => {
    const env = sqlEnv.create();
    await env.reset(0);
    const big = await env.step("query: SELECT * FROM order_items a, order_items b");
    expect(big.info).toMatchObject({ rows: MAX_ROWS, truncated: true });
    expect(big.observation.text).toContain(`stopped after ${MAX_ROWS} rows`);
    const lines = big.observation.text.split("\n").filter((line) => line.includes(" | "));
    expect(lines.length).toBe(SHOWN_ROWS + 1); // header and 20 rows
  });

  it("refuses runaway joins and recursive queries before running them", () => {
    const runaway = [
      "SELECT COUNT(*) FROM order_items a, order_items b, order_items c",
      "SELECT COUNT(*) FROM orders a JOIN orders b JOIN orders c JOIN orders d",
      "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT COUNT(*) FROM n",
      "WITH n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT MAX(x) FROM n",
    ];
    const started = Date.now();
    for (const sql of runaway) {
      const outcome = runQuery(shop(), sql);
      expect(outcome.ok, sql).toBe(false);
      if (!outcome.ok) expect(outcome.error).toContain("too long");
    }
    expect(Date.now() - started).toBeLessThan(1000);
    // Joined on keys, the same tables are fine.
    const joined = runQuery(
      shop(),
      "SELECT COUNT(*) FROM order_items a JOIN orders o ON o.id = a.order_id " +
        "JOIN customers c ON c.id = o.customer_id",
    );
    expect(joined.ok).toBe(true);
  });
});

/**
 * Queries that the plan cost estimate lets through but that SQLite takes long over: a self-join
 * of json_each over a built string (about 30 s in-process), and a string of hundreds of
 * megabytes built per row (more than 100 s in-process). Both once froze `clade serve-env`.
 */
const HOSTILE_QUERIES = {
  jsonEachJoin:
    "SELECT count(*) FROM json_each('[' || replace(hex(zeroblob(10000)), '00', '1,') || '1]') a " +
    "JOIN json_each('[' || replace(hex(zeroblob(10000)), '00', '1,') || '1]') b " +
    "WHERE a.value + b.value > 1 AND length(a.key || b.key) > 0",
  hugeTextPerRow:
    "SELECT length(replace(hex(zeroblob(10000)), '0', hex(zeroblob(9999 + id % 2)))) FROM orders",
};

describe("sql hostile queries", () => {
  it("stops each within its deadline with an error, and the episode goes on", async () => {
    const env = sqlEnv.create();
    await env.reset(0); // shop
    for (const [name, sql] of Object.entries(HOSTILE_QUERIES)) {
      const started = performance.now();
      const result = await env.step(`query: ${sql}`);
      const elapsed = performance.now() - started;
      expect(elapsed, name).toBeLessThan(6_000);
      expect(result, name).toMatchObject({ done: false, info: { kind: "query" } });
      expect(result.info.error, name).toEqual(expect.any(String));
      // Killed at the deadline, or (where the child's memory is limited) out of memory sooner.
      expect(result.observation.text, name).toMatch(
        new RegExp(`longer than ${QUERY_TIME_LIMIT_MS / 1000} s and was stopped|out of memory`),
      );
      const next = await env.step("query: SELECT COUNT(*) AS n FROM customers");
      expect(next.info, name).toMatchObject({ kind: "query", rows: 1 });
      expect(next.observation.text).toMatch(/Result \(1 row\):\nn\n\d+/);
    }
    await env.close?.();
  });

  it("stops a hostile answer the same way: an invalid answer, not the end", async () => {
    const env = sqlEnv.create();
    await env.reset(5); // shop
    const started = performance.now();
    const result = await env.step(`answer: ${HOSTILE_QUERIES.jsonEachJoin}`);
    expect(performance.now() - started).toBeLessThan(6_000);
    expect(result).toMatchObject({ done: false, info: { kind: "answer", invalid: true } });
    expect(result.observation.text).toContain("and was stopped");
    const right = await env.step(`answer: ${generateTask(5).gold}`);
    expect(right).toMatchObject({ reward: 1, done: true });
  });

  it("caps a result's size as well as its rows", () => {
    const wide = runQuery(shop(), "SELECT hex(zeroblob(10000)) FROM order_items a, order_items b");
    if (!wide.ok) throw new Error(wide.error);
    expect(wide.result.truncated).toBe(true);
    expect(wide.result.rows.length).toBe(MAX_RESULT_BYTES / 20_000);
    const huge = runQuery(shop(), "SELECT replace(hex(zeroblob(10000)), '0', hex(zeroblob(300)))");
    expect(huge).toMatchObject({ ok: false, error: expect.stringMatching(/larger than 8 MB/) });
  });
});

describe("sql actions and rules", () => {
  it("parses both actions, tolerating case, fences, semicolons and an Action: prefix", () => {
    expect(parseAction("query: SELECT 1")).toEqual({ kind: "query", sql: "SELECT 1" });
    expect(parseAction("  ANSWER:SELECT 1;  ")).toEqual({ kind: "answer", sql: "SELECT 1" });
    expect(parseAction("Action: answer: SELECT 2")).toEqual({ kind: "answer", sql: "SELECT 2" });
    expect(parseAction("query: ```sql\nSELECT 3;\n```")).toEqual({
      kind: "query",
      sql: "SELECT 3",
    });
    expect(parseAction("```\nanswer: SELECT 4\n```")).toEqual({ kind: "answer", sql: "SELECT 4" });
    expect(parseAction("`query: SELECT 5`")).toEqual({ kind: "query", sql: "SELECT 5" });
    expect(parseAction("query:")).toEqual({ kind: "query", sql: "" });
    for (const text of ["SELECT 1", "run: SELECT 1", "", "queryx: SELECT 1"]) {
      expect(parseAction(text), text).toBeUndefined();
    }
  });

  it("explains invalid actions without throwing, counting them as steps", async () => {
    const env = sqlEnv.create();
    await env.reset(5);
    const garbage = [
      "",
      "SELECT * FROM customers",
      '{"action": "query", "sql": "SELECT 1"}',
      "ответ: SELECT 1",
      `query ${"x".repeat(1_000_000)}`,
      "query:   ;;; ",
    ];
    for (const [i, action] of garbage.entries()) {
      const result = await env.step(action);
      expect(result).toMatchObject({ reward: 0, done: false, info: { invalid: true } });
      expect(result.observation.text.length).toBeLessThan(400);
      expect(result.observation.text).toContain(`You have ${info.maxSteps - i - 1} actions left`);
    }
    const huge = await env.step(`query: SELECT '${"y".repeat(1_000_000)}'`);
    expect(huge.done).toBe(false);
    expect(huge.observation.text).toContain("longer than");
    expect(huge.observation.text.length).toBeLessThan(400);
  });

  it("ends at the step limit and then throws EpisodeDoneError", async () => {
    const env = sqlEnv.create();
    await env.reset(8);
    for (let step = 1; step < info.maxSteps; step++) {
      expect((await env.step("query: SELECT 1")).done).toBe(false);
    }
    const last = await env.step("query: SELECT 1");
    expect(last).toMatchObject({ reward: 0, done: true, info: { success: false, steps: 10 } });
    expect(last.observation.text).toContain("used all 10 actions");
    await expect(env.step("query: SELECT 1")).rejects.toBeInstanceOf(EpisodeDoneError);
  });

  it("ends the episode on an answer, right or wrong", async () => {
    const env = sqlEnv.create();
    await env.reset(9);
    const wrong = await env.step("answer: SELECT 'nothing'");
    expect(wrong).toMatchObject({ reward: 0, done: true, info: { success: false } });
    await expect(env.step("answer: SELECT 1")).rejects.toBeInstanceOf(EpisodeDoneError);
    await env.reset(9);
    const right = await env.step(`answer: ${generateTask(9).gold}`);
    expect(right).toMatchObject({ reward: 1, done: true, info: { success: true, steps: 1 } });
  });
});

describe("sql determinism", () => {
  const actions = ["query: SELECT * FROM customers LIMIT 2", "hello", "query: SELECT 1 + 1"];

  it("repeats the same observations for the same index and seed", async () => {
    expect(await transcript(17, 3, actions)).toEqual(await transcript(17, 3, actions));
  });

  it("differs across indices", async () => {
    const firsts = new Set<string>();
    for (let index = 0; index < 100; index++) firsts.add((await transcript(index, 0, []))[0] ?? "");
    expect(firsts.size).toBe(100);
  });
});

describe("sql reference solver", () => {
  it("solves every test task for seed 0 and three other seeds", async () => {
    for (const seed of [0, 1, 7, 99991]) {
      const failures: number[] = [];
      for (let index = info.splits.test.start; index < info.splits.test.end; index++) {
        const { reward } = await runReferenceEpisode(sqlEnv, solveSql, index, seed);
        if (reward < info.successThreshold) failures.push(index);
      }
      expect(failures, `seed ${seed}`).toEqual([]);
    }
  });

  it("solves train tasks in two steps with AgentGym-style messages", async () => {
    for (const index of [100, 233, 378, 499]) {
      const { reward, steps } = await runReferenceEpisode(sqlEnv, solveSql, index, 4);
      const reply = steps.at(-1);
      expect(reward).toBe(1);
      expect(steps.length).toBe(2);
      expect(reply?.action).toMatch(/^answer: SELECT /);
      expect(reply?.message).toMatch(/^Thought: .+\n\nAction: answer: SELECT /);
    }
  });
});

describe("sql sampleAction", () => {
  it("draws well-formed queries and answers the env accepts", async () => {
    const env = sqlEnv.create();
    let observation = await env.reset(0);
    let state = 7;
    const random = () => {
      state = (state * 48271) % 2147483647;
      return state / 2147483647;
    };
    const drawn = new Set<string>();
    let invalid = 0;
    for (let i = 0; i < 300; i++) {
      const action = sqlEnv.sampleAction(random, observation);
      const result = await env.step(action);
      drawn.add(action.split(" ")[0] ?? "");
      if (result.info.invalid || result.info.error) invalid++;
      observation = result.done ? await env.reset(i % 100) : result.observation;
    }
    expect(invalid).toBe(0);
    expect([...drawn].sort()).toEqual(["answer:", "query:"]);
  });
});
