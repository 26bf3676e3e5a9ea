/**
 * The handbook search behind `search_handbook`: idf-weighted term overlap over each passage's
 * title, keywords and text. Scores are normalised to 0..1 (the share of the query's weight a
 * passage matches), so a weak hit reads as weak whatever the query's length.
 */
import { helpdeskData, type Passage } from "./data.js";

const STOPWORDS = new Set(
  (
    "a an the and or but if of to in on at by for with from into onto about as is are was were be " +
    "been being am do does did done have has had having i i'm me my mine we our you your it its " +
    "this that these those there here what which who whom whose when where why how can could " +
    "should would will shall may might must not no yes so than then too very just also any some " +
    "each every all more most much many own same other such only get got up out over off again " +
    "after before before under after while there their they them he she his her hi hello thanks " +
    "thank please"
  ).split(" "),
);

/** Lowercase content words, plural "s" dropped, so that "days" matches "day". */
export function tokenize(text: string): string[] {
  const words = text
    .toLowerCase()
    .replace(/[’']s\b/g, "")
    .split(/[^a-z0-9£%]+/);
  const out: string[] = [];
  for (const word of words) {
    if (word === "" || STOPWORDS.has(word)) continue;
    const stem =
      word.length > 3 && word.endsWith("s") && !word.endsWith("ss") ? word.slice(0, -1) : word;
    out.push(stem);
  }
  return out;
}

export interface SearchHit {
  id: string;
  title: string;
  score: number;
}

interface Index {
  /** Per passage, each term's weight: 2 in the title or keywords, 1 in the text alone. */
  weights: Map<string, number>[];
  idf: Map<string, number>;
  unseenIdf: number;
  passages: readonly Passage[];
}

const TITLE_WEIGHT = 2;
const MAX_HITS = 3;

let index: Index | undefined;

function buildIndex(): Index {
  const { passages } = helpdeskData();
  const weights = passages.map((p) => {
    const w = new Map<string, number>();
    for (const t of tokenize(p.text)) w.set(t, 1);
    for (const t of tokenize(`${p.title} ${p.keywords.join(" ")}`)) w.set(t, TITLE_WEIGHT);
    return w;
  });
  const df = new Map<string, number>();
  for (const w of weights) for (const t of w.keys()) df.set(t, (df.get(t) ?? 0) + 1);
  const n = passages.length;
  const idf = new Map([...df].map(([t, d]) => [t, Math.log(1 + n / d)]));
  return { weights, idf, unseenIdf: Math.log(1 + n), passages };
}

/** Every passage's score for the query, in handbook order. */
export function scorePassages(query: string): number[] {
  index ??= buildIndex();
  const { weights, idf, unseenIdf } = index;
  const terms = [...new Set(tokenize(query))];
  const total = terms.reduce((s, t) => s + (idf.get(t) ?? unseenIdf) * TITLE_WEIGHT, 0);
  if (total === 0) return weights.map(() => 0);
  return weights.map(
    (w) => terms.reduce((s, t) => s + (idf.get(t) ?? 0) * (w.get(t) ?? 0), 0) / total,
  );
}

const round2 = (x: number) => Math.round(x * 100) / 100;

/** The best passages for the query (at most three, score above zero), best first. */
export function searchHandbook(query: string): SearchHit[] {
  const scores = scorePassages(query);
  const { passages } = helpdeskData();
  return scores
    .map((score, i) => ({ score, i }))
    .filter((h) => h.score > 0)
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .slice(0, MAX_HITS)
    .map(({ score, i }) => {
      const p = passages[i] as Passage;
      return { id: p.id, title: p.title, score: round2(score) };
    });
}

/** Whether an unfaulted search for the query finds the passage among its hits. */
export function queryFinds(query: string, passageId: string): boolean {
  return searchHandbook(query).some((hit) => hit.id === passageId);
}
