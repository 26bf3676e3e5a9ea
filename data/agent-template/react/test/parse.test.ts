import assert from "node:assert/strict";
import { test } from "node:test";
import { parseAction } from "../src/parse.ts";

test("takes the line after the last Action:", () => {
  const reply = "Thought:\nI should go up.\n\nAction:\nmove up";
  assert.deepEqual(parseAction(reply), { ok: true, action: "move up" });
});

test("takes the action on the Action: line itself", () => {
  assert.deepEqual(parseAction("Thought: go.\nAction: move left"), {
    ok: true,
    action: "move left",
  });
});

test("uses the last Action: when there are several, and its first line only", () => {
  const reply = "Action:\nmove up\n\nThought:\nNo, wait.\n\nAction:\n  move down  \nmore text";
  assert.deepEqual(parseAction(reply), { ok: true, action: "move down" });
});

test("refuses a reply without Action: (case-sensitive)", () => {
  const result = parseAction("Thought:\nhmm\n\naction: move up");
  assert.equal(result.ok, false);
  assert.match(result.ok ? "" : result.error, /Action:/);
});

test("refuses an empty action", () => {
  assert.equal(parseAction("Thought:\nhmm\n\nAction:\n   ").ok, false);
});

test("checks the action against the available ones when given", () => {
  const available = ["move up", "move down"];
  assert.deepEqual(parseAction("Action: move up", available), { ok: true, action: "move up" });
  const result = parseAction("Action: fly", available);
  assert.equal(result.ok, false);
  assert.match(result.ok ? "" : result.error, /"fly" is not one of the available actions/);
  assert.deepEqual(parseAction("Action: fly", []), { ok: true, action: "fly" });
});
