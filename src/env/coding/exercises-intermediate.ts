/**
 * Exercises of difficulty 3: grouping, grids, small classes with error rules, parsing.
 */
import { block, type Exercise, functionStub, returns, table, throws } from "./exercise.js";

const anagramGroups: Exercise = {
  id: "anagram-groups",
  title: "Anagram Groups",
  difficulty: 3,
  exports: ["groupAnagrams"],
  aliases: ["anagramGroups", "clusterAnagrams"],
  statement: `Write groupAnagrams(words): split the array of strings words into groups of
anagrams: two words belong together when, lower-cased, they consist of the same letters the same
number of times. Return an array of groups (arrays of words). Groups are ordered by where their
first word appears in words, and the words inside a group keep their input order and spelling;
duplicates are kept. An empty input gives [].`,
  stub: functionStub("groupAnagrams(words)", "@param {string[]} words\n@returns {string[][]}"),
  solution: `export function groupAnagrams(words) {
  const groups = new Map();
  for (const word of words) {
    const key = [...word.toLowerCase()].sort().join("");
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(word);
  }
  return [...groups.values()];
}
`,
  visible: table("groupAnagrams", [
    [
      [["eat", "tea", "tan", "ate", "nat", "bat"]],
      [["eat", "tea", "ate"], ["tan", "nat"], ["bat"]],
    ],
    [[[]], []],
    [[["a"]], [["a"]]],
  ]),
  hidden: table("groupAnagrams", [
    [
      [["Listen", "Silent", "enlist", "google", "gogole"]],
      [
        ["Listen", "Silent", "enlist"],
        ["google", "gogole"],
      ],
    ],
    [[["abc", "bca", "abc"]], [["abc", "bca", "abc"]]],
    [[["", ""]], [["", ""]]],
    [[["ab", "ba", "abc", "cab", "b", "a"]], [["ab", "ba"], ["abc", "cab"], ["b"], ["a"]]],
    [
      [["stop", "pots", "tops", "opts", "post", "spot", "step"]],
      [["stop", "pots", "tops", "opts", "post", "spot"], ["step"]],
    ],
    [[["Aa", "aA", "aa", "AA"]], [["Aa", "aA", "aa", "AA"]]],
    [
      [["rat", "tar", "art", "star", "tars", "cheese"]],
      [["rat", "tar", "art"], ["star", "tars"], ["cheese"]],
    ],
  ]),
};

const spiralMatrix: Exercise = {
  id: "spiral-matrix",
  title: "Spiral Matrix",
  difficulty: 3,
  exports: ["spiralOrder"],
  aliases: ["readSpiral", "spiralWalk"],
  statement: `Write spiralOrder(matrix): matrix is a rectangular array of rows (all rows the same
length; it may have no rows). Return its elements in clockwise spiral order: along the top row
left to right, down the right column, along the bottom row right to left, up the left column,
then the same for the inner rectangle, and so on. [[1, 2], [3, 4]] gives [1, 2, 4, 3].`,
  stub: functionStub("spiralOrder(matrix)", "@param {unknown[][]} matrix\n@returns {unknown[]}"),
  solution: `export function spiralOrder(matrix) {
  const out = [];
  if (matrix.length === 0) return out;
  let top = 0;
  let bottom = matrix.length - 1;
  let left = 0;
  let right = matrix[0].length - 1;
  while (top <= bottom && left <= right) {
    for (let c = left; c <= right; c++) out.push(matrix[top][c]);
    for (let r = top + 1; r <= bottom; r++) out.push(matrix[r][right]);
    if (top < bottom) for (let c = right - 1; c >= left; c--) out.push(matrix[bottom][c]);
    if (left < right) for (let r = bottom - 1; r > top; r--) out.push(matrix[r][left]);
    top++;
    bottom--;
    left++;
    right--;
  }
  return out;
}
`,
  visible: table("spiralOrder", [
    [
      [
        [
          [1, 2, 3],
          [4, 5, 6],
          [7, 8, 9],
        ],
      ],
      [1, 2, 3, 6, 9, 8, 7, 4, 5],
    ],
    [[[]], []],
    [[[[1]]], [1]],
  ]),
  hidden: table("spiralOrder", [
    [
      [
        [
          [1, 2, 3, 4],
          [5, 6, 7, 8],
          [9, 10, 11, 12],
        ],
      ],
      [1, 2, 3, 4, 8, 12, 11, 10, 9, 5, 6, 7],
    ],
    [[[[1], [2], [3]]], [1, 2, 3]],
    [[[[1, 2, 3]]], [1, 2, 3]],
    [
      [
        [
          [1, 2],
          [3, 4],
        ],
      ],
      [1, 2, 4, 3],
    ],
    [
      [
        [
          [1, 2],
          [3, 4],
          [5, 6],
        ],
      ],
      [1, 2, 4, 6, 5, 3],
    ],
    [
      [
        [
          [1, 2, 3, 4],
          [5, 6, 7, 8],
          [9, 10, 11, 12],
          [13, 14, 15, 16],
        ],
      ],
      [1, 2, 3, 4, 8, 12, 16, 15, 14, 13, 9, 5, 6, 7, 11, 10],
    ],
    [
      [
        [
          ["a", "b"],
          ["c", "d"],
        ],
      ],
      ["a", "b", "d", "c"],
    ],
    [
      [
        [
          [1, 2, 3],
          [4, 5, 6],
          [7, 8, 9],
          [10, 11, 12],
        ],
      ],
      [1, 2, 3, 6, 9, 12, 11, 10, 7, 4, 5, 8],
    ],
  ]),
};

/** A test body on a fresh, opened account. */
const opened = (...statements: string[]) =>
  block("const account = new BankAccount()", "account.open()", ...statements);

const bankAccount: Exercise = {
  id: "bank-account",
  title: "Bank Account",
  difficulty: 3,
  exports: ["BankAccount"],
  aliases: ["Account", "SavingsAccount"],
  statement: `Write and export a class BankAccount. A new account is closed.
- open() opens it with a balance of 0; opening an open account throws an Error with the message
  "account already open". An account may be opened again after closing, starting again at 0.
- close() closes it; closing an account that is not open throws "account not open".
- deposit(amount) adds to the balance; withdraw(amount) takes from it.
- the balance property (a getter) returns the current balance.
Every operation except open() throws "account not open" when the account is not open (checked
first). deposit and withdraw throw "amount must be positive" for an amount of 0 or less, and
withdraw throws "insufficient funds" when the amount exceeds the balance. A failed operation
changes nothing.`,
  stub: `export class BankAccount {
  open() {
    throw new Error("Not implemented yet");
  }

  close() {
    throw new Error("Not implemented yet");
  }

  /** @param {number} amount */
  deposit(amount) {
    throw new Error("Not implemented yet");
  }

  /** @param {number} amount */
  withdraw(amount) {
    throw new Error("Not implemented yet");
  }

  /** @returns {number} */
  get balance() {
    throw new Error("Not implemented yet");
  }
}
`,
  solution: `export class BankAccount {
  #open = false;
  #balance = 0;

  #requireOpen() {
    if (!this.#open) throw new Error("account not open");
  }

  #requirePositive(amount) {
    if (!(amount > 0)) throw new Error("amount must be positive");
  }

  open() {
    if (this.#open) throw new Error("account already open");
    this.#open = true;
    this.#balance = 0;
  }

  close() {
    this.#requireOpen();
    this.#open = false;
  }

  deposit(amount) {
    this.#requireOpen();
    this.#requirePositive(amount);
    this.#balance += amount;
  }

  withdraw(amount) {
    this.#requireOpen();
    this.#requirePositive(amount);
    if (amount > this.#balance) throw new Error("insufficient funds");
    this.#balance -= amount;
  }

  get balance() {
    this.#requireOpen();
    return this.#balance;
  }
}
`,
  visible: [
    returns(opened("return account.balance"), 0),
    returns(opened("account.deposit(100)", "account.withdraw(30)", "return account.balance"), 70),
    throws(opened("account.withdraw(1)"), "insufficient funds"),
  ],
  hidden: [
    returns(opened("account.deposit(100)", "account.deposit(50)", "return account.balance"), 150),
    returns(opened("account.deposit(100)", "account.withdraw(100)", "return account.balance"), 0),
    throws(
      block("const account = new BankAccount()", "return account.balance"),
      "account not open",
    ),
    throws(opened("account.close()", "account.deposit(50)"), "account not open"),
    throws(block("new BankAccount().withdraw(5)"), "account not open"),
    throws(block("new BankAccount().close()"), "account not open"),
    throws(opened("account.open()"), "account already open"),
    returns(
      opened("account.deposit(50)", "account.close()", "account.open()", "return account.balance"),
      0,
    ),
    throws(opened("account.deposit(-10)"), "amount must be positive"),
    throws(opened("account.deposit(10)", "account.withdraw(0)"), "amount must be positive"),
    throws(opened("account.deposit(25)", "account.withdraw(50)"), "insufficient funds"),
    returns(
      opened(
        "account.deposit(25)",
        "try { account.withdraw(50) } catch {}",
        "return account.balance",
      ),
      25,
    ),
    returns(
      block(
        "const a = new BankAccount()",
        "const b = new BankAccount()",
        "a.open()",
        "b.open()",
        "a.deposit(10)",
        "b.deposit(20)",
        "return [a.balance, b.balance]",
      ),
      [10, 20],
    ),
  ],
};

const phoneNumber: Exercise = {
  id: "phone-number",
  title: "Phone Number",
  difficulty: 3,
  exports: ["cleanPhoneNumber"],
  aliases: ["normalizePhone", "cleanNumber"],
  statement: `Write cleanPhoneNumber(input): clean up a North American phone number and return its
10 digits as a string. Spaces, dots, dashes, parentheses and "+" may appear and are removed. A
valid number has 10 digits, or 11 digits starting with the country code 1 (which is dropped).
Of the 10 digits, the first (area code) and the fourth (exchange code) must be 2-9.
Throw an Error with one of these messages, checking in this order:
"letters not permitted" (any letter), "punctuations not permitted" (any other non-digit
character), "must not be fewer than 10 digits", "must not be greater than 11 digits",
"11 digits must start with 1", "area code cannot start with zero", "area code cannot start with
one", "exchange code cannot start with zero", "exchange code cannot start with one".`,
  stub: functionStub("cleanPhoneNumber(input)", "@param {string} input\n@returns {string}"),
  solution: String.raw`export function cleanPhoneNumber(input) {
  if (/[a-z]/i.test(input)) throw new Error("letters not permitted");
  if (/[^\d\s().+-]/.test(input)) throw new Error("punctuations not permitted");
  let digits = input.replace(/\D/g, "");
  if (digits.length < 10) throw new Error("must not be fewer than 10 digits");
  if (digits.length > 11) throw new Error("must not be greater than 11 digits");
  if (digits.length === 11) {
    if (digits[0] !== "1") throw new Error("11 digits must start with 1");
    digits = digits.slice(1);
  }
  if (digits[0] === "0") throw new Error("area code cannot start with zero");
  if (digits[0] === "1") throw new Error("area code cannot start with one");
  if (digits[3] === "0") throw new Error("exchange code cannot start with zero");
  if (digits[3] === "1") throw new Error("exchange code cannot start with one");
  return digits;
}
`,
  visible: [
    ...table("cleanPhoneNumber", [
      [["(223) 456-7890"], "2234567890"],
      [["223.456.7890"], "2234567890"],
    ]),
    throws('cleanPhoneNumber("123456789")', "must not be fewer than 10 digits"),
  ],
  hidden: [
    ...table("cleanPhoneNumber", [
      [["223 456   7890   "], "2234567890"],
      [["12234567890"], "2234567890"],
      [["+1 (223) 456-7890"], "2234567890"],
    ]),
    throws('cleanPhoneNumber("22234567890")', "11 digits must start with 1"),
    throws('cleanPhoneNumber("321234567890")', "must not be greater than 11 digits"),
    throws('cleanPhoneNumber("523-abc-7890")', "letters not permitted"),
    throws('cleanPhoneNumber("523-@:!-7890")', "punctuations not permitted"),
    throws('cleanPhoneNumber("(023) 456-7890")', "area code cannot start with zero"),
    throws('cleanPhoneNumber("(123) 456-7890")', "area code cannot start with one"),
    throws('cleanPhoneNumber("(223) 056-7890")', "exchange code cannot start with zero"),
    throws('cleanPhoneNumber("(223) 156-7890")', "exchange code cannot start with one"),
    throws('cleanPhoneNumber("1 (023) 456-7890")', "area code cannot start with zero"),
  ],
};

const DIGIT_RULE = "all digits must satisfy 0 <= d < input base";

const allYourBase: Exercise = {
  id: "all-your-base",
  title: "All Your Base",
  difficulty: 3,
  exports: ["convertBase"],
  aliases: ["rebase", "changeBase"],
  statement: `Write convertBase(digits, fromBase, toBase): digits is a number written in base
fromBase as an array of digit values, most significant first (leading zeros allowed). Return the
same number in base toBase as an array of digits without leading zeros; zero (including an
empty digits array) is [0]. Throw an Error, checking in this order: "input base must be >= 2",
"output base must be >= 2", and "${DIGIT_RULE}" for any digit outside that range.`,
  stub: functionStub(
    "convertBase(digits, fromBase, toBase)",
    "@param {number[]} digits\n@param {number} fromBase\n@param {number} toBase\n" +
      "@returns {number[]}",
  ),
  solution: `export function convertBase(digits, fromBase, toBase) {
  if (!Number.isInteger(fromBase) || fromBase < 2) throw new Error("input base must be >= 2");
  if (!Number.isInteger(toBase) || toBase < 2) throw new Error("output base must be >= 2");
  let value = 0;
  for (const digit of digits) {
    if (!Number.isInteger(digit) || digit < 0 || digit >= fromBase) {
      throw new Error("all digits must satisfy 0 <= d < input base");
    }
    value = value * fromBase + digit;
  }
  if (value === 0) return [0];
  const out = [];
  while (value > 0) {
    out.unshift(value % toBase);
    value = Math.floor(value / toBase);
  }
  return out;
}
`,
  visible: table("convertBase", [
    [[[1], 2, 10], [1]],
    [[[1, 0, 1], 2, 10], [5]],
    [
      [[4, 2], 10, 2],
      [1, 0, 1, 0, 1, 0],
    ],
  ]),
  hidden: [
    ...table("convertBase", [
      [
        [[1, 1, 2, 0], 3, 16],
        [2, 10],
      ],
      [
        [[2, 10], 16, 3],
        [1, 1, 2, 0],
      ],
      [
        [[3, 46, 60], 97, 73],
        [6, 10, 45],
      ],
      [[[], 2, 10], [0]],
      [[[0], 10, 2], [0]],
      [[[0, 0, 0], 10, 2], [0]],
      [
        [[0, 6, 0], 7, 10],
        [4, 2],
      ],
      [[[5], 10, 7], [5]],
      [
        [[1, 0, 1, 0, 1, 0], 2, 10],
        [4, 2],
      ],
    ]),
    throws("convertBase([1], 1, 10)", "input base must be >= 2"),
    throws("convertBase([], 0, 10)", "input base must be >= 2"),
    throws("convertBase([1], 2, 1)", "output base must be >= 2"),
    throws("convertBase([1, -1, 1, 0, 1, 0], 2, 10)", DIGIT_RULE),
    throws("convertBase([1, 2, 1, 0, 1, 0], 2, 10)", DIGIT_RULE),
  ],
};

const mergeIntervals: Exercise = {
  id: "merge-intervals",
  title: "Merge Intervals",
  difficulty: 3,
  exports: ["mergeIntervals"],
  aliases: ["mergeRanges", "unionIntervals"],
  statement: `Write mergeIntervals(intervals): intervals is an array of closed intervals
[start, end] with start <= end, in any order. Merge every group of overlapping or touching
intervals ([1, 3] and [3, 5] become [1, 5]; [1, 2] and [3, 4] stay apart) and return the merged
intervals sorted by start. Do not modify the input array or its intervals.`,
  stub: functionStub(
    "mergeIntervals(intervals)",
    "@param {[number, number][]} intervals\n@returns {[number, number][]}",
  ),
  solution: `export function mergeIntervals(intervals) {
  const sorted = intervals.map(([start, end]) => [start, end]).sort((a, b) => a[0] - b[0]);
  const merged = [];
  for (const interval of sorted) {
    const last = merged[merged.length - 1];
    if (last && interval[0] <= last[1]) last[1] = Math.max(last[1], interval[1]);
    else merged.push(interval);
  }
  return merged;
}
`,
  visible: table("mergeIntervals", [
    [
      [
        [
          [1, 3],
          [2, 6],
          [8, 10],
          [15, 18],
        ],
      ],
      [
        [1, 6],
        [8, 10],
        [15, 18],
      ],
    ],
    [
      [
        [
          [1, 4],
          [4, 5],
        ],
      ],
      [[1, 5]],
    ],
    [[[]], []],
  ]),
  hidden: [
    ...table("mergeIntervals", [
      [
        [
          [
            [5, 6],
            [1, 2],
          ],
        ],
        [
          [1, 2],
          [5, 6],
        ],
      ],
      [
        [
          [
            [1, 10],
            [2, 3],
            [4, 5],
          ],
        ],
        [[1, 10]],
      ],
      [
        [
          [
            [1, 2],
            [3, 4],
          ],
        ],
        [
          [1, 2],
          [3, 4],
        ],
      ],
      [
        [
          [
            [6, 8],
            [1, 9],
            [2, 4],
            [4, 7],
          ],
        ],
        [[1, 9]],
      ],
      [
        [
          [
            [2, 2],
            [2, 2],
          ],
        ],
        [[2, 2]],
      ],
      [
        [
          [
            [-3, -1],
            [-2, 0],
            [5, 5],
          ],
        ],
        [
          [-3, 0],
          [5, 5],
        ],
      ],
      [
        [
          [
            [1, 4],
            [0, 0],
          ],
        ],
        [
          [0, 0],
          [1, 4],
        ],
      ],
      [
        [
          [
            [1, 4],
            [0, 1],
          ],
        ],
        [[0, 4]],
      ],
      [
        [
          [
            [10, 12],
            [1, 3],
            [3, 5],
            [7, 9],
            [8, 10],
          ],
        ],
        [
          [1, 5],
          [7, 12],
        ],
      ],
    ]),
    returns(
      block("const input = [[3, 4], [1, 2], [2, 3]]", "mergeIntervals(input)", "return input"),
      [
        [3, 4],
        [1, 2],
        [2, 3],
      ],
    ),
  ],
};

/** A test body on a fresh buffer of the given capacity. */
const buffer = (capacity: number, ...statements: string[]) =>
  block(`const buffer = new CircularBuffer(${capacity})`, ...statements);

const circularBuffer: Exercise = {
  id: "circular-buffer",
  title: "Circular Buffer",
  difficulty: 3,
  exports: ["CircularBuffer"],
  aliases: ["RingBuffer", "FixedQueue"],
  statement: `Write and export a class CircularBuffer: a first-in, first-out buffer of fixed
capacity (new CircularBuffer(capacity), capacity >= 1) holding values of any type.
- write(value) appends a value; throws an Error "buffer full" when the buffer is full.
- read() removes and returns the oldest value; throws "buffer empty" when there is none.
- forceWrite(value) is write(value), except that when the buffer is full it first drops the
  oldest value to make room.
- clear() removes every value.`,
  stub: `export class CircularBuffer {
  /** @param {number} capacity */
  constructor(capacity) {
    throw new Error("Not implemented yet");
  }

  /** @param {unknown} value */
  write(value) {
    throw new Error("Not implemented yet");
  }

  /** @returns {unknown} */
  read() {
    throw new Error("Not implemented yet");
  }

  /** @param {unknown} value */
  forceWrite(value) {
    throw new Error("Not implemented yet");
  }

  clear() {
    throw new Error("Not implemented yet");
  }
}
`,
  solution: `export class CircularBuffer {
  constructor(capacity) {
    this.capacity = capacity;
    this.slots = new Array(capacity);
    this.start = 0;
    this.count = 0;
  }

  write(value) {
    if (this.count === this.capacity) throw new Error("buffer full");
    this.slots[(this.start + this.count) % this.capacity] = value;
    this.count++;
  }

  read() {
    if (this.count === 0) throw new Error("buffer empty");
    const value = this.slots[this.start];
    this.slots[this.start] = undefined;
    this.start = (this.start + 1) % this.capacity;
    this.count--;
    return value;
  }

  forceWrite(value) {
    if (this.count === this.capacity) this.read();
    this.write(value);
  }

  clear() {
    this.slots = new Array(this.capacity);
    this.start = 0;
    this.count = 0;
  }
}
`,
  visible: [
    returns(buffer(1, "buffer.write(1)", "return buffer.read()"), 1),
    throws(buffer(1, "buffer.read()"), "buffer empty"),
    returns(
      buffer(2, "buffer.write(1)", "buffer.write(2)", "return [buffer.read(), buffer.read()]"),
      [1, 2],
    ),
  ],
  hidden: [
    throws(buffer(1, "buffer.write(1)", "buffer.write(2)"), "buffer full"),
    throws(buffer(1, "buffer.write(1)", "buffer.read()", "buffer.read()"), "buffer empty"),
    returns(
      buffer(
        3,
        "const seen = []",
        "buffer.write(1)",
        "buffer.write(2)",
        "seen.push(buffer.read())",
        "buffer.write(3)",
        "seen.push(buffer.read(), buffer.read())",
        "return seen",
      ),
      [1, 2, 3],
    ),
    returns(
      buffer(
        3,
        "buffer.write(1)",
        "buffer.write(2)",
        "buffer.clear()",
        "buffer.write(3)",
        "return buffer.read()",
      ),
      3,
    ),
    throws(buffer(1, "buffer.write(1)", "buffer.clear()", "buffer.read()"), "buffer empty"),
    returns(
      buffer(2, "buffer.write(1)", "buffer.forceWrite(2)", "return [buffer.read(), buffer.read()]"),
      [1, 2],
    ),
    returns(
      buffer(
        2,
        "buffer.write(1)",
        "buffer.write(2)",
        "buffer.forceWrite(3)",
        "return [buffer.read(), buffer.read()]",
      ),
      [2, 3],
    ),
    throws(
      buffer(
        3,
        "buffer.write(1)",
        "buffer.write(2)",
        "buffer.write(3)",
        "buffer.read()",
        "buffer.write(4)",
        "buffer.write(5)",
      ),
      "buffer full",
    ),
    returns(
      buffer(
        3,
        "for (let i = 0; i < 10; i++) buffer.forceWrite(i)",
        "return [buffer.read(), buffer.read(), buffer.read()]",
      ),
      [7, 8, 9],
    ),
    returns(
      buffer(
        2,
        'buffer.write("a")',
        "buffer.write({ x: 1 })",
        "return [buffer.read(), buffer.read()]",
      ),
      ["a", { x: 1 }],
    ),
    returns(
      buffer(
        2,
        "buffer.write(1)",
        "buffer.write(2)",
        "buffer.clear()",
        "buffer.write(3)",
        "buffer.write(4)",
        "return [buffer.read(), buffer.read()]",
      ),
      [3, 4],
    ),
  ],
};

const minesweeper: Exercise = {
  id: "minesweeper",
  title: "Minesweeper",
  difficulty: 3,
  exports: ["annotateBoard"],
  aliases: ["countMines", "annotateMines"],
  statement: `Write annotateBoard(rows): rows is a Minesweeper board as an array of equal-length
strings, where "*" is a mine and " " an empty square. Return the board with every empty square
replaced by the number of mines among its up to eight neighbours (horizontal, vertical and
diagonal), written as a digit; squares with no neighbouring mine stay " ", mines stay "*".`,
  stub: functionStub("annotateBoard(rows)", "@param {string[]} rows\n@returns {string[]}"),
  solution: `export function annotateBoard(rows) {
  const isMine = (r, c) => rows[r] !== undefined && rows[r][c] === "*";
  return rows.map((row, r) =>
    [...row]
      .map((square, c) => {
        if (square === "*") return "*";
        let count = 0;
        for (let dr = -1; dr <= 1; dr++) {
          for (let dc = -1; dc <= 1; dc++) if ((dr || dc) && isMine(r + dr, c + dc)) count++;
        }
        return count === 0 ? " " : String(count);
      })
      .join(""),
  );
}
`,
  visible: table("annotateBoard", [
    [[[]], []],
    [[["   ", "   ", "   "]], ["   ", "   ", "   "]],
    [[[" * ", "   ", " * "]], ["1*1", "222", "1*1"]],
  ]),
  hidden: table("annotateBoard", [
    [[["***", "***", "***"]], ["***", "***", "***"]],
    [[["***", "* *", "***"]], ["***", "*8*", "***"]],
    [[[" * * "]], ["1*2*1"]],
    [[["*   *"]], ["*1 1*"]],
    [[[" ", "*", " ", "*", " "]], ["1", "*", "2", "*", "1"]],
    [[["*"]], ["*"]],
    [[[" "]], [" "]],
    [[[""]], [""]],
    [
      [["  *  ", "  *  ", "*****", "  *  ", "  *  "]],
      [" 2*2 ", "25*52", "*****", "25*52", " 2*2 "],
    ],
    [
      [[" *  * ", "  *   ", "    * ", "   * *", " *  * ", "      "]],
      ["1*22*1", "12*322", " 123*2", "112*4*", "1*22*2", "111111"],
    ],
  ]),
};

const proteinTranslation: Exercise = {
  id: "protein-translation",
  title: "Protein Translation",
  difficulty: 3,
  exports: ["translateRna"],
  aliases: ["rnaToProteins", "translateCodons"],
  statement: `Write translateRna(strand): read the RNA string three letters (one codon) at a time
and return the array of protein names: AUG Methionine; UUU, UUC Phenylalanine; UUA, UUG
Leucine; UCU, UCC, UCA, UCG Serine; UAU, UAC Tyrosine; UGU, UGC Cysteine; UGG Tryptophan.
UAA, UAG and UGA are STOP codons: translation ends there and the rest of the strand is ignored
(even if it is invalid). Any other codon, or a trailing piece shorter than three letters that is
reached before a STOP, throws an Error with the message "Invalid codon".`,
  stub: functionStub("translateRna(strand)", "@param {string} strand\n@returns {string[]}"),
  solution: `const CODONS = {
  AUG: "Methionine", UUU: "Phenylalanine", UUC: "Phenylalanine", UUA: "Leucine",
  UUG: "Leucine", UCU: "Serine", UCC: "Serine", UCA: "Serine", UCG: "Serine",
  UAU: "Tyrosine", UAC: "Tyrosine", UGU: "Cysteine", UGC: "Cysteine", UGG: "Tryptophan",
  UAA: "STOP", UAG: "STOP", UGA: "STOP",
};

export function translateRna(strand) {
  const proteins = [];
  for (let i = 0; i < strand.length; i += 3) {
    const codon = strand.slice(i, i + 3);
    const protein = Object.hasOwn(CODONS, codon) ? CODONS[codon] : undefined;
    if (protein === undefined) throw new Error("Invalid codon");
    if (protein === "STOP") break;
    proteins.push(protein);
  }
  return proteins;
}
`,
  visible: table("translateRna", [
    [["AUG"], ["Methionine"]],
    [["AUGUUUUGG"], ["Methionine", "Phenylalanine", "Tryptophan"]],
    [["UAGUGG"], []],
  ]),
  hidden: [
    ...table("translateRna", [
      [[""], []],
      [["UUUUUC"], ["Phenylalanine", "Phenylalanine"]],
      [["UUAUUG"], ["Leucine", "Leucine"]],
      [["UCUUCCUCAUCG"], ["Serine", "Serine", "Serine", "Serine"]],
      [["UAUUACUGUUGC"], ["Tyrosine", "Tyrosine", "Cysteine", "Cysteine"]],
      [["UGGUAG"], ["Tryptophan"]],
      [["UGGUGUUAUUAAUGGUUU"], ["Tryptophan", "Cysteine", "Tyrosine"]],
      [["AUGUUUUAA"], ["Methionine", "Phenylalanine"]],
      [["UUCUUCUAAUGGU"], ["Phenylalanine", "Phenylalanine"]],
    ]),
    throws('translateRna("AAA")', "Invalid codon"),
    throws('translateRna("XYZ")', "Invalid codon"),
    throws('translateRna("UUCUUCUG")', "Invalid codon"),
    throws('translateRna("AUGU")', "Invalid codon"),
  ],
};

const gameOfLife: Exercise = {
  id: "game-of-life",
  title: "Game of Life",
  difficulty: 3,
  exports: ["nextGeneration"],
  aliases: ["lifeStep", "tickLife"],
  statement: `Write nextGeneration(grid): grid is a rectangular array of rows of 0 (dead) and 1
(live) cells; cells beyond the edges count as dead. Return the next generation of Conway's Game
of Life as a new grid of the same size: a live cell with two or three live neighbours (of its
eight) stays alive, a dead cell with exactly three live neighbours becomes alive, and every
other cell is dead. Do not modify the input.`,
  stub: functionStub("nextGeneration(grid)", "@param {number[][]} grid\n@returns {number[][]}"),
  solution: `export function nextGeneration(grid) {
  const alive = (r, c) => (grid[r] !== undefined && grid[r][c] === 1 ? 1 : 0);
  return grid.map((row, r) =>
    row.map((cell, c) => {
      let neighbours = 0;
      for (let dr = -1; dr <= 1; dr++) {
        for (let dc = -1; dc <= 1; dc++) if (dr || dc) neighbours += alive(r + dr, c + dc);
      }
      return neighbours === 3 || (cell === 1 && neighbours === 2) ? 1 : 0;
    }),
  );
}
`,
  visible: table("nextGeneration", [
    [[[]], []],
    [
      [
        [
          [0, 0, 0],
          [0, 0, 0],
          [0, 0, 0],
        ],
      ],
      [
        [0, 0, 0],
        [0, 0, 0],
        [0, 0, 0],
      ],
    ],
    [
      [
        [
          [0, 1, 0],
          [0, 1, 0],
          [0, 1, 0],
        ],
      ],
      [
        [0, 0, 0],
        [1, 1, 1],
        [0, 0, 0],
      ],
    ],
  ]),
  hidden: [
    ...table("nextGeneration", [
      [
        [
          [
            [1, 1],
            [1, 1],
          ],
        ],
        [
          [1, 1],
          [1, 1],
        ],
      ],
      [
        [
          [
            [0, 0, 0],
            [0, 1, 0],
            [0, 0, 0],
          ],
        ],
        [
          [0, 0, 0],
          [0, 0, 0],
          [0, 0, 0],
        ],
      ],
      [
        [
          [
            [1, 0, 1],
            [1, 0, 1],
            [1, 0, 1],
          ],
        ],
        [
          [0, 0, 0],
          [1, 0, 1],
          [0, 0, 0],
        ],
      ],
      [
        [
          [
            [1, 1, 0],
            [0, 0, 0],
            [1, 0, 0],
          ],
        ],
        [
          [0, 0, 0],
          [1, 1, 0],
          [0, 0, 0],
        ],
      ],
      [
        [
          [
            [1, 1, 1],
            [1, 1, 1],
            [1, 1, 1],
          ],
        ],
        [
          [1, 0, 1],
          [0, 0, 0],
          [1, 0, 1],
        ],
      ],
      [
        [
          [
            [1, 1, 1],
            [0, 0, 0],
          ],
        ],
        [
          [0, 1, 0],
          [0, 1, 0],
        ],
      ],
      [
        [
          [
            [0, 1, 0, 0, 0],
            [0, 0, 1, 0, 0],
            [1, 1, 1, 0, 0],
            [0, 0, 0, 0, 0],
            [0, 0, 0, 0, 0],
          ],
        ],
        [
          [0, 0, 0, 0, 0],
          [1, 0, 1, 0, 0],
          [0, 1, 1, 0, 0],
          [0, 1, 0, 0, 0],
          [0, 0, 0, 0, 0],
        ],
      ],
    ]),
    returns(
      block(
        "const grid = [[0, 1, 0], [0, 1, 0], [0, 1, 0]]",
        "nextGeneration(grid)",
        "return grid",
      ),
      [
        [0, 1, 0],
        [0, 1, 0],
        [0, 1, 0],
      ],
    ),
  ],
};

const rpnCalculator: Exercise = {
  id: "rpn-calculator",
  title: "RPN Calculator",
  difficulty: 3,
  exports: ["evaluateRpn"],
  aliases: ["rpn", "evalPostfix"],
  statement: `Write evaluateRpn(expression): evaluate an integer expression in reverse Polish
notation. Tokens are separated by whitespace; a token is an integer (optionally with a leading
"-", like -7) or one of the operators + - * /, which pop two values and push the result ("5 2 -"
is 3). Division truncates toward zero ("-7 2 /" is -3). Return the single value left at the end.
Throw an Error with the message: "empty expression" when there are no tokens; "unknown token: X"
for any other token X; "not enough operands" when an operator finds fewer than two values;
"division by zero"; "too many operands" when more than one value is left at the end.`,
  stub: functionStub("evaluateRpn(expression)", "@param {string} expression\n@returns {number}"),
  solution: String.raw`export function evaluateRpn(expression) {
  const tokens = expression.split(/\s+/).filter(Boolean);
  if (tokens.length === 0) throw new Error("empty expression");
  const stack = [];
  for (const token of tokens) {
    if (/^-?\d+$/.test(token)) {
      stack.push(Number(token));
      continue;
    }
    if (!["+", "-", "*", "/"].includes(token)) throw new Error("unknown token: " + token);
    if (stack.length < 2) throw new Error("not enough operands");
    const right = stack.pop();
    const left = stack.pop();
    if (token === "+") stack.push(left + right);
    else if (token === "-") stack.push(left - right);
    else if (token === "*") stack.push(left * right);
    else {
      if (right === 0) throw new Error("division by zero");
      stack.push(Math.trunc(left / right));
    }
  }
  if (stack.length > 1) throw new Error("too many operands");
  return stack[0];
}
`,
  visible: [
    ...table("evaluateRpn", [
      [["3 4 +"], 7],
      [["5 1 2 + 4 * + 3 -"], 14],
    ]),
    throws('evaluateRpn("1 +")', "not enough operands"),
  ],
  hidden: [
    ...table("evaluateRpn", [
      [["2 3 4 * +"], 14],
      [["10 3 /"], 3],
      [["-7 2 /"], -3],
      [["7 -2 /"], -3],
      [["4 2 - 3 -"], -1],
      [["42"], 42],
      [["  3   4   * "], 12],
      [["15 7 1 1 + - / 3 * 2 1 1 + + -"], 5],
    ]),
    throws('evaluateRpn("1 0 /")', "division by zero"),
    throws('evaluateRpn("1 2")', "too many operands"),
    throws('evaluateRpn("")', "empty expression"),
    throws('evaluateRpn("   ")', "empty expression"),
    throws('evaluateRpn("1 2 ^")', "unknown token: ^"),
    throws('evaluateRpn("+")', "not enough operands"),
  ],
};

/** Difficulty 3. */
export const INTERMEDIATE_EXERCISES: readonly Exercise[] = [
  anagramGroups,
  spiralMatrix,
  bankAccount,
  phoneNumber,
  allYourBase,
  mergeIntervals,
  circularBuffer,
  minesweeper,
  proteinTranslation,
  gameOfLife,
  rpnCalculator,
];
