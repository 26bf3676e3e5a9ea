/**
 * The embedded engine's model language. The SQL runtime has no statsmodels, so a model is one
 * call in statsmodels' formula style: `ols(y ~ x + z)`, `logit(y ~ x + C(g) + x:z)`,
 * `probit(...)`, `poisson(...)`, `negativebinomial(...)`, or
 * `glm(y ~ x, family = binomial, link = probit)`. The formula keeps patsy's meaning for what
 * it allows: column names (backticks around awkward ones), `C(col)` for a categorical,
 * `a:b` interactions, `a*b` = `a + b + a:b`, parentheses, `- term`, and `- 1` / `+ 0` to drop
 * the intercept. Transforms (`log(x)`, `I(x**2)`) are refused: in BLADE they are transform
 * units, whose columns are matched on their own (docs/blade-spec.md §2).
 */

export class ModelFormulaError extends Error {
  override name = "ModelFormulaError";
}

export const MODEL_FAMILIES = ["gaussian", "binomial", "poisson", "negativebinomial"] as const;
export type ModelFamily = (typeof MODEL_FAMILIES)[number];

export const MODEL_LINKS = ["identity", "logit", "probit", "cloglog", "log"] as const;
export type ModelLink = (typeof MODEL_LINKS)[number];

/**
 * The statsmodels entry point a call stands for. It decides more than family and link:
 * `ols` reports t p-values, `logit`/`probit`/`poisson`/`negativebinomial` are statsmodels'
 * discrete models (Newton, observed information, z), `glm` is IRLS with z p-values.
 */
export const MODEL_METHODS = [
  "ols",
  "logit",
  "probit",
  "poisson",
  "negativebinomial",
  "glm",
] as const;
export type ModelMethod = (typeof MODEL_METHODS)[number];

/** The links each family may take in `glm(...)` (those the fitter implements). */
export const FAMILY_LINKS: Readonly<Record<ModelFamily, readonly ModelLink[]>> = {
  gaussian: ["identity", "log"],
  binomial: ["logit", "probit", "cloglog", "log"],
  poisson: ["log", "identity"],
  negativebinomial: ["log"],
};

/** What the fixed-family methods fit. */
const METHOD_MODELS: Readonly<
  Record<Exclude<ModelMethod, "glm">, { family: ModelFamily; link: ModelLink }>
> = {
  ols: { family: "gaussian", link: "identity" },
  logit: { family: "binomial", link: "logit" },
  probit: { family: "binomial", link: "probit" },
  poisson: { family: "poisson", link: "log" },
  negativebinomial: { family: "negativebinomial", link: "log" },
};

/** Other spellings of a family a user may write in `glm(..., family = ...)`. */
const FAMILY_ALIASES: Readonly<Record<string, ModelFamily>> = {
  gaussian: "gaussian",
  normal: "gaussian",
  binomial: "binomial",
  poisson: "poisson",
  negativebinomial: "negativebinomial",
  negative_binomial: "negativebinomial",
};

/** One factor of a term: a data column, numeric or categorical as the data decide, or `C(col)`. */
export interface FormulaFactor {
  column: string;
  /** Written `C(col)`: categorical whatever the column's dtype. */
  explicitCategorical: boolean;
}

/** A term: one or more factors (an interaction), in the order first written. */
export type FormulaTerm = FormulaFactor[];

export interface ModelCall {
  method: ModelMethod;
  family: ModelFamily;
  link: ModelLink;
  /** The dependent variable's column. */
  dv: string;
  /**
   * The terms as patsy names them, intercept excluded: `x`, `C(g)`, `x:C(g)`; in the order
   * first written, each once (`x:z` and `z:x` are one term, named as first written).
   */
  terms: string[];
  /** The same terms, factor by factor, in the same order (what the fitter builds from). */
  termFactors: FormulaTerm[];
  intercept: boolean;
}

/** The family's canonical link: the one statsmodels uses when none is named. */
export function canonicalLink(family: ModelFamily): ModelLink {
  switch (family) {
    case "gaussian":
      return "identity";
    case "binomial":
      return "logit";
    case "poisson":
    case "negativebinomial":
      return "log";
  }
}

/** A factor's name as patsy writes it. */
export function factorName(factor: FormulaFactor): string {
  return factor.explicitCategorical ? `C(${factor.column})` : factor.column;
}

/** A term's name as patsy writes it: factor names joined by ":". */
export function termName(term: FormulaTerm): string {
  return term.map(factorName).join(":");
}

/** The same term whatever the factor order (patsy's Term equality is over the factor set). */
function termKey(term: FormulaTerm): string {
  return JSON.stringify(term.map(factorName).sort());
}

// ---- Tokens ----

type Token =
  | { kind: "name"; text: string; quoted: boolean; at: number }
  | { kind: "number"; text: string; at: number }
  | { kind: "string"; text: string; at: number }
  | { kind: "op"; text: string; at: number }
  | { kind: "end"; at: number };

const OPERATORS = ["**", "~", "+", "-", "*", ":", "(", ")", ",", "=", "/"];

function fail(code: string, at: number, message: string): never {
  const where = at >= code.length ? "at the end" : `at column ${at + 1}`;
  throw new ModelFormulaError(`model call ${where}: ${message} (in \`${code.trim()}\`)`);
}

function tokenize(code: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < code.length) {
    const char = code[i] as string;
    if (/\s/.test(char)) {
      i++;
      continue;
    }
    if (char === "`") {
      const close = code.indexOf("`", i + 1);
      if (close < 0) fail(code, i, "unclosed backtick");
      const text = code.slice(i + 1, close);
      if (text === "") fail(code, i, "empty column name");
      tokens.push({ kind: "name", text, quoted: true, at: i });
      i = close + 1;
      continue;
    }
    if (char === '"' || char === "'") {
      const close = code.indexOf(char, i + 1);
      if (close < 0) fail(code, i, "unclosed quote");
      tokens.push({ kind: "string", text: code.slice(i + 1, close), at: i });
      i = close + 1;
      continue;
    }
    const name = /^[A-Za-z_][A-Za-z0-9_.]*/.exec(code.slice(i));
    if (name) {
      tokens.push({ kind: "name", text: name[0], quoted: false, at: i });
      i += name[0].length;
      continue;
    }
    const number = /^[0-9]+(\.[0-9]*)?/.exec(code.slice(i));
    if (number) {
      tokens.push({ kind: "number", text: number[0], at: i });
      i += number[0].length;
      continue;
    }
    const op = OPERATORS.find((o) => code.startsWith(o, i));
    if (!op) fail(code, i, `unexpected character "${char}"`);
    tokens.push({ kind: "op", text: op, at: i });
    i += op.length;
  }
  tokens.push({ kind: "end", at: code.length });
  return tokens;
}

// ---- Formula right-hand side: patsy's operators over term lists ----

/** A parsed piece of the right-hand side: terms, or the intercept literal 0 / 1. */
type RhsValue = { kind: "terms"; terms: FormulaTerm[] } | { kind: "literal"; value: 0 | 1 };

/** Appends terms not already present (patsy keeps the first of equal terms). */
function unionTerms(a: FormulaTerm[], b: FormulaTerm[]): FormulaTerm[] {
  const out = a.slice();
  const seen = new Set(a.map(termKey));
  for (const term of b) {
    const key = termKey(term);
    if (!seen.has(key)) {
      seen.add(key);
      out.push(term);
    }
  }
  return out;
}

/** a:b for term lists: every pairing, factors merged (a repeated factor counts once). */
function interactTerms(a: FormulaTerm[], b: FormulaTerm[]): FormulaTerm[] {
  const out: FormulaTerm[] = [];
  for (const left of a) {
    for (const right of b) {
      const merged = left.slice();
      for (const factor of right) {
        if (!merged.some((f) => factorName(f) === factorName(factor))) merged.push(factor);
      }
      out.push(merged);
    }
  }
  return unionTerms([], out);
}

class FormulaParser {
  private pos = 0;
  /** Whether the right-hand side keeps the intercept; `- 1`, `+ 0` and a leading `0` drop it. */
  intercept = true;

  constructor(
    private readonly code: string,
    private readonly tokens: Token[],
    start: number,
  ) {
    this.pos = start;
  }

  get position(): number {
    return this.pos;
  }

  peek(): Token {
    return this.tokens[this.pos] as Token;
  }

  next(): Token {
    const token = this.peek();
    if (token.kind !== "end") this.pos++;
    return token;
  }

  isOp(text: string): boolean {
    const token = this.peek();
    return token.kind === "op" && token.text === text;
  }

  expectOp(text: string): void {
    const token = this.peek();
    if (!this.isOp(text)) fail(this.code, token.at, `expected "${text}"`);
    this.pos++;
  }

  /** A column name: the dependent variable or a factor. */
  columnName(): { name: string; at: number } {
    const token = this.next();
    if (token.kind !== "name") fail(this.code, token.at, "expected a column name");
    return { name: token.text, at: token.at };
  }

  /** The whole right-hand side: `+`/`-` separated pieces, at the top level or in parentheses. */
  sum(topLevel: boolean): FormulaTerm[] {
    let terms: FormulaTerm[] = [];
    let sign: "+" | "-" = "+";
    if (this.isOp("-")) {
      this.pos++;
      sign = "-";
    } else if (this.isOp("+")) {
      this.pos++;
    }
    for (;;) {
      const at = this.peek().at;
      const value = this.product();
      if (value.kind === "literal") {
        if (!topLevel) fail(this.code, at, "0 and 1 may only be added or removed at the top level");
        // patsy: "+ 1" keeps the intercept, "- 1" and "+ 0" drop it, "- 0" keeps it.
        this.intercept = sign === "+" ? value.value === 1 : value.value === 0;
      } else if (sign === "+") {
        terms = unionTerms(terms, value.terms);
      } else {
        const removed = new Set(value.terms.map(termKey));
        terms = terms.filter((t) => !removed.has(termKey(t)));
      }
      if (this.isOp("+")) {
        this.pos++;
        sign = "+";
      } else if (this.isOp("-")) {
        this.pos++;
        sign = "-";
      } else {
        return terms;
      }
    }
  }

  /** `a * b`: a + b + a:b. */
  product(): RhsValue {
    let left = this.interaction();
    while (this.isOp("*")) {
      const at = this.next().at;
      const right = this.interaction();
      if (left.kind === "literal" || right.kind === "literal") {
        fail(this.code, at, "0 and 1 cannot be multiplied");
      }
      left = {
        kind: "terms",
        terms: unionTerms(
          unionTerms(left.terms, right.terms),
          interactTerms(left.terms, right.terms),
        ),
      };
    }
    return left;
  }

  /** `a : b`. */
  interaction(): RhsValue {
    let left = this.atom();
    while (this.isOp(":")) {
      const at = this.next().at;
      const right = this.atom();
      if (left.kind === "literal" || right.kind === "literal") {
        fail(this.code, at, "0 and 1 cannot be part of an interaction");
      }
      left = { kind: "terms", terms: interactTerms(left.terms, right.terms) };
    }
    return left;
  }

  atom(): RhsValue {
    const token = this.next();
    if (token.kind === "number") {
      if (token.text === "0" || token.text === "1") {
        return { kind: "literal", value: token.text === "0" ? 0 : 1 };
      }
      fail(this.code, token.at, `a number (${token.text}) is not a term; only 0 and 1 are`);
    }
    if (token.kind === "op" && token.text === "(") {
      const terms = this.sum(false);
      this.expectOp(")");
      return { kind: "terms", terms };
    }
    if (token.kind === "op" && (token.text === "**" || token.text === "/")) {
      fail(this.code, token.at, `"${token.text}" is not supported; write the terms out`);
    }
    if (token.kind !== "name") fail(this.code, token.at, "expected a column name");
    if (!token.quoted && this.isOp("(")) return this.call(token);
    return { kind: "terms", terms: [[{ column: token.text, explicitCategorical: false }]] };
  }

  /** `C(col)` is the only function a formula may hold. */
  private call(fn: Token & { kind: "name" }): RhsValue {
    if (fn.text !== "C") {
      fail(
        this.code,
        fn.at,
        `unknown function ${fn.text}(): transforms such as log() belong in a transform unit that derives a column, not in the formula`,
      );
    }
    this.expectOp("(");
    const column = this.columnName();
    if (!this.isOp(")")) {
      fail(this.code, this.peek().at, "C() takes one column and no options here");
    }
    this.pos++;
    return { kind: "terms", terms: [[{ column: column.name, explicitCategorical: true }]] };
  }
}

function parseFamily(code: string, token: Token): ModelFamily {
  if (token.kind !== "name" && token.kind !== "string") fail(code, token.at, "expected a family");
  const family = FAMILY_ALIASES[token.text.toLowerCase()];
  if (!family) {
    fail(code, token.at, `unknown family "${token.text}" (known: ${MODEL_FAMILIES.join(", ")})`);
  }
  return family;
}

function parseLink(code: string, token: Token): ModelLink {
  if (token.kind !== "name" && token.kind !== "string") fail(code, token.at, "expected a link");
  const link = token.text.toLowerCase();
  if (!(MODEL_LINKS as readonly string[]).includes(link)) {
    fail(code, token.at, `unknown link "${token.text}" (known: ${MODEL_LINKS.join(", ")})`);
  }
  return link as ModelLink;
}

/** `family = binomial` also accepts `binomial()`, as statsmodels users write it. */
function skipEmptyParens(parser: FormulaParser): void {
  if (parser.isOp("(")) {
    parser.next();
    parser.expectOp(")");
  }
}

/** The formula `dv ~ rhs`, from its tokens (inside a quoted string or bare). */
function parseFormula(
  code: string,
  tokens: Token[],
  start: number,
): { dv: string; terms: FormulaTerm[]; intercept: boolean; end: number } {
  const parser = new FormulaParser(code, tokens, start);
  const first = parser.peek();
  if (first.kind === "op" && first.text === "~")
    fail(code, first.at, "the formula needs a dependent variable before ~");
  const dv = parser.columnName();
  if (parser.isOp("(")) {
    fail(
      code,
      dv.at,
      `the dependent variable must be a column, not ${dv.name}(...); derive it in a transform unit`,
    );
  }
  parser.expectOp("~");
  const terms = parser.sum(true);
  for (const term of terms) {
    for (const factor of term) {
      if (factor.column === dv.name) {
        fail(
          code,
          dv.at,
          `the dependent variable "${dv.name}" also appears on the right-hand side`,
        );
      }
    }
  }
  return { dv: dv.name, terms, intercept: parser.intercept, end: parser.position };
}

/**
 * Parses a model call. One line of error (ModelFormulaError) naming the column of the problem.
 */
export function parseModelCall(code: string): ModelCall {
  const source = code.trim().replace(/;$/, "");
  const tokens = tokenize(source);
  const head = tokens[0] as Token;
  if (head.kind !== "name") fail(source, head.at, "expected a model call such as ols(y ~ x)");
  // statsmodels users write smf.logit(...) or sm.formula.logit(...): the last part names it.
  const method = head.text.split(".").pop()?.toLowerCase() ?? "";
  if (!(MODEL_METHODS as readonly string[]).includes(method)) {
    fail(source, head.at, `unknown model "${head.text}" (known: ${MODEL_METHODS.join(", ")})`);
  }
  if (!(tokens[1]?.kind === "op" && tokens[1].text === "("))
    fail(source, tokens[1]?.at ?? source.length, 'expected "("');

  let formula: { dv: string; terms: FormulaTerm[]; intercept: boolean };
  let pos: number;
  const formulaToken = tokens[2] as Token;
  if (formulaToken.kind === "string") {
    // ols("y ~ x"): the formula as statsmodels takes it, a string.
    const inner = tokenize(formulaToken.text);
    const parsed = parseFormula(formulaToken.text, inner, 0);
    const rest = inner[parsed.end] as Token;
    if (rest.kind !== "end") fail(formulaToken.text, rest.at, "unexpected text after the formula");
    formula = parsed;
    pos = 3;
  } else {
    const parsed = parseFormula(source, tokens, 2);
    formula = parsed;
    pos = parsed.end;
  }

  // Keyword arguments.
  const parser = new FormulaParser(source, tokens, pos);
  let family: ModelFamily | undefined;
  let link: ModelLink | undefined;
  while (parser.isOp(",")) {
    parser.next();
    const key = parser.next();
    if (key.kind !== "name")
      fail(source, key.at, "expected a keyword argument such as family = binomial");
    parser.expectOp("=");
    const value = parser.next();
    const name = key.text.toLowerCase();
    if (name === "family") {
      if (method !== "glm")
        fail(source, key.at, `${method}() has a fixed family; use glm(...) to choose one`);
      family = parseFamily(source, value);
      skipEmptyParens(parser);
    } else if (name === "link") {
      if (method !== "glm")
        fail(source, key.at, `${method}() has a fixed link; use glm(...) to choose one`);
      link = parseLink(source, value);
      skipEmptyParens(parser);
    } else if (name === "data") {
      if (value.kind !== "name" || value.text !== "df") fail(source, value.at, "data must be df");
    } else {
      fail(source, key.at, `unknown argument "${key.text}" (known: family, link, data)`);
    }
  }
  parser.expectOp(")");
  const end = parser.peek();
  if (end.kind !== "end") fail(source, end.at, "unexpected text after the model call");

  let model: { family: ModelFamily; link: ModelLink };
  if (method === "glm") {
    const chosen = family ?? "gaussian";
    const chosenLink = link ?? canonicalLink(chosen);
    if (!FAMILY_LINKS[chosen].includes(chosenLink)) {
      fail(
        source,
        source.length,
        `link "${chosenLink}" is not available for family ${chosen} (available: ${FAMILY_LINKS[chosen].join(", ")})`,
      );
    }
    model = { family: chosen, link: chosenLink };
  } else {
    model = METHOD_MODELS[method as Exclude<ModelMethod, "glm">];
  }
  return {
    method: method as ModelMethod,
    ...model,
    dv: formula.dv,
    terms: formula.terms.map(termName),
    termFactors: formula.terms,
    intercept: formula.intercept,
  };
}
