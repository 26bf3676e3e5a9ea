/**
 * Exercises of difficulty 1 and 2: short string, number and array katas. Solutions are kept as
 * source text (String.raw where they hold regex backslashes) and only ever run in the sandbox.
 */
import { type Exercise, functionStub, returns, table, throws } from "./exercise.js";

const reverseWords: Exercise = {
  id: "reverse-words",
  title: "Reverse Words",
  difficulty: 1,
  exports: ["reverseWords"],
  aliases: ["reverseWordOrder", "flipWords"],
  statement: `Write reverseWords(text): return the words of the string text in reverse order, joined
by single spaces. A word is a maximal run of non-whitespace characters, so leading, trailing and
repeated whitespace (spaces, tabs, newlines) disappears. Punctuation stays part of its word.
Text without any word gives the empty string "".`,
  stub: functionStub("reverseWords(text)", "@param {string} text\n@returns {string}"),
  solution: String.raw`export function reverseWords(text) {
  return text.split(/\s+/).filter(Boolean).reverse().join(" ");
}
`,
  visible: table("reverseWords", [
    [["hello world"], "world hello"],
    [["one"], "one"],
    [["the quick brown fox"], "fox brown quick the"],
  ]),
  hidden: table("reverseWords", [
    [["  leading and trailing  "], "trailing and leading"],
    [["a\tb\nc"], "c b a"],
    [[""], ""],
    [["   "], ""],
    [["repeated   spaces  here"], "here spaces repeated"],
    [["Punctuation, stays attached!"], "attached! stays Punctuation,"],
    [["x y x"], "x y x"],
    [["1 2 3 4 5"], "5 4 3 2 1"],
  ]),
};

const palindrome: Exercise = {
  id: "palindrome",
  title: "Palindrome",
  difficulty: 1,
  exports: ["isPalindrome"],
  aliases: ["checkPalindrome", "readsSameBackwards"],
  statement: `Write isPalindrome(text): return true when text reads the same forwards and backwards
once case is ignored and every character that is not an ASCII letter or digit is removed,
false otherwise. Text with no letters or digits at all counts as a palindrome.`,
  stub: functionStub("isPalindrome(text)", "@param {string} text\n@returns {boolean}"),
  solution: `export function isPalindrome(text) {
  const kept = text.toLowerCase().replace(/[^a-z0-9]/g, "");
  return kept === [...kept].reverse().join("");
}
`,
  visible: table("isPalindrome", [
    [["racecar"], true],
    [["hello"], false],
    [["A man, a plan, a canal: Panama"], true],
  ]),
  hidden: table("isPalindrome", [
    [[""], true],
    [["No 'x' in Nixon"], true],
    [["ab"], false],
    [["Was it a car or a cat I saw?"], true],
    [["12321"], true],
    [["123 21x"], false],
    [["Aa"], true],
    [["!!!"], true],
    [["abcdba"], false],
  ]),
};

const FIZZ_15 = [
  "1",
  "2",
  "Fizz",
  "4",
  "Buzz",
  "Fizz",
  "7",
  "8",
  "Fizz",
  "Buzz",
  "11",
  "Fizz",
  "13",
  "14",
  "FizzBuzz",
];

const fizzBuzz: Exercise = {
  id: "fizz-buzz",
  title: "FizzBuzz",
  difficulty: 1,
  exports: ["fizzBuzz"],
  aliases: ["fizzBuzzList", "playFizzBuzz"],
  statement: `Write fizzBuzz(n): return an array of n strings, one for each number from 1 to n:
"FizzBuzz" for multiples of both 3 and 5, "Fizz" for other multiples of 3, "Buzz" for other
multiples of 5, and the number itself in decimal (e.g. "7") otherwise. fizzBuzz(0) is [].`,
  stub: functionStub("fizzBuzz(n)", "@param {number} n\n@returns {string[]}"),
  solution: `export function fizzBuzz(n) {
  const out = [];
  for (let i = 1; i <= n; i++) {
    if (i % 15 === 0) out.push("FizzBuzz");
    else if (i % 3 === 0) out.push("Fizz");
    else if (i % 5 === 0) out.push("Buzz");
    else out.push(String(i));
  }
  return out;
}
`,
  visible: table("fizzBuzz", [
    [[5], FIZZ_15.slice(0, 5)],
    [[1], ["1"]],
    [[0], []],
  ]),
  hidden: [
    ...table("fizzBuzz", [
      [[15], FIZZ_15],
      [[3], ["1", "2", "Fizz"]],
      [[10], FIZZ_15.slice(0, 10)],
      [[16], [...FIZZ_15, "16"]],
    ]),
    returns("fizzBuzz(100)[99]", "Buzz"),
    returns("fizzBuzz(90)[89]", "FizzBuzz"),
    returns("fizzBuzz(99)[98]", "Fizz"),
    returns("fizzBuzz(31).length", 31),
  ],
};

const leapYear: Exercise = {
  id: "leap-year",
  title: "Leap Year",
  difficulty: 1,
  exports: ["isLeapYear"],
  aliases: ["isLeap", "leapYearCheck"],
  statement: `Write isLeapYear(year): return true when the Gregorian calendar year (a positive
integer) is a leap year. A year is a leap year when it is divisible by 4, except years divisible
by 100, which are leap years only when also divisible by 400.`,
  stub: functionStub("isLeapYear(year)", "@param {number} year\n@returns {boolean}"),
  solution: `export function isLeapYear(year) {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}
`,
  visible: table("isLeapYear", [
    [[2024], true],
    [[2023], false],
    [[1900], false],
    [[2000], true],
  ]),
  hidden: table("isLeapYear", [
    [[1996], true],
    [[1997], false],
    [[1800], false],
    [[2400], true],
    [[2100], false],
    [[4], true],
    [[1], false],
    [[1600], true],
    [[2020], true],
    [[1700], false],
  ]),
};

const hamming: Exercise = {
  id: "hamming",
  title: "Hamming Distance",
  difficulty: 1,
  exports: ["hammingDistance"],
  aliases: ["countMutations", "hamming"],
  statement: `Write hammingDistance(a, b): return the number of positions at which the two DNA
strands a and b (strings) hold different characters. When the strands have different lengths,
throw an Error with the message "strands must be of equal length".`,
  stub: functionStub(
    "hammingDistance(a, b)",
    "@param {string} a\n@param {string} b\n@returns {number}",
  ),
  solution: `export function hammingDistance(a, b) {
  if (a.length !== b.length) throw new Error("strands must be of equal length");
  let count = 0;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) count++;
  return count;
}
`,
  visible: [
    ...table("hammingDistance", [
      [["GAGCCTACTAACGGGAT", "CATCGTAATGACGGCCT"], 7],
      [["A", "A"], 0],
    ]),
    throws('hammingDistance("AB", "A")', "strands must be of equal length"),
  ],
  hidden: [
    ...table("hammingDistance", [
      [["", ""], 0],
      [["G", "T"], 1],
      [["GGACTGAAATCTG", "GGACTGAAATCTG"], 0],
      [["GGACGGATTCTG", "AGGACGGATTCT"], 9],
      [["ATA", "AGT"], 2],
    ]),
    throws('hammingDistance("", "G")', "strands must be of equal length"),
    throws('hammingDistance("ATA", "AT")', "strands must be of equal length"),
  ],
};

const acronym: Exercise = {
  id: "acronym",
  title: "Acronym",
  difficulty: 1,
  exports: ["makeAcronym"],
  aliases: ["toAcronym", "abbreviatePhrase"],
  statement: `Write makeAcronym(phrase): return the acronym of the phrase in upper case. Words are
separated by whitespace and hyphens; each word contributes its first letter (A-Z or a-z), so
punctuation such as underscores, commas or apostrophes is skipped, and a word without any letter
contributes nothing. Example: "Complementary metal-oxide semiconductor" gives "CMOS".`,
  stub: functionStub("makeAcronym(phrase)", "@param {string} phrase\n@returns {string}"),
  solution: String.raw`export function makeAcronym(phrase) {
  return phrase
    .split(/[\s-]+/)
    .map((word) => (word.match(/[A-Za-z]/) || [""])[0])
    .join("")
    .toUpperCase();
}
`,
  visible: table("makeAcronym", [
    [["Portable Network Graphics"], "PNG"],
    [["Ruby on Rails"], "ROR"],
    [["Complementary metal-oxide semiconductor"], "CMOS"],
  ]),
  hidden: table("makeAcronym", [
    [["First In, First Out"], "FIFO"],
    [["GNU Image Manipulation Program"], "GIMP"],
    [["PHP: Hypertext Preprocessor"], "PHP"],
    [["The Road _Not_ Taken"], "TRNT"],
    [["Something - I made up from thin air"], "SIMUFTA"],
    [["Halley's Comet"], "HC"],
    [["As Soon As Possible"], "ASAP"],
    [["Liquid-crystal display"], "LCD"],
    [["  spaced   out  "], "SO"],
    [[""], ""],
  ]),
};

const pangram: Exercise = {
  id: "pangram",
  title: "Pangram",
  difficulty: 1,
  exports: ["isPangram"],
  aliases: ["hasEveryLetter", "usesWholeAlphabet"],
  statement: `Write isPangram(text): return true when text contains every letter of the English
alphabet (a to z) at least once, ignoring case; other characters do not matter.`,
  stub: functionStub("isPangram(text)", "@param {string} text\n@returns {boolean}"),
  solution: `export function isPangram(text) {
  const letters = new Set(text.toLowerCase().match(/[a-z]/g) || []);
  return letters.size === 26;
}
`,
  visible: table("isPangram", [
    [["The quick brown fox jumps over the lazy dog"], true],
    [["a quick movement of the enemy will jeopardize five gunboats"], false],
    [[""], false],
  ]),
  hidden: table("isPangram", [
    [["abcdefghijklmnopqrstuvwxyz"], true],
    [["the quick brown fish jumps over the lazy dog"], false],
    [["the_quick_brown_fox_jumps_over_the_lazy_dog"], true],
    [["the 1 quick brown fox jumps over the 2 lazy dogs"], true],
    [["five boxing wizards jump quickly at it"], false],
    [["Victor jagt zwölf Boxkämpfer quer über den großen Sylter Deich"], true],
    [["Pack my box with five dozen liquor jugs"], true],
    [["THE QUICK BROWN FOX JUMPS OVER THE LAZY DOG"], true],
  ]),
};

const raindrops: Exercise = {
  id: "raindrops",
  title: "Raindrops",
  difficulty: 1,
  exports: ["raindropSounds"],
  aliases: ["convertRaindrops", "dropSounds"],
  statement: `Write raindropSounds(n) for a positive integer n: the result is "Pling" if n is
divisible by 3, followed by "Plang" if divisible by 5, followed by "Plong" if divisible by 7
(so 105 gives "PlingPlangPlong"). When n is divisible by none of them, return n as a decimal
string (34 gives "34").`,
  stub: functionStub("raindropSounds(n)", "@param {number} n\n@returns {string}"),
  solution: `export function raindropSounds(n) {
  let sound = "";
  if (n % 3 === 0) sound += "Pling";
  if (n % 5 === 0) sound += "Plang";
  if (n % 7 === 0) sound += "Plong";
  return sound || String(n);
}
`,
  visible: table("raindropSounds", [
    [[28], "Plong"],
    [[30], "PlingPlang"],
    [[34], "34"],
  ]),
  hidden: table("raindropSounds", [
    [[1], "1"],
    [[3], "Pling"],
    [[5], "Plang"],
    [[7], "Plong"],
    [[9], "Pling"],
    [[15], "PlingPlang"],
    [[21], "PlingPlong"],
    [[35], "PlangPlong"],
    [[105], "PlingPlangPlong"],
    [[52], "52"],
    [[3125], "Plang"],
  ]),
};

const isogram: Exercise = {
  id: "isogram",
  title: "Isogram",
  difficulty: 1,
  exports: ["isIsogram"],
  aliases: ["hasNoRepeatedLetters"],
  statement: `Write isIsogram(text): return true when no letter occurs more than once in text,
ignoring case. Spaces and hyphens may appear any number of times; the empty string is an
isogram.`,
  stub: functionStub("isIsogram(text)", "@param {string} text\n@returns {boolean}"),
  solution: String.raw`export function isIsogram(text) {
  const letters = text.toLowerCase().replace(/[\s-]/g, "");
  return new Set(letters).size === letters.length;
}
`,
  visible: table("isIsogram", [
    [["lumberjacks"], true],
    [["isograms"], false],
    [[""], true],
  ]),
  hidden: table("isIsogram", [
    [["isogram"], true],
    [["eleven"], false],
    [["zzyzx"], false],
    [["subdermatoglyphic"], true],
    [["Alphabet"], false],
    [["thumbscrew-japingly"], true],
    [["six-year-old"], true],
    [["Emily Jung Schwartzkopf"], true],
    [["accentor"], false],
    [["up-to-date"], false],
    [["angola"], false],
  ]),
};

const sumOfMultiples: Exercise = {
  id: "sum-of-multiples",
  title: "Sum of Multiples",
  difficulty: 1,
  exports: ["sumOfMultiples"],
  aliases: ["multiplesSum", "addMultiples"],
  statement: `Write sumOfMultiples(factors, limit): return the sum of all distinct positive integers
below limit that are a multiple of at least one of the factors (non-negative integers). A
factor of 0 has no positive multiples and is ignored. Example: factors [3, 5] and limit 10 give
3 + 5 + 6 + 9 = 23.`,
  stub: functionStub(
    "sumOfMultiples(factors, limit)",
    "@param {number[]} factors\n@param {number} limit\n@returns {number}",
  ),
  solution: `export function sumOfMultiples(factors, limit) {
  let sum = 0;
  for (let n = 1; n < limit; n++) {
    if (factors.some((factor) => factor > 0 && n % factor === 0)) sum += n;
  }
  return sum;
}
`,
  visible: table("sumOfMultiples", [
    [[[3, 5], 10], 23],
    [[[3, 5], 1], 0],
    [[[7, 13, 17], 20], 51],
  ]),
  hidden: table("sumOfMultiples", [
    [[[3], 4], 3],
    [[[3, 5], 4], 3],
    [[[3, 5], 100], 2318],
    [[[4, 6], 15], 30],
    [[[5, 6, 8], 150], 4419],
    [[[5, 25], 51], 275],
    [[[43, 47], 10000], 2203160],
    [[[1], 100], 4950],
    [[[], 10000], 0],
    [[[0], 1], 0],
    [[[3, 0], 4], 3],
    [[[2, 3, 5, 7, 11], 10000], 39614537],
  ]),
};

const LONG_RUNS = `${"W".repeat(12)}B${"W".repeat(12)}BBB${"W".repeat(24)}B`;

const runLengthEncoding: Exercise = {
  id: "run-length-encoding",
  title: "Run-Length Encoding",
  difficulty: 2,
  exports: ["rleEncode", "rleDecode"],
  aliases: ["encodeRuns", "runLengthEncode"],
  statement: `Write two functions. rleEncode(text) replaces every run of two or more equal
characters by the run's length followed by the character, and leaves single characters as they
are: "AABCCCD" gives "2AB3CD" and "12WB" stands for twelve W then one B. rleDecode(text) undoes
it: "2AB3CD" gives "AABCCCD". Texts to encode contain letters and spaces only (no digits);
spaces are characters like any other.`,
  stub: `${functionStub("rleEncode(text)", "@param {string} text\n@returns {string}")}
${functionStub("rleDecode(text)", "@param {string} text\n@returns {string}")}`,
  solution: String.raw`export function rleEncode(text) {
  return text.replace(/(.)\1+/gs, (run, char) => run.length + char);
}

export function rleDecode(text) {
  return text.replace(/(\d+)(.)/gs, (_, count, char) => char.repeat(Number(count)));
}
`,
  visible: [
    returns(`rleEncode(${JSON.stringify(LONG_RUNS)})`, "12WB12W3B24WB"),
    returns('rleDecode("2AB3CD")', "AABCCCD"),
    returns('rleEncode("")', ""),
  ],
  hidden: [
    ...table("rleEncode", [
      [["XYZ"], "XYZ"],
      [["AABBBCCCC"], "2A3B4C"],
      [["  hsqq qww  "], "2 hs2q q2w2 "],
      [["aabbbcccc"], "2a3b4c"],
    ]),
    ...table("rleDecode", [
      [["XYZ"], "XYZ"],
      [["12WB12W3B24WB"], LONG_RUNS],
      [["2 hs2q q2w2 "], "  hsqq qww  "],
      [[""], ""],
    ]),
    returns('rleDecode(rleEncode("zzz ZZ  zZ"))', "zzz ZZ  zZ"),
    returns('rleEncode("a".repeat(120))', "120a"),
    returns('rleDecode("120a").length', 120),
  ],
};

const romanNumerals: Exercise = {
  id: "roman-numerals",
  title: "Roman Numerals",
  difficulty: 2,
  exports: ["toRoman"],
  aliases: ["romanNumeral", "toRomanNumeral"],
  statement: `Write toRoman(n): return the Roman numeral for an integer n from 1 to 3999, in the
standard subtractive form with the symbols I=1, V=5, X=10, L=50, C=100, D=500, M=1000: 4 is "IV",
9 is "IX", 40 is "XL", 90 is "XC", 400 is "CD", 900 is "CM", and 1990 is "MCMXC".`,
  stub: functionStub("toRoman(n)", "@param {number} n\n@returns {string}"),
  solution: `const SYMBOLS = [
  [1000, "M"], [900, "CM"], [500, "D"], [400, "CD"], [100, "C"], [90, "XC"],
  [50, "L"], [40, "XL"], [10, "X"], [9, "IX"], [5, "V"], [4, "IV"], [1, "I"],
];

export function toRoman(n) {
  let out = "";
  for (const [value, symbol] of SYMBOLS) {
    while (n >= value) {
      out += symbol;
      n -= value;
    }
  }
  return out;
}
`,
  visible: table("toRoman", [
    [[1], "I"],
    [[4], "IV"],
    [[1990], "MCMXC"],
  ]),
  hidden: table("toRoman", [
    [[3], "III"],
    [[9], "IX"],
    [[27], "XXVII"],
    [[48], "XLVIII"],
    [[49], "XLIX"],
    [[59], "LIX"],
    [[93], "XCIII"],
    [[141], "CXLI"],
    [[163], "CLXIII"],
    [[402], "CDII"],
    [[575], "DLXXV"],
    [[911], "CMXI"],
    [[1024], "MXXIV"],
    [[1666], "MDCLXVI"],
    [[2024], "MMXXIV"],
    [[3000], "MMM"],
    [[3999], "MMMCMXCIX"],
  ]),
};

const wordCount: Exercise = {
  id: "word-count",
  title: "Word Count",
  difficulty: 2,
  exports: ["countWords"],
  aliases: ["wordFrequencies", "tallyWords"],
  statement: `Write countWords(text): return an object mapping each word of text, in lower case, to
the number of times it occurs. Words are runs of letters (a-z, A-Z), digits and apostrophes;
every other character separates words. Apostrophes at the start or end of a word are quotation
marks and are not part of it ("'large'" is the word large), while inner ones stay ("can't").
Text without words gives {}.`,
  stub: functionStub("countWords(text)", "@param {string} text\n@returns {Record<string, number>}"),
  solution: `export function countWords(text) {
  const counts = {};
  for (const raw of text.toLowerCase().match(/[a-z0-9']+/g) || []) {
    const word = raw.replace(/^'+|'+$/g, "");
    if (word) counts[word] = (Object.hasOwn(counts, word) ? counts[word] : 0) + 1;
  }
  return counts;
}
`,
  visible: table("countWords", [
    [["word"], { word: 1 }],
    [["one of each"], { one: 1, of: 1, each: 1 }],
    [["one fish two fish red fish blue fish"], { one: 1, fish: 4, two: 1, red: 1, blue: 1 }],
  ]),
  hidden: table("countWords", [
    [
      ["car: carpet as java: javascript!!&@$%^&"],
      { car: 1, carpet: 1, as: 1, java: 1, javascript: 1 },
    ],
    [["testing, 1, 2 testing"], { testing: 2, "1": 1, "2": 1 }],
    [["Go go GO Stop stop"], { go: 3, stop: 2 }],
    [
      ["Joe can't tell between 'large' and large."],
      { joe: 1, "can't": 1, tell: 1, between: 1, large: 2, and: 1 },
    ],
    [
      ["First: don't laugh. Next: don't cry. You're getting it."],
      { first: 1, "don't": 2, laugh: 1, next: 1, cry: 1, "you're": 1, getting: 1, it: 1 },
    ],
    [["one,two,three"], { one: 1, two: 1, three: 1 }],
    [[" multiple   whitespaces"], { multiple: 1, whitespaces: 1 }],
    [[""], {}],
    [["Joe said 'hello'"], { joe: 1, said: 1, hello: 1 }],
    [["rah rah ah ah ah\troll"], { rah: 2, ah: 3, roll: 1 }],
  ]),
};

const rotationalCipher: Exercise = {
  id: "rotational-cipher",
  title: "Rotational Cipher",
  difficulty: 2,
  exports: ["rotateText"],
  aliases: ["caesarShift", "rotateLetters"],
  statement: `Write rotateText(text, shift): return text with every ASCII letter moved shift places
forward in the alphabet (0 <= shift <= 26), wrapping from z back to a and keeping its case; all
other characters are unchanged. Example: rotateText("OMG", 5) is "TRL".`,
  stub: functionStub(
    "rotateText(text, shift)",
    "@param {string} text\n@param {number} shift\n@returns {string}",
  ),
  solution: `export function rotateText(text, shift) {
  return text.replace(/[a-z]/gi, (char) => {
    const base = char <= "Z" ? 65 : 97;
    return String.fromCharCode(((char.charCodeAt(0) - base + shift) % 26) + base);
  });
}
`,
  visible: table("rotateText", [
    [["a", 1], "b"],
    [["OMG", 5], "TRL"],
    [["Testing 1 2 3 testing", 4], "Xiwxmrk 1 2 3 xiwxmrk"],
  ]),
  hidden: table("rotateText", [
    [["a", 0], "a"],
    [["a", 26], "a"],
    [["m", 13], "z"],
    [["n", 13], "a"],
    [["O M G", 5], "T R L"],
    [["Let's eat, Grandma!", 21], "Gzo'n zvo, Bmviyhv!"],
    [
      ["The quick brown fox jumps over the lazy dog.", 13],
      "Gur dhvpx oebja sbk whzcf bire gur ynml qbt.",
    ],
    [["xyz XYZ", 3], "abc ABC"],
    [["", 7], ""],
  ]),
};

const anagramFinder: Exercise = {
  id: "anagram-finder",
  title: "Anagram Finder",
  difficulty: 2,
  exports: ["findAnagrams"],
  aliases: ["anagramsOf", "selectAnagrams"],
  statement: `Write findAnagrams(word, candidates): return the candidates (an array of strings) that
are anagrams of word: the same letters the same number of times, ignoring case. A word is not
its own anagram, so candidates equal to word ignoring case are left out. Keep the candidates'
original spelling and order.`,
  stub: functionStub(
    "findAnagrams(word, candidates)",
    "@param {string} word\n@param {string[]} candidates\n@returns {string[]}",
  ),
  solution: `const letters = (word) => [...word.toLowerCase()].sort().join("");

export function findAnagrams(word, candidates) {
  const lower = word.toLowerCase();
  const key = letters(word);
  return candidates.filter((c) => c.toLowerCase() !== lower && letters(c) === key);
}
`,
  visible: table("findAnagrams", [
    [["listen", ["enlists", "google", "inlets", "banana"]], ["inlets"]],
    [
      ["master", ["stream", "pigeon", "maters"]],
      ["stream", "maters"],
    ],
    [["diaper", ["hello", "world", "zombies", "pants"]], []],
  ]),
  hidden: table("findAnagrams", [
    [
      ["solemn", ["lemons", "cherry", "melons"]],
      ["lemons", "melons"],
    ],
    [["good", ["dog", "goody"]], []],
    [
      ["allergy", ["gallery", "ballerina", "regally", "clergy", "largely", "leading"]],
      ["gallery", "regally", "largely"],
    ],
    [
      ["nose", ["Eons", "ONES"]],
      ["Eons", "ONES"],
    ],
    [["Orchestra", ["cashregister", "Carthorse", "radishes"]], ["Carthorse"]],
    [["BANANA", ["Banana"]], []],
    [["go", ["Go"]], []],
    [["tapper", ["patter"]], []],
    [
      ["abc", ["cab", "bca", "abc", "ABC", "cba"]],
      ["cab", "bca", "cba"],
    ],
    [["mass", ["last"]], []],
  ]),
};

const LONG_SORTED = [1, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 634];
const SHORT_SORTED = [1, 3, 4, 6, 8, 9, 11];

const binarySearch: Exercise = {
  id: "binary-search",
  title: "Binary Search",
  difficulty: 2,
  exports: ["binarySearch"],
  aliases: ["findSortedIndex", "searchSorted"],
  statement: `Write binarySearch(items, target): items is an array of distinct numbers sorted in
ascending order; return the index of target in items, or -1 when it is absent. Use binary
search (halve the range at each step) rather than scanning every element.`,
  stub: functionStub(
    "binarySearch(items, target)",
    "@param {number[]} items\n@param {number} target\n@returns {number}",
  ),
  solution: `export function binarySearch(items, target) {
  let low = 0;
  let high = items.length - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (items[middle] === target) return middle;
    if (items[middle] < target) low = middle + 1;
    else high = middle - 1;
  }
  return -1;
}
`,
  visible: table("binarySearch", [
    [[[6], 6], 0],
    [[SHORT_SORTED, 6], 3],
    [[SHORT_SORTED, 7], -1],
  ]),
  hidden: table("binarySearch", [
    [[SHORT_SORTED, 1], 0],
    [[SHORT_SORTED, 11], 6],
    [[LONG_SORTED, 144], 9],
    [[LONG_SORTED.slice(0, 12), 21], 5],
    [[[], 1], -1],
    [[[1, 2], 0], -1],
    [[[1, 2], 3], -1],
    [[SHORT_SORTED, 13], -1],
    [[[-5, -2, 0, 4], -2], 1],
    [[[2, 4], 4], 1],
  ]),
};

const luhn: Exercise = {
  id: "luhn",
  title: "Luhn Checksum",
  difficulty: 2,
  exports: ["isValidLuhn"],
  aliases: ["luhnCheck", "passesLuhn"],
  statement: `Write isValidLuhn(input): decide whether the string input is a valid number under
the Luhn formula. Spaces are allowed and ignored; any other non-digit character makes it
invalid, and so does having fewer than two digits. The check: starting from the rightmost digit,
double every second digit (subtract 9 from a doubled digit above 9), sum all digits, and the
number is valid when the sum is divisible by 10.`,
  stub: functionStub("isValidLuhn(input)", "@param {string} input\n@returns {boolean}"),
  solution: `export function isValidLuhn(input) {
  const digits = input.replace(/ /g, "");
  if (digits.length <= 1 || /[^0-9]/.test(digits)) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let digit = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}
`,
  visible: table("isValidLuhn", [
    [["4539 3195 0343 6467"], true],
    [["8273 1232 7352 0569"], false],
    [["0"], false],
  ]),
  hidden: table("isValidLuhn", [
    [["1"], false],
    [[" 0"], false],
    [["059"], true],
    [["59"], true],
    [["055 444 285"], true],
    [["055 444 286"], false],
    [["055-444-285"], false],
    [["055# 444$ 285"], false],
    [["0000 0"], true],
    [["091"], true],
    [["9999999999 9999999999 9999999999 9999999999"], true],
    [["109"], true],
    [["055b 444 285"], false],
    [[":9"], false],
    [["59%59"], false],
    [["00"], true],
    [["095 245 88"], true],
    [["234 567 891 234"], true],
  ]),
};

const matchingBrackets: Exercise = {
  id: "matching-brackets",
  title: "Matching Brackets",
  difficulty: 2,
  exports: ["isBalanced"],
  aliases: ["bracketsMatch", "isBracketBalanced"],
  statement: `Write isBalanced(text): return true when every bracket in text, of the kinds (),
[] and {}, is closed by the matching kind in the right order and properly nested, false
otherwise. All other characters are ignored.`,
  stub: functionStub("isBalanced(text)", "@param {string} text\n@returns {boolean}"),
  solution: `const PAIRS = { ")": "(", "]": "[", "}": "{" };

export function isBalanced(text) {
  const open = [];
  for (const char of text) {
    if (char === "(" || char === "[" || char === "{") open.push(char);
    else if (char in PAIRS && open.pop() !== PAIRS[char]) return false;
  }
  return open.length === 0;
}
`,
  visible: table("isBalanced", [
    [["[]"], true],
    [["[)"], false],
    [["{[()]}"], true],
  ]),
  hidden: table("isBalanced", [
    [[""], true],
    [["[["], false],
    [["}{"], false],
    [["{]"], false],
    [["{ }"], true],
    [["{[])"], false],
    [["{[}]"], false],
    [["([{}({}[])])"], true],
    [["{}["], false],
    [["[]]"], false],
    [["(((185 + 223.85) * 15) - 543)/2"], true],
    [["[({]})"], false],
    [["x(y[z]{w})"], true],
  ]),
};

const flattenArray: Exercise = {
  id: "flatten-array",
  title: "Flatten Array",
  difficulty: 2,
  exports: ["flattenDeep"],
  aliases: ["flattenNested", "flattenAll"],
  statement: `Write flattenDeep(value): value is an array whose elements may themselves be arrays,
nested to any depth. Return one flat array of all the non-array elements in order, leaving out
null and undefined wherever they occur. Other values, including false, 0 and "", are kept.`,
  stub: functionStub("flattenDeep(value)", "@param {unknown[]} value\n@returns {unknown[]}"),
  solution: `export function flattenDeep(value) {
  const out = [];
  const walk = (item) => {
    if (Array.isArray(item)) item.forEach(walk);
    else if (item !== null && item !== undefined) out.push(item);
  };
  walk(value);
  return out;
}
`,
  visible: table("flattenDeep", [
    [[[1, [2, 3, null, 4], [null], 5]], [1, 2, 3, 4, 5]],
    [[[0, 1, 2]], [0, 1, 2]],
    [[[]], []],
  ]),
  hidden: [
    ...table("flattenDeep", [
      [[[1, [2, [[3]], [4, [[5]]], 6, 7], 8]], [1, 2, 3, 4, 5, 6, 7, 8]],
      [[[0, 2, [[2, 3], 8, [[100]], null, [[null]]], -2]], [0, 2, 2, 3, 8, 100, -2]],
      [[[null, [[[null]]], null, null, [[null, null], null], null]], []],
      [[[[[[["deep"]]]]]], ["deep"]],
      [[["a", ["b", ["c"]], "d"]], ["a", "b", "c", "d"]],
      [[[[], [[]], [[], [[]]]]], []],
      [[[false, 0, "", [false]]], [false, 0, "", false]],
    ]),
    returns("flattenDeep([1, undefined, [undefined, 2]])", [1, 2]),
  ],
};

const primeFactors: Exercise = {
  id: "prime-factors",
  title: "Prime Factors",
  difficulty: 2,
  exports: ["primeFactors"],
  aliases: ["factorize", "primeFactorsOf"],
  statement: `Write primeFactors(n): return the prime factors of the positive integer n in
ascending order, each repeated as often as it divides n: 12 gives [2, 2, 3] and 1 gives [].
Inputs stay below 100 billion, so trial division up to the square root is fast enough.`,
  stub: functionStub("primeFactors(n)", "@param {number} n\n@returns {number[]}"),
  solution: `export function primeFactors(n) {
  const factors = [];
  for (let divisor = 2; divisor * divisor <= n; divisor++) {
    while (n % divisor === 0) {
      factors.push(divisor);
      n /= divisor;
    }
  }
  if (n > 1) factors.push(n);
  return factors;
}
`,
  visible: table("primeFactors", [
    [[1], []],
    [[2], [2]],
    [[12], [2, 2, 3]],
  ]),
  hidden: table("primeFactors", [
    [[9], [3, 3]],
    [[8], [2, 2, 2]],
    [[6], [2, 3]],
    [[625], [5, 5, 5, 5]],
    [[901255], [5, 17, 23, 461]],
    [[93819012551], [11, 9539, 894119]],
    [[97], [97]],
    [[1024], [2, 2, 2, 2, 2, 2, 2, 2, 2, 2]],
    [[360], [2, 2, 2, 3, 3, 5]],
    [[999983], [999983]],
  ]),
};

const collatz: Exercise = {
  id: "collatz",
  title: "Collatz Conjecture",
  difficulty: 2,
  exports: ["collatzSteps"],
  aliases: ["stepsToOne", "collatzLength"],
  statement: `Write collatzSteps(n): count the steps needed to reach 1 from n, where each step
halves an even number and turns an odd number x into 3x + 1. collatzSteps(1) is 0 and
collatzSteps(16) is 4. When n is not a positive integer (0, negative, or a fraction), throw an
Error with the message "Only positive integers are allowed".`,
  stub: functionStub("collatzSteps(n)", "@param {number} n\n@returns {number}"),
  solution: `export function collatzSteps(n) {
  if (!Number.isInteger(n) || n < 1) throw new Error("Only positive integers are allowed");
  let steps = 0;
  while (n !== 1) {
    n = n % 2 === 0 ? n / 2 : 3 * n + 1;
    steps++;
  }
  return steps;
}
`,
  visible: table("collatzSteps", [
    [[1], 0],
    [[16], 4],
    [[12], 9],
  ]),
  hidden: [
    ...table("collatzSteps", [
      [[1000000], 152],
      [[27], 111],
      [[7], 16],
      [[2], 1],
      [[3], 7],
    ]),
    throws("collatzSteps(0)", "Only positive integers are allowed"),
    throws("collatzSteps(-15)", "Only positive integers are allowed"),
    throws("collatzSteps(2.5)", "Only positive integers are allowed"),
  ],
};

const PASCAL_6 = [[1], [1, 1], [1, 2, 1], [1, 3, 3, 1], [1, 4, 6, 4, 1], [1, 5, 10, 10, 5, 1]];

const pascalsTriangle: Exercise = {
  id: "pascals-triangle",
  title: "Pascal's Triangle",
  difficulty: 2,
  exports: ["pascalRows"],
  aliases: ["pascalsTriangle", "buildPascal"],
  statement: `Write pascalRows(count): return the first count rows of Pascal's triangle as an
array of arrays. Row 0 is [1]; every later row starts and ends with 1 and each inner number is
the sum of the two numbers above it. pascalRows(3) is [[1], [1, 1], [1, 2, 1]] and pascalRows(0)
is [].`,
  stub: functionStub("pascalRows(count)", "@param {number} count\n@returns {number[][]}"),
  solution: `export function pascalRows(count) {
  const rows = [];
  for (let r = 0; r < count; r++) {
    const previous = rows[r - 1];
    const row = [1];
    for (let c = 1; c < r; c++) row.push(previous[c - 1] + previous[c]);
    if (r > 0) row.push(1);
    rows.push(row);
  }
  return rows;
}
`,
  visible: table("pascalRows", [
    [[0], []],
    [[1], [[1]]],
    [[3], PASCAL_6.slice(0, 3)],
  ]),
  hidden: [
    ...table("pascalRows", [
      [[2], PASCAL_6.slice(0, 2)],
      [[4], PASCAL_6.slice(0, 4)],
      [[5], PASCAL_6.slice(0, 5)],
      [[6], PASCAL_6],
    ]),
    returns("pascalRows(10)[9]", [1, 9, 36, 84, 126, 126, 84, 36, 9, 1]),
    returns("pascalRows(20)[19][10]", 92378),
    returns("pascalRows(30).length", 30),
  ],
};

/** Difficulty 1 and 2, easiest first. */
export const BASIC_EXERCISES: readonly Exercise[] = [
  reverseWords,
  palindrome,
  fizzBuzz,
  leapYear,
  hamming,
  acronym,
  pangram,
  raindrops,
  isogram,
  sumOfMultiples,
  runLengthEncoding,
  romanNumerals,
  wordCount,
  rotationalCipher,
  anagramFinder,
  binarySearch,
  luhn,
  matchingBrackets,
  flattenArray,
  primeFactors,
  collatz,
  pascalsTriangle,
];
