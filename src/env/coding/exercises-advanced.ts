/**
 * Exercises of difficulty 4 and 5: data structures, parsers, graph and dynamic-programming
 * algorithms, and small interpreters.
 */
import { block, type Exercise, functionStub, returns, table, throws } from "./exercise.js";

/** A test body on a fresh cache of the given capacity. */
const cache = (capacity: number, ...statements: string[]) =>
  block(`const cache = new LRUCache(${capacity})`, ...statements);

const lruCache: Exercise = {
  id: "lru-cache",
  title: "LRU Cache",
  difficulty: 4,
  exports: ["LRUCache"],
  aliases: ["LruCache", "RecentCache"],
  statement: `Write and export a class LRUCache: a key-value cache holding at most capacity
entries (new LRUCache(capacity), capacity >= 1). Keys are compared like Map keys (1 and "1"
differ).
- get(key) returns the key's value and marks the key as most recently used, or returns undefined
  (changing nothing) when the key is absent.
- put(key, value) stores or replaces the value and marks the key as most recently used; when that
  leaves more than capacity entries, the least recently used entry is removed.
- has(key) tells whether the key is present, without marking it as used.
- the size property (a getter) is the number of entries.`,
  stub: `export class LRUCache {
  /** @param {number} capacity */
  constructor(capacity) {
    throw new Error("Not implemented yet");
  }

  /** @param {unknown} key */
  get(key) {
    throw new Error("Not implemented yet");
  }

  /** @param {unknown} key @param {unknown} value */
  put(key, value) {
    throw new Error("Not implemented yet");
  }

  /** @param {unknown} key @returns {boolean} */
  has(key) {
    throw new Error("Not implemented yet");
  }

  /** @returns {number} */
  get size() {
    throw new Error("Not implemented yet");
  }
}
`,
  solution: `export class LRUCache {
  #entries = new Map();

  constructor(capacity) {
    this.capacity = capacity;
  }

  get(key) {
    if (!this.#entries.has(key)) return undefined;
    const value = this.#entries.get(key);
    this.#entries.delete(key);
    this.#entries.set(key, value);
    return value;
  }

  put(key, value) {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    if (this.#entries.size > this.capacity) {
      this.#entries.delete(this.#entries.keys().next().value);
    }
  }

  has(key) {
    return this.#entries.has(key);
  }

  get size() {
    return this.#entries.size;
  }
}
`,
  visible: [
    returns(
      cache(2, 'cache.put("a", 1)', 'cache.put("b", 2)', 'return [cache.get("a"), cache.get("b")]'),
      [1, 2],
    ),
    returns(
      cache(
        2,
        'cache.put("a", 1)',
        'cache.put("b", 2)',
        'cache.put("c", 3)',
        'return [cache.has("a"), cache.has("b"), cache.has("c")]',
      ),
      [false, true, true],
    ),
    returns(
      cache(
        2,
        'cache.put("a", 1)',
        'cache.put("b", 2)',
        'cache.get("a")',
        'cache.put("c", 3)',
        'return [cache.has("a"), cache.has("b"), cache.has("c")]',
      ),
      [true, false, true],
    ),
  ],
  hidden: [
    returns(cache(2, 'return cache.get("x") === undefined'), true),
    returns(
      cache(
        2,
        'cache.put("a", 1)',
        'cache.put("b", 2)',
        'cache.put("a", 10)',
        'cache.put("c", 3)',
        'return [cache.get("a"), cache.has("b"), cache.get("c")]',
      ),
      [10, false, 3],
    ),
    returns(
      cache(
        2,
        'cache.put("a", 1)',
        'cache.put("b", 2)',
        'cache.has("a")',
        'cache.put("c", 3)',
        'return [cache.has("a"), cache.has("b")]',
      ),
      [false, true],
    ),
    returns(
      cache(
        3,
        'cache.put("a", 1)',
        'cache.put("b", 2)',
        'cache.put("a", 3)',
        'cache.put("c", 4)',
        'cache.put("d", 5)',
        'return [cache.size, cache.has("a"), cache.has("b")]',
      ),
      [3, true, false],
    ),
    returns(
      cache(1, 'cache.put("a", 1)', 'cache.put("b", 2)', 'return [cache.has("a"), cache.get("b")]'),
      [false, 2],
    ),
    returns(
      cache(
        2,
        "cache.put(1, { x: 1 })",
        "cache.put(2, [2])",
        "return [cache.get(1), cache.get(2)]",
      ),
      [{ x: 1 }, [2]],
    ),
    returns(
      cache(
        2,
        'cache.put(1, "num")',
        'cache.put("1", "str")',
        'return [cache.get(1), cache.get("1")]',
      ),
      ["num", "str"],
    ),
    returns(
      cache(
        3,
        "for (let i = 0; i < 100; i++) cache.put(i, i * i)",
        "return [cache.size, cache.get(99), cache.get(97), cache.has(96)]",
      ),
      [3, 9801, 9409, false],
    ),
    returns(
      cache(
        2,
        'cache.put("a", 1)',
        'cache.get("z")',
        'cache.put("b", 2)',
        'return [cache.has("a"), cache.has("b")]',
      ),
      [true, true],
    ),
    returns(
      cache(
        3,
        'cache.put("a", 1)',
        'cache.put("b", 2)',
        'cache.put("c", 3)',
        'cache.get("a")',
        'cache.get("b")',
        'cache.put("d", 4)',
        'return ["a", "b", "c", "d"].map((key) => cache.has(key))',
      ),
      [true, true, false, true],
    ),
    returns(cache(2, 'cache.put("z", 0)', 'return [cache.get("z"), cache.has("z")]'), [0, true]),
  ],
};

const INVALID = "invalid expression";

const expressionEvaluator: Exercise = {
  id: "expression-evaluator",
  title: "Expression Evaluator",
  difficulty: 4,
  exports: ["evaluateExpression"],
  aliases: ["calculate", "evalArithmetic"],
  statement: `Write evaluateExpression(text): evaluate an arithmetic expression and return its
value as a number. It may contain non-negative numbers (123 or 1.5), the binary operators + - *
and /, unary minus (-3, -(1 + 2), 2 * -3, --3), parentheses and whitespace. * and / bind tighter
than + and -, and operators of equal precedence group from the left (8 / 2 / 2 is 2). Division
is ordinary division (10 / 4 is 2.5). Throw an Error with the message "division by zero" when
dividing by 0, and "invalid expression" for anything malformed: empty input, unbalanced
parentheses, a missing operand, two numbers in a row, or any other character. Do not use eval
or Function.`,
  stub: functionStub("evaluateExpression(text)", "@param {string} text\n@returns {number}"),
  solution: String.raw`export function evaluateExpression(text) {
  const tokens = text.match(/\d+(?:\.\d+)?|\S/g) || [];
  let pos = 0;
  const fail = () => {
    throw new Error("invalid expression");
  };
  const peek = () => tokens[pos];

  function expression() {
    let value = term();
    while (peek() === "+" || peek() === "-") {
      const operator = tokens[pos++];
      const right = term();
      value = operator === "+" ? value + right : value - right;
    }
    return value;
  }

  function term() {
    let value = factor();
    while (peek() === "*" || peek() === "/") {
      const operator = tokens[pos++];
      const right = factor();
      if (operator === "*") value *= right;
      else {
        if (right === 0) throw new Error("division by zero");
        value /= right;
      }
    }
    return value;
  }

  function factor() {
    const token = tokens[pos++];
    if (token === undefined) fail();
    if (token === "-") return -factor();
    if (token === "(") {
      const value = expression();
      if (tokens[pos++] !== ")") fail();
      return value;
    }
    if (/^\d/.test(token)) return Number(token);
    return fail();
  }

  const value = expression();
  if (pos !== tokens.length) fail();
  return value;
}
`,
  visible: [
    ...table("evaluateExpression", [
      [["1 + 2 * 3"], 7],
      [["(1 + 2) * 3"], 9],
    ]),
    throws('evaluateExpression("1 +")', INVALID),
  ],
  hidden: [
    ...table("evaluateExpression", [
      [["10 / 4"], 2.5],
      [["2 * (3 + 4) - -1"], 15],
      [["-(2 + 3)"], -5],
      [["8 / 2 / 2"], 2],
      [["2 - 3 - 4"], -5],
      [["1.5 * 4"], 6],
      [["((7))"], 7],
      [["3 + 4 * 2 / (1 - 5)"], 1],
      [["--3"], 3],
      [["2*-3"], -6],
      [["-2 * -3"], 6],
      [["  42  "], 42],
    ]),
    throws('evaluateExpression("(1 + 2")', INVALID),
    throws('evaluateExpression("1 + 2)")', INVALID),
    throws('evaluateExpression("")', INVALID),
    throws('evaluateExpression("2 $ 3")', INVALID),
    throws('evaluateExpression("1 2")', INVALID),
    throws('evaluateExpression("()")', INVALID),
    throws('evaluateExpression("4 / (2 - 2)")', "division by zero"),
  ],
};

const sayNumber: Exercise = {
  id: "say-number",
  title: "Say a Number",
  difficulty: 4,
  exports: ["sayNumber"],
  aliases: ["numberToWords", "spellNumber"],
  statement: `Write sayNumber(n): spell out an integer from 0 to 999,999,999,999 in English words,
in lower case: "zero", "fourteen", "twenty-two" (tens and units joined by a hyphen),
"one hundred twenty-three", "one thousand two hundred thirty-four", "one million two thousand
three hundred forty-five", "one billion". Groups of three digits are named billion, million and
thousand; zero groups are skipped; no "and" and no commas. Throw an Error with the message
"input out of range" for anything outside 0 to 999,999,999,999 (or not an integer).`,
  stub: functionStub("sayNumber(n)", "@param {number} n\n@returns {string}"),
  solution: `const SMALL = [
  "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
  "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
  "nineteen",
];
const TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"];
const SCALES = [[1e9, "billion"], [1e6, "million"], [1e3, "thousand"]];

function belowThousand(n) {
  const words = [];
  if (n >= 100) {
    words.push(SMALL[Math.floor(n / 100)], "hundred");
    n %= 100;
  }
  if (n >= 20) {
    words.push(TENS[Math.floor(n / 10)] + (n % 10 ? "-" + SMALL[n % 10] : ""));
  } else if (n > 0) {
    words.push(SMALL[n]);
  }
  return words.join(" ");
}

export function sayNumber(n) {
  if (!Number.isInteger(n) || n < 0 || n > 999999999999) throw new Error("input out of range");
  if (n === 0) return "zero";
  const parts = [];
  for (const [size, name] of SCALES) {
    const group = Math.floor(n / size);
    if (group > 0) parts.push(belowThousand(group) + " " + name);
    n %= size;
  }
  if (n > 0) parts.push(belowThousand(n));
  return parts.join(" ");
}
`,
  visible: table("sayNumber", [
    [[0], "zero"],
    [[14], "fourteen"],
    [[22], "twenty-two"],
  ]),
  hidden: [
    ...table("sayNumber", [
      [[1], "one"],
      [[20], "twenty"],
      [[99], "ninety-nine"],
      [[100], "one hundred"],
      [[123], "one hundred twenty-three"],
      [[200], "two hundred"],
      [[999], "nine hundred ninety-nine"],
      [[1000], "one thousand"],
      [[1234], "one thousand two hundred thirty-four"],
      [[40015], "forty thousand fifteen"],
      [[1000000], "one million"],
      [[1002345], "one million two thousand three hundred forty-five"],
      [[1000000000], "one billion"],
      [
        [987654321123],
        "nine hundred eighty-seven billion six hundred fifty-four million three hundred " +
          "twenty-one thousand one hundred twenty-three",
      ],
    ]),
    throws("sayNumber(-1)", "input out of range"),
    throws("sayNumber(1000000000000)", "input out of range"),
  ],
};

const UNREACHABLE = "can't make target with given coins";

const coinChange: Exercise = {
  id: "coin-change",
  title: "Coin Change",
  difficulty: 4,
  exports: ["fewestCoins"],
  aliases: ["makeChange", "minimumCoins"],
  statement: `Write fewestCoins(coins, target): coins lists distinct positive coin values in
ascending order, each available any number of times. Return the fewest coins that add up to
target (an integer), sorted ascending; target 0 gives []. Greedy choice is not always optimal
(with coins [1, 3, 4], 6 is [3, 3]). The tests only use targets with a single fewest-coin
combination. Throw an Error "target can't be negative" for a negative target and
"${UNREACHABLE}" when no combination adds up to target.`,
  stub: functionStub(
    "fewestCoins(coins, target)",
    "@param {number[]} coins\n@param {number} target\n@returns {number[]}",
  ),
  solution: `export function fewestCoins(coins, target) {
  if (target < 0) throw new Error("target can't be negative");
  const best = [[]];
  for (let amount = 1; amount <= target; amount++) {
    let choice = null;
    for (const coin of coins) {
      const rest = coin <= amount ? best[amount - coin] : null;
      if (rest && (choice === null || rest.length + 1 < choice.length)) choice = [...rest, coin];
    }
    best[amount] = choice;
  }
  if (!best[target]) throw new Error("can't make target with given coins");
  return best[target].slice().sort((a, b) => a - b);
}
`,
  visible: [
    ...table("fewestCoins", [
      [[[1, 5, 10, 25, 100], 25], [25]],
      [
        [[1, 5, 10, 25, 100], 15],
        [5, 10],
      ],
    ]),
    throws("fewestCoins([5, 10], 3)", UNREACHABLE),
  ],
  hidden: [
    ...table("fewestCoins", [
      [
        [[1, 5, 10, 21, 25], 63],
        [21, 21, 21],
      ],
      [
        [[1, 2, 5, 10, 20, 50, 100], 999],
        [2, 2, 5, 20, 20, 50, 100, 100, 100, 100, 100, 100, 100, 100, 100],
      ],
      [
        [[2, 5, 10, 20, 50], 21],
        [2, 2, 2, 5, 10],
      ],
      [
        [[4, 5], 27],
        [4, 4, 4, 5, 5, 5],
      ],
      [
        [[1, 4, 15, 20, 50], 23],
        [4, 4, 15],
      ],
      [[[1, 5, 10, 25], 0], []],
      [
        [[1, 3, 4], 6],
        [3, 3],
      ],
      [
        [[1, 10, 25], 30],
        [10, 10, 10],
      ],
      [
        [[2, 3], 7],
        [2, 2, 3],
      ],
    ]),
    throws("fewestCoins([1, 2, 5], -5)", "target can't be negative"),
    throws("fewestCoins([5, 10], 94)", UNREACHABLE),
  ],
};

const topologicalOrder: Exercise = {
  id: "topological-order",
  title: "Task Ordering",
  difficulty: 4,
  exports: ["buildOrder"],
  aliases: ["scheduleTasks", "orderTasks"],
  statement: `Write buildOrder(tasks, dependencies): tasks is an array of distinct task names and
dependencies an array of pairs [before, after], meaning before must come earlier than after.
Return all tasks in an order that respects every dependency. Whenever several tasks could come
next, take the alphabetically smallest (compare strings with < ), so the answer is unique.
Throw an Error "unknown task: X" when a dependency names a task X not in tasks (check all pairs,
in order, before ordering), and "cycle detected" when no valid order exists.`,
  stub: functionStub(
    "buildOrder(tasks, dependencies)",
    "@param {string[]} tasks\n@param {[string, string][]} dependencies\n@returns {string[]}",
  ),
  solution: `export function buildOrder(tasks, dependencies) {
  const known = new Set(tasks);
  const incoming = new Map(tasks.map((task) => [task, 0]));
  const next = new Map(tasks.map((task) => [task, []]));
  for (const [before, after] of dependencies) {
    for (const task of [before, after]) {
      if (!known.has(task)) throw new Error("unknown task: " + task);
    }
    next.get(before).push(after);
    incoming.set(after, incoming.get(after) + 1);
  }
  const ready = tasks.filter((task) => incoming.get(task) === 0);
  const order = [];
  while (ready.length > 0) {
    ready.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const task = ready.shift();
    order.push(task);
    for (const after of next.get(task)) {
      incoming.set(after, incoming.get(after) - 1);
      if (incoming.get(after) === 0) ready.push(after);
    }
  }
  if (order.length !== tasks.length) throw new Error("cycle detected");
  return order;
}
`,
  visible: [
    ...table("buildOrder", [
      [
        [["a", "b", "c"], []],
        ["a", "b", "c"],
      ],
      [
        [
          ["wash", "dry", "fold"],
          [
            ["wash", "dry"],
            ["dry", "fold"],
          ],
        ],
        ["wash", "dry", "fold"],
      ],
    ]),
    throws('buildOrder(["a", "b"], [["a", "b"], ["b", "a"]])', "cycle detected"),
  ],
  hidden: [
    ...table("buildOrder", [
      [
        [["c", "b", "a"], []],
        ["a", "b", "c"],
      ],
      [
        [
          ["shoes", "socks", "pants", "shirt", "belt"],
          [
            ["socks", "shoes"],
            ["pants", "shoes"],
            ["pants", "belt"],
            ["shirt", "belt"],
          ],
        ],
        ["pants", "shirt", "belt", "socks", "shoes"],
      ],
      [[["x"], []], ["x"]],
      [[[], []], []],
      [
        [
          ["a", "b", "c", "d"],
          [
            ["d", "a"],
            ["c", "a"],
            ["b", "d"],
          ],
        ],
        ["b", "c", "d", "a"],
      ],
      [
        [
          ["a", "b"],
          [
            ["a", "b"],
            ["a", "b"],
          ],
        ],
        ["a", "b"],
      ],
    ]),
    throws('buildOrder(["a"], [["a", "a"]])', "cycle detected"),
    throws('buildOrder(["a", "b", "c"], [["a", "b"], ["b", "c"], ["c", "a"]])', "cycle detected"),
    throws('buildOrder(["a", "b", "c", "d"], [["b", "c"], ["c", "b"]])', "cycle detected"),
    throws('buildOrder(["a"], [["a", "z"]])', "unknown task: z"),
  ],
};

const editDistance: Exercise = {
  id: "edit-distance",
  title: "Edit Distance",
  difficulty: 4,
  exports: ["editDistance"],
  aliases: ["levenshtein", "editCost"],
  statement: `Write editDistance(a, b): return the Levenshtein distance between the strings a and
b: the fewest single-character insertions, deletions and substitutions that turn a into b.
Characters are compared exactly (case matters). Strings have at most a few hundred characters.`,
  stub: functionStub(
    "editDistance(a, b)",
    "@param {string} a\n@param {string} b\n@returns {number}",
  ),
  solution: `export function editDistance(a, b) {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min(previous[j] + 1, current[j - 1] + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length];
}
`,
  visible: table("editDistance", [
    [["kitten", "sitting"], 3],
    [["", ""], 0],
    [["abc", ""], 3],
  ]),
  hidden: [
    ...table("editDistance", [
      [["flaw", "lawn"], 2],
      [["intention", "execution"], 5],
      [["same", "same"], 0],
      [["", "xyz"], 3],
      [["a", "b"], 1],
      [["ab", "ba"], 2],
      [["sunday", "saturday"], 3],
      [["book", "back"], 2],
      [["distance", "editing"], 5],
      [["Case", "case"], 1],
    ]),
    returns('editDistance("a".repeat(300), "b".repeat(300))', 300),
    returns('editDistance("ab".repeat(150), "ba".repeat(150))', 2),
  ],
};

const WEIGHTED = [
  ["a", "b", 4],
  ["a", "c", 2],
  ["b", "c", 1],
  ["b", "d", 5],
  ["c", "d", 8],
  ["c", "e", 10],
  ["d", "e", 2],
  ["d", "f", 6],
  ["e", "f", 2],
];

const shortestPath: Exercise = {
  id: "shortest-path",
  title: "Shortest Path",
  difficulty: 4,
  exports: ["shortestDistance"],
  aliases: ["dijkstraDistance", "cheapestRoute"],
  statement: `Write shortestDistance(edges, from, to): edges is an array of [u, v, weight] entries
describing undirected roads between the string-named places u and v, with non-negative integer
weights (there may be several roads between the same places). Return the smallest total weight
of a route from from to to, 0 when from equals to (even if that place has no roads), and -1 when
to cannot be reached.`,
  stub: functionStub(
    "shortestDistance(edges, from, to)",
    "@param {[string, string, number][]} edges\n@param {string} from\n@param {string} to\n" +
      "@returns {number}",
  ),
  solution: `export function shortestDistance(edges, from, to) {
  if (from === to) return 0;
  const roads = new Map();
  const link = (u, v, w) => {
    if (!roads.has(u)) roads.set(u, []);
    roads.get(u).push([v, w]);
  };
  for (const [u, v, w] of edges) {
    link(u, v, w);
    link(v, u, w);
  }
  const distance = new Map([[from, 0]]);
  const done = new Set();
  for (;;) {
    let place;
    let best = Infinity;
    for (const [candidate, d] of distance) {
      if (!done.has(candidate) && d < best) {
        best = d;
        place = candidate;
      }
    }
    if (place === undefined) return -1;
    if (place === to) return best;
    done.add(place);
    for (const [next, w] of roads.get(place) || []) {
      if (!distance.has(next) || best + w < distance.get(next)) distance.set(next, best + w);
    }
  }
}
`,
  visible: table("shortestDistance", [
    [
      [
        [
          ["a", "b", 1],
          ["b", "c", 2],
          ["a", "c", 5],
        ],
        "a",
        "c",
      ],
      3,
    ],
    [[[["a", "b", 1]], "a", "z"], -1],
    [[[], "x", "x"], 0],
  ]),
  hidden: [
    ...table("shortestDistance", [
      [[WEIGHTED, "a", "f"], 12],
      [[WEIGHTED, "f", "a"], 12],
      [[WEIGHTED, "b", "e"], 7],
      [
        [
          [
            ["a", "b", 1],
            ["b", "c", 1],
            ["c", "d", 1],
            ["a", "d", 10],
          ],
          "d",
          "a",
        ],
        3,
      ],
      [
        [
          [
            ["a", "b", 0],
            ["b", "c", 0],
          ],
          "a",
          "c",
        ],
        0,
      ],
      [[[["a", "b", 7]], "b", "a"], 7],
      [
        [
          [
            ["a", "b", 3],
            ["a", "b", 1],
          ],
          "a",
          "b",
        ],
        1,
      ],
      [
        [
          [
            ["a", "b", 1],
            ["c", "d", 1],
          ],
          "a",
          "d",
        ],
        -1,
      ],
      [
        [
          [
            ["s", "a", 7],
            ["s", "b", 2],
            ["b", "a", 3],
            ["a", "t", 1],
            ["b", "t", 9],
          ],
          "s",
          "t",
        ],
        6,
      ],
    ]),
    returns(
      block(
        "const edges = []",
        'for (let i = 0; i < 500; i++) edges.push(["n" + i, "n" + (i + 1), 1])',
        'edges.push(["n0", "n500", 600])',
        'return shortestDistance(edges, "n0", "n500")',
      ),
      500,
    ),
  ],
};

/** A standings line: the name padded to 30 characters, then right-aligned two-wide numbers. */
function standing(name: string, ...numbers: (number | string)[]): string {
  return `${name.padEnd(30)} | ${numbers.map((n) => String(n).padStart(2)).join(" | ")}`;
}

const HEADER = standing("Team", "MP", "W", "D", "L", "P");

const tournament: Exercise = {
  id: "tournament",
  title: "Tournament Table",
  difficulty: 4,
  exports: ["tallyTournament"],
  aliases: ["tournamentTable", "tallyResults"],
  statement: `Write tallyTournament(results): each string in results is a match "Home;Away;outcome",
where outcome is "win", "loss" or "draw" from the home team's point of view. A win is worth 3
points, a draw 1, a loss 0. Return the standings as an array of lines: first the header, then
one line per team sorted by points (highest first), ties broken by team name (alphabetically).
Every line is the name padded with spaces to 30 characters, then " | " and the columns matches
played, won, drawn, lost and points, each right-aligned in 2 characters and separated by " | ".
The header is exactly:
"${HEADER}"
and a team line looks like:
"${standing("Devastating Donkeys", 3, 2, 1, 0, 7)}"`,
  stub: functionStub("tallyTournament(results)", "@param {string[]} results\n@returns {string[]}"),
  solution: `const line = (name, numbers) =>
  name.padEnd(30) + " | " + numbers.map((n) => String(n).padStart(2)).join(" | ");

export function tallyTournament(results) {
  const teams = new Map();
  const team = (name) => {
    if (!teams.has(name)) teams.set(name, { name, played: 0, won: 0, drawn: 0, lost: 0 });
    return teams.get(name);
  };
  for (const result of results) {
    const [home, away, outcome] = result.split(";");
    const a = team(home);
    const b = team(away);
    a.played++;
    b.played++;
    if (outcome === "win") {
      a.won++;
      b.lost++;
    } else if (outcome === "loss") {
      a.lost++;
      b.won++;
    } else {
      a.drawn++;
      b.drawn++;
    }
  }
  const points = (t) => t.won * 3 + t.drawn;
  const rows = [...teams.values()].sort(
    (x, y) => points(y) - points(x) || (x.name < y.name ? -1 : x.name > y.name ? 1 : 0),
  );
  return [
    line("Team", ["MP", "W", "D", "L", "P"]),
    ...rows.map((t) => line(t.name, [t.played, t.won, t.drawn, t.lost, points(t)])),
  ];
}
`,
  visible: table("tallyTournament", [
    [[[]], [HEADER]],
    [
      [["Allegoric Alaskans;Blithering Badgers;win"]],
      [
        HEADER,
        standing("Allegoric Alaskans", 1, 1, 0, 0, 3),
        standing("Blithering Badgers", 1, 0, 0, 1, 0),
      ],
    ],
    [
      [["Allegoric Alaskans;Blithering Badgers;draw"]],
      [
        HEADER,
        standing("Allegoric Alaskans", 1, 0, 1, 0, 1),
        standing("Blithering Badgers", 1, 0, 1, 0, 1),
      ],
    ],
  ]),
  hidden: table("tallyTournament", [
    [
      [["Blithering Badgers;Allegoric Alaskans;loss"]],
      [
        HEADER,
        standing("Allegoric Alaskans", 1, 1, 0, 0, 3),
        standing("Blithering Badgers", 1, 0, 0, 1, 0),
      ],
    ],
    [
      [
        [
          "Allegoric Alaskans;Blithering Badgers;win",
          "Devastating Donkeys;Courageous Californians;draw",
          "Devastating Donkeys;Allegoric Alaskans;win",
          "Courageous Californians;Blithering Badgers;loss",
          "Blithering Badgers;Devastating Donkeys;loss",
          "Allegoric Alaskans;Courageous Californians;win",
        ],
      ],
      [
        HEADER,
        standing("Devastating Donkeys", 3, 2, 1, 0, 7),
        standing("Allegoric Alaskans", 3, 2, 0, 1, 6),
        standing("Blithering Badgers", 3, 1, 0, 2, 3),
        standing("Courageous Californians", 3, 0, 1, 2, 1),
      ],
    ],
    [
      [
        [
          "Courageous Californians;Blithering Badgers;win",
          "Allegoric Alaskans;Blithering Badgers;win",
        ],
      ],
      [
        HEADER,
        standing("Allegoric Alaskans", 1, 1, 0, 0, 3),
        standing("Courageous Californians", 1, 1, 0, 0, 3),
        standing("Blithering Badgers", 2, 0, 0, 2, 0),
      ],
    ],
    [
      [
        [
          "Allegoric Alaskans;Blithering Badgers;win",
          "Allegoric Alaskans;Blithering Badgers;win",
          "Allegoric Alaskans;Blithering Badgers;win",
          "Allegoric Alaskans;Blithering Badgers;win",
          "Blithering Badgers;Allegoric Alaskans;draw",
        ],
      ],
      [
        HEADER,
        standing("Allegoric Alaskans", 5, 4, 1, 0, 13),
        standing("Blithering Badgers", 5, 0, 1, 4, 1),
      ],
    ],
  ]),
};

/** A test body on a fresh queue. */
const queue = (...statements: string[]) =>
  block("const queue = new PriorityQueue()", ...statements);
const EMPTY_QUEUE = "queue is empty";

const priorityQueue: Exercise = {
  id: "priority-queue",
  title: "Priority Queue",
  difficulty: 4,
  exports: ["PriorityQueue"],
  aliases: ["TaskQueue", "MaxPriorityQueue"],
  statement: `Write and export a class PriorityQueue (new PriorityQueue(), initially empty).
- push(item, priority) adds an item of any type with a numeric priority.
- pop() removes and returns the item with the highest priority; among equal priorities, the one
  pushed first (first in, first out).
- peek() returns the item pop() would return, without removing it.
- the size property (a getter) is the number of items.
pop() and peek() on an empty queue throw an Error with the message "queue is empty". Queues may
hold tens of thousands of items, so keep push and pop fast (a binary heap works well).`,
  stub: `export class PriorityQueue {
  /** @param {unknown} item @param {number} priority */
  push(item, priority) {
    throw new Error("Not implemented yet");
  }

  /** @returns {unknown} */
  pop() {
    throw new Error("Not implemented yet");
  }

  /** @returns {unknown} */
  peek() {
    throw new Error("Not implemented yet");
  }

  /** @returns {number} */
  get size() {
    throw new Error("Not implemented yet");
  }
}
`,
  solution: `export class PriorityQueue {
  #heap = [];
  #pushed = 0;

  get size() {
    return this.#heap.length;
  }

  push(item, priority) {
    this.#heap.push({ item, priority, order: this.#pushed++ });
    let i = this.#heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.#before(i, parent)) break;
      this.#swap(i, parent);
      i = parent;
    }
  }

  peek() {
    if (this.#heap.length === 0) throw new Error("queue is empty");
    return this.#heap[0].item;
  }

  pop() {
    const top = this.peek();
    const last = this.#heap.pop();
    if (this.#heap.length > 0) {
      this.#heap[0] = last;
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        const right = left + 1;
        let best = i;
        if (left < this.#heap.length && this.#before(left, best)) best = left;
        if (right < this.#heap.length && this.#before(right, best)) best = right;
        if (best === i) break;
        this.#swap(i, best);
        i = best;
      }
    }
    return top;
  }

  #before(i, j) {
    const a = this.#heap[i];
    const b = this.#heap[j];
    return a.priority > b.priority || (a.priority === b.priority && a.order < b.order);
  }

  #swap(i, j) {
    [this.#heap[i], this.#heap[j]] = [this.#heap[j], this.#heap[i]];
  }
}
`,
  visible: [
    returns(
      queue(
        'queue.push("a", 1)',
        'queue.push("b", 3)',
        'queue.push("c", 2)',
        "return [queue.pop(), queue.pop(), queue.pop()]",
      ),
      ["b", "c", "a"],
    ),
    throws(queue("queue.pop()"), EMPTY_QUEUE),
    returns(
      queue(
        'queue.push("x", 1)',
        'queue.push("y", 1)',
        'queue.push("z", 1)',
        "return [queue.pop(), queue.pop(), queue.pop()]",
      ),
      ["x", "y", "z"],
    ),
  ],
  hidden: [
    returns(
      queue('queue.push("a", 5)', "return [queue.peek(), queue.size, queue.pop(), queue.size]"),
      ["a", 1, "a", 0],
    ),
    throws(queue("queue.peek()"), EMPTY_QUEUE),
    throws(queue('queue.push("a", 1)', "queue.pop()", "queue.pop()"), EMPTY_QUEUE),
    returns(
      queue(
        'queue.push("a", -1)',
        'queue.push("b", 0.5)',
        'queue.push("c", -3)',
        "return [queue.pop(), queue.pop(), queue.pop()]",
      ),
      ["b", "a", "c"],
    ),
    returns(
      queue(
        "const seen = []",
        'queue.push("a", 2)',
        'queue.push("b", 1)',
        "seen.push(queue.pop())",
        'queue.push("c", 3)',
        'queue.push("d", 2)',
        "seen.push(queue.pop(), queue.pop(), queue.pop())",
        "return seen",
      ),
      ["a", "c", "d", "b"],
    ),
    returns(
      queue(
        "const seen = []",
        'queue.push("a", 1)',
        'queue.push("b", 2)',
        'queue.push("c", 1)',
        "seen.push(queue.pop())",
        'queue.push("d", 1)',
        "seen.push(queue.pop(), queue.pop(), queue.pop())",
        "return seen",
      ),
      ["b", "a", "c", "d"],
    ),
    returns(
      queue(
        "queue.push(1, 1)",
        "queue.push(2, 2)",
        "queue.push(3, 3)",
        "queue.pop()",
        "return queue.size",
      ),
      2,
    ),
    returns(queue("queue.push({ id: 1 }, 1)", "return queue.pop()"), { id: 1 }),
    returns(
      queue(
        "for (let i = 0; i < 10; i++) queue.push(i, 0)",
        "const seen = []",
        "while (queue.size > 0) seen.push(queue.pop())",
        "return seen",
      ),
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    ),
    returns(
      queue(
        "for (let i = 0; i < 50000; i++) queue.push(i, i % 7)",
        "const first = [queue.pop(), queue.pop(), queue.pop()]",
        "let last",
        "while (queue.size > 0) last = queue.pop()",
        "return [first, last]",
      ),
      [[6, 13, 20], 49994],
    ),
  ],
};

/** A test body that rolls `rolls` on a fresh game, then runs `finish`. */
function bowl(rolls: number[], finish = "return game.score()"): string {
  return block(
    "const game = new BowlingGame()",
    `for (const pins of ${JSON.stringify(rolls)}) game.roll(pins)`,
    finish,
  );
}

const zeros = (count: number) => new Array<number>(count).fill(0);
const OVER = "Cannot roll after game is over";
const TOO_MANY = "Pin count exceeds pins on the lane";
const NOT_DONE = "Score cannot be taken until the end of the game";

const bowling: Exercise = {
  id: "bowling",
  title: "Bowling",
  difficulty: 5,
  exports: ["BowlingGame"],
  aliases: ["Bowling", "BowlingScore"],
  statement: `Write and export a class BowlingGame that scores ten-pin bowling.
- roll(pins) records a roll knocking down pins pins.
- score() returns the total score of a finished game.
A game has 10 frames. In a frame the player rolls until all 10 pins are down or two rolls are
made. A strike (10 on the first roll) scores 10 plus the next two rolls; a spare (10 over the
two rolls) scores 10 plus the next roll; otherwise a frame scores its pins. In the tenth frame a
strike earns two bonus rolls and a spare one bonus roll (pins are reset whenever all 10 are
down); the bonus rolls only count towards the tenth frame. A perfect game scores 300.
Throw an Error with the message:
- "Negative roll is invalid" for pins < 0;
- "${TOO_MANY}" when pins exceeds the pins left standing
  (10, or fewer after the first roll of a frame or of the bonus rolls);
- "${OVER}" for a roll after the game has ended;
- "${NOT_DONE}" when score() is called before the game has
  ended, bonus rolls included.`,
  stub: `export class BowlingGame {
  /** @param {number} pins */
  roll(pins) {
    throw new Error("Not implemented yet");
  }

  /** @returns {number} */
  score() {
    throw new Error("Not implemented yet");
  }
}
`,
  solution: `/** What the next roll faces: {over} or {standing} pins, from the rolls so far. */
function nextRoll(rolls) {
  let i = 0;
  for (let frame = 1; frame < 10; frame++) {
    if (i >= rolls.length) return { over: false, standing: 10 };
    if (rolls[i] === 10) {
      i += 1;
      continue;
    }
    if (i + 1 >= rolls.length) return { over: false, standing: 10 - rolls[i] };
    i += 2;
  }
  const tenth = rolls.slice(i);
  if (tenth.length === 0) return { over: false, standing: 10 };
  if (tenth.length === 1) return { over: false, standing: tenth[0] === 10 ? 10 : 10 - tenth[0] };
  if (tenth.length === 2) {
    if (tenth[0] === 10) return { over: false, standing: tenth[1] === 10 ? 10 : 10 - tenth[1] };
    if (tenth[0] + tenth[1] === 10) return { over: false, standing: 10 };
  }
  return { over: true, standing: 0 };
}

export class BowlingGame {
  #rolls = [];

  roll(pins) {
    if (pins < 0) throw new Error("Negative roll is invalid");
    const next = nextRoll(this.#rolls);
    if (next.over) throw new Error("Cannot roll after game is over");
    if (pins > next.standing) throw new Error("Pin count exceeds pins on the lane");
    this.#rolls.push(pins);
  }

  score() {
    if (!nextRoll(this.#rolls).over) {
      throw new Error("Score cannot be taken until the end of the game");
    }
    const r = this.#rolls;
    let total = 0;
    let i = 0;
    for (let frame = 0; frame < 10; frame++) {
      if (r[i] === 10) {
        total += 10 + r[i + 1] + r[i + 2];
        i += 1;
      } else if (r[i] + r[i + 1] === 10) {
        total += 10 + r[i + 2];
        i += 2;
      } else {
        total += r[i] + r[i + 1];
        i += 2;
      }
    }
    return total;
  }
}
`,
  visible: [
    returns(bowl(zeros(20)), 0),
    returns(bowl([3, 6, 3, 6, 3, 6, 3, 6, 3, 6, 3, 6, 3, 6, 3, 6, 3, 6, 3, 6]), 90),
    returns(bowl(new Array<number>(12).fill(10)), 300),
  ],
  hidden: [
    returns(bowl([6, 4, ...zeros(18)]), 10),
    returns(bowl([6, 4, 3, 0, ...zeros(16)]), 16),
    returns(bowl([5, 5, 3, 7, 4, 0, ...zeros(14)]), 31),
    returns(bowl([...zeros(18), 7, 3, 7]), 17),
    returns(bowl([10, ...zeros(18)]), 10),
    returns(bowl([10, 5, 3, ...zeros(16)]), 26),
    returns(bowl([10, 10, 10, 5, 3, ...zeros(12)]), 81),
    returns(bowl([...zeros(18), 10, 7, 1]), 18),
    returns(bowl([...zeros(18), 10, 7, 3]), 20),
    returns(bowl([...zeros(18), 10, 10, 10]), 30),
    returns(bowl([...zeros(16), 10, 10, 0, 1]), 31),
    returns(bowl([...zeros(18), 7, 3, 10]), 20),
    returns(bowl([...zeros(18), 10, 10, 6]), 26),
    throws(bowl([], "game.roll(-1)"), "Negative roll is invalid"),
    throws(bowl([], "game.roll(11)"), TOO_MANY),
    throws(bowl([5], "game.roll(6)"), TOO_MANY),
    throws(bowl([...zeros(18), 10], "game.roll(11)"), TOO_MANY),
    throws(bowl([...zeros(18), 10, 5], "game.roll(6)"), TOO_MANY),
    throws(bowl([...zeros(18), 10, 6], "game.roll(10)"), TOO_MANY),
    throws(bowl([]), NOT_DONE),
    throws(bowl([0, 0]), NOT_DONE),
    throws(bowl([...zeros(18), 10]), NOT_DONE),
    throws(bowl([...zeros(18), 10, 10]), NOT_DONE),
    throws(bowl([...zeros(18), 7, 3]), NOT_DONE),
    throws(bowl(zeros(20), "game.roll(0)"), OVER),
    throws(bowl([...zeros(18), 7, 3, 2], "game.roll(2)"), OVER),
    throws(bowl([...zeros(18), 10, 3, 2], "game.roll(2)"), OVER),
  ],
};

const patternMatcher: Exercise = {
  id: "pattern-matcher",
  title: "Pattern Matcher",
  difficulty: 5,
  exports: ["matchPattern"],
  aliases: ["regexMatch", "matchesPattern"],
  statement: `Write matchPattern(pattern, text): a tiny regular-expression matcher (do not use
RegExp). The pattern is a sequence of elements; an element is a literal character or "." (any
one character), optionally followed by "*" (the element zero or more times) or "?" (zero or one
time). A "^" at the very start anchors the match to the start of text and a "$" at the very end
anchors it to the end; every other character, such as "+" or "(", is a literal. Without anchors
the pattern may match any substring. Return true when some part of text matches as required.
A pattern never starts with "*" or "?" (after an optional "^"). Patterns like "a*a*a*...b" on
long texts must still finish quickly, so avoid exponential backtracking.`,
  stub: functionStub(
    "matchPattern(pattern, text)",
    "@param {string} pattern\n@param {string} text\n@returns {boolean}",
  ),
  solution: `export function matchPattern(pattern, text) {
  let body = pattern;
  const anchoredStart = body.startsWith("^");
  if (anchoredStart) body = body.slice(1);
  const anchoredEnd = body.endsWith("$");
  if (anchoredEnd) body = body.slice(0, -1);
  const elements = [];
  for (let i = 0; i < body.length; i++) {
    const next = body[i + 1];
    if (next === "*" || next === "?") {
      elements.push({ char: body[i], repeat: next });
      i++;
    } else {
      elements.push({ char: body[i], repeat: "" });
    }
  }
  const memo = new Map();
  const fits = (char, t) => t < text.length && (char === "." || text[t] === char);
  const matchHere = (e, t) => {
    const key = e * (text.length + 1) + t;
    if (memo.has(key)) return memo.get(key);
    let result;
    if (e === elements.length) {
      result = !anchoredEnd || t === text.length;
    } else {
      const { char, repeat } = elements[e];
      if (repeat === "*") result = matchHere(e + 1, t) || (fits(char, t) && matchHere(e, t + 1));
      else if (repeat === "?") {
        result = matchHere(e + 1, t) || (fits(char, t) && matchHere(e + 1, t + 1));
      } else result = fits(char, t) && matchHere(e + 1, t + 1);
    }
    memo.set(key, result);
    return result;
  };
  if (anchoredStart) return matchHere(0, 0);
  for (let t = 0; t <= text.length; t++) if (matchHere(0, t)) return true;
  return false;
}
`,
  visible: table("matchPattern", [
    [["abc", "xabcx"], true],
    [["^abc$", "abcd"], false],
    [["a.c", "abc"], true],
  ]),
  hidden: [
    ...table("matchPattern", [
      [["a*b", "b"], true],
      [["^a*b$", "aaab"], true],
      [["^a*b$", "aaac"], false],
      [["colou?r", "color"], true],
      [["colou?r", "colour"], true],
      [["^colou?r$", "colouur"], false],
      [["^.*$", ""], true],
      [["x.z", "xz"], false],
      [["^ab", ""], false],
      [["", "anything"], true],
      [["^$", ""], true],
      [["^$", "a"], false],
      [["b$", "abab"], true],
      [["a$", "abab"], false],
      [["^h.*o w.*d$", "hello world"], true],
      [["a+b", "a+b"], true],
      [["a+b", "aab"], false],
      [["^.?.?.?$", "abcd"], false],
      [["^.?.?.?$", "abc"], true],
    ]),
    returns('matchPattern("^" + "a*".repeat(25) + "b$", "a".repeat(60))', false),
    returns('matchPattern("a*".repeat(25) + "c", "a".repeat(60) + "b")', false),
  ],
};

const markdown: Exercise = {
  id: "markdown",
  title: "Markdown",
  difficulty: 5,
  exports: ["renderMarkdown"],
  aliases: ["markdownToHtml", "renderMd"],
  statement: `Write renderMarkdown(text): convert a small Markdown subset to HTML. Lines are
separated by "\\n" and each line becomes one block:
- a line starting with 1 to 6 "#" followed by a space is a heading: "## Title" becomes
  "<h2>Title</h2>" (7 or more "#" make an ordinary paragraph);
- a line starting with "* " is a list item "<li>...</li>"; consecutive items are wrapped together
  in one "<ul>...</ul>";
- any other line is a paragraph "<p>...</p>".
Inside every block, __text__ becomes <strong>text</strong> and then _text_ becomes <em>text</em>
(shortest matches, left to right). Return the blocks concatenated with nothing in between.`,
  stub: functionStub("renderMarkdown(text)", "@param {string} text\n@returns {string}"),
  solution: String.raw`const inline = (text) =>
  text.replace(/__(.+?)__/g, "<strong>$1</strong>").replace(/_(.+?)_/g, "<em>$1</em>");

export function renderMarkdown(text) {
  let html = "";
  let inList = false;
  for (const line of text.split("\n")) {
    const heading = /^(#{1,6}) (.*)$/.exec(line);
    const item = /^\* (.*)$/.exec(line);
    if (item && !inList) html += "<ul>";
    if (!item && inList) html += "</ul>";
    inList = Boolean(item);
    if (heading) {
      const level = heading[1].length;
      html += "<h" + level + ">" + inline(heading[2]) + "</h" + level + ">";
    } else if (item) {
      html += "<li>" + inline(item[1]) + "</li>";
    } else {
      html += "<p>" + inline(line) + "</p>";
    }
  }
  if (inList) html += "</ul>";
  return html;
}
`,
  visible: table("renderMarkdown", [
    [["This will be a paragraph"], "<p>This will be a paragraph</p>"],
    [["# This will be an h1"], "<h1>This will be an h1</h1>"],
    [["* Item 1\n* Item 2"], "<ul><li>Item 1</li><li>Item 2</li></ul>"],
  ]),
  hidden: table("renderMarkdown", [
    [["_This will be italic_"], "<p><em>This will be italic</em></p>"],
    [["__This will be bold__"], "<p><strong>This will be bold</strong></p>"],
    [["This will _be_ __mixed__"], "<p>This will <em>be</em> <strong>mixed</strong></p>"],
    [["## This will be an h2"], "<h2>This will be an h2</h2>"],
    [["###### This will be an h6"], "<h6>This will be an h6</h6>"],
    [["####### This will not be an h7"], "<p>####### This will not be an h7</p>"],
    [
      ["# Header!\n* __Bold Item__\n* _Italic Item_"],
      "<h1>Header!</h1><ul><li><strong>Bold Item</strong></li><li><em>Italic Item</em></li></ul>",
    ],
    [
      ["# This is a header with # and * in the text"],
      "<h1>This is a header with # and * in the text</h1>",
    ],
    [
      ["* Item 1 with a # in the text\n* Item 2 with * in the text"],
      "<ul><li>Item 1 with a # in the text</li><li>Item 2 with * in the text</li></ul>",
    ],
    [
      ["This is a paragraph with # and * in the text"],
      "<p>This is a paragraph with # and * in the text</p>",
    ],
    [
      ["# Start a list\n* Item 1\n* Item 2\nEnd a list"],
      "<h1>Start a list</h1><ul><li>Item 1</li><li>Item 2</li></ul><p>End a list</p>",
    ],
    [["* a\nb\n* c"], "<ul><li>a</li></ul><p>b</p><ul><li>c</li></ul>"],
  ]),
};

const forth: Exercise = {
  id: "forth",
  title: "Forth",
  difficulty: 5,
  exports: ["runForth"],
  aliases: ["evaluateForth", "forthStack"],
  statement: `Write runForth(program): run a program in a tiny Forth dialect and return the final
stack as an array (bottom first). Words are separated by whitespace and are case-insensitive.
- An integer (like 5 or -3) is pushed onto the stack.
- + - * / pop two values and push the result ("5 2 -" gives [3]); / truncates toward zero.
- dup duplicates the top value, drop removes it, swap exchanges the top two, over copies the
  second value onto the top.
- ": name word ... ;" defines (or redefines) a word; name may be any word that is not a number,
  including a built-in one. A definition uses the meanings its words have when it is defined,
  so later redefinitions do not change it (": foo 10 ; : foo foo 1 + ; foo" gives [11]).
Throw an Error with the message "empty stack" when an operation finds no value at all, "only
one value on the stack" when it needs two and finds one, "division by zero", "undefined
operation" for an unknown word, and "illegal operation" when defining a number, or for a
definition without a name or without its closing ";".`,
  stub: functionStub("runForth(program)", "@param {string} program\n@returns {number[]}"),
  solution: String.raw`export function runForth(program) {
  const stack = [];
  const words = new Map();
  const need = (count) => {
    if (stack.length === 0) throw new Error("empty stack");
    if (stack.length < count) throw new Error("only one value on the stack");
  };
  const binary = (apply) => () => {
    need(2);
    const right = stack.pop();
    stack.push(apply(stack.pop(), right));
  };
  const builtins = {
    "+": binary((a, b) => a + b),
    "-": binary((a, b) => a - b),
    "*": binary((a, b) => a * b),
    "/": binary((a, b) => {
      if (b === 0) throw new Error("division by zero");
      return Math.trunc(a / b);
    }),
    dup: () => {
      need(1);
      stack.push(stack[stack.length - 1]);
    },
    drop: () => {
      need(1);
      stack.pop();
    },
    swap: () => {
      need(2);
      const b = stack.pop();
      const a = stack.pop();
      stack.push(b, a);
    },
    over: () => {
      need(2);
      stack.push(stack[stack.length - 2]);
    },
  };
  const isNumber = (token) => /^-?\d+$/.test(token);
  const expand = (token) => {
    if (words.has(token)) return words.get(token);
    if (isNumber(token) || Object.hasOwn(builtins, token)) return [token];
    throw new Error("undefined operation");
  };
  const tokens = program.toLowerCase().split(/\s+/).filter(Boolean);
  for (let i = 0; i < tokens.length; i++) {
    if (tokens[i] === ":") {
      const name = tokens[i + 1];
      if (name === undefined || name === ";" || isNumber(name)) {
        throw new Error("illegal operation");
      }
      const body = [];
      let j = i + 2;
      for (; j < tokens.length && tokens[j] !== ";"; j++) body.push(...expand(tokens[j]));
      if (j >= tokens.length) throw new Error("illegal operation");
      words.set(name, body);
      i = j;
      continue;
    }
    for (const word of expand(tokens[i])) {
      if (isNumber(word)) stack.push(Number(word));
      else builtins[word]();
    }
  }
  return stack;
}
`,
  visible: table("runForth", [
    [["1 2 3 4 5"], [1, 2, 3, 4, 5]],
    [["1 2 +"], [3]],
    [[": dup-twice dup dup ; 1 dup-twice"], [1, 1, 1]],
  ]),
  hidden: [
    ...table("runForth", [
      [["3 4 -"], [-1]],
      [["2 4 *"], [8]],
      [["12 3 /"], [4]],
      [["8 3 /"], [2]],
      [["-7 2 /"], [-3]],
      [["1 2 + 4 -"], [-1]],
      [["2 4 * 3 /"], [2]],
      [["1 dup"], [1, 1]],
      [["1 2 dup"], [1, 2, 2]],
      [["1 2 drop"], [1]],
      [["1 2 swap"], [2, 1]],
      [["1 2 3 swap"], [1, 3, 2]],
      [["1 2 over"], [1, 2, 1]],
      [[": countup 1 2 3 ; countup"], [1, 2, 3]],
      [[": foo dup ; : foo dup dup ; 1 foo"], [1, 1, 1]],
      [[": swap dup ; 1 swap"], [1, 1]],
      [[": + * ; 3 4 +"], [12]],
      [[": foo 5 ; : bar foo ; : foo 6 ; bar foo"], [5, 6]],
      [[": foo 10 ; : foo foo 1 + ; foo"], [11]],
      [["1 DUP Dup dup"], [1, 1, 1, 1]],
      [[": SWAP DUP Dup dup ; 1 swap"], [1, 1, 1, 1]],
      [[""], []],
    ]),
    throws('runForth("4 0 /")', "division by zero"),
    throws('runForth("+")', "empty stack"),
    throws('runForth("1 +")', "only one value on the stack"),
    throws('runForth("dup")', "empty stack"),
    throws('runForth("1 swap")', "only one value on the stack"),
    throws('runForth("1 over")', "only one value on the stack"),
    throws('runForth(": 1 2 ;")', "illegal operation"),
    throws('runForth("foo")', "undefined operation"),
  ],
};

/** Difficulty 4 and 5. */
export const ADVANCED_EXERCISES: readonly Exercise[] = [
  lruCache,
  expressionEvaluator,
  sayNumber,
  coinChange,
  topologicalOrder,
  editDistance,
  shortestPath,
  tournament,
  priorityQueue,
  bowling,
  patternMatcher,
  markdown,
  forth,
];
