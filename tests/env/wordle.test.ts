import { describe, expect, it } from "vitest";
import {
  chooseGuess,
  FIRST_GUESS,
  nodeAfter,
  solveWordle,
} from "../../src/agent/reference/wordle.js";
import { createRng } from "../../src/env/rng.js";
import { checkTaskIndex, EpisodeDoneError, type StepResult } from "../../src/env/types.js";
import { ANSWER_WORDS, GUESS_WORDS } from "../../src/env/wordle/data.js";
import {
  decodeFeedback,
  encodeFeedback,
  feedbackCode,
  formatFeedback,
  parseFeedback,
  SOLVED_CODE,
} from "../../src/env/wordle/feedback.js";
import { generateTask, MAX_ACTIONS, MAX_GUESSES, wordleEnv } from "../../src/env/wordle/index.js";
import { runReferenceEpisode } from "../fixtures/reference-episode.js";

const { info } = wordleEnv;

/** A valid guess that is not task 0's answer. */
function wrongGuess(answer: string): string {
  return answer === "crane" ? "slate" : "crane";
}

function feedbackOf(guess: string, answer: string): string {
  return formatFeedback(guess, decodeFeedback(feedbackCode(guess, answer)));
}

describe("wordle word lists", () => {
  it("has at least 500 distinct lowercase 5-letter answers, all accepted as guesses", () => {
    expect(new Set(ANSWER_WORDS).size).toBe(ANSWER_WORDS.length);
    expect(ANSWER_WORDS.length).toBeGreaterThanOrEqual(500);
    expect(new Set(GUESS_WORDS).size).toBe(GUESS_WORDS.length);
    expect(GUESS_WORDS.length).toBeGreaterThan(ANSWER_WORDS.length * 4);
    const guesses = new Set(GUESS_WORDS);
    for (const word of GUESS_WORDS) expect(word).toMatch(/^[a-z]{5}$/);
    for (const word of ANSWER_WORDS) expect(guesses.has(word)).toBe(true);
  });
});

describe("wordle feedback", () => {
  it("scores repeated letters as Wordle does", () => {
    expect(feedbackOf("paper", "apple")).toBe("p(yellow) a(yellow) p(green) e(yellow) r(grey)");
    expect(feedbackOf("geese", "those")).toBe("g(grey) e(grey) e(grey) s(green) e(green)");
    expect(feedbackOf("kebab", "abbey")).toBe("k(grey) e(yellow) b(green) a(yellow) b(yellow)");
    expect(feedbackOf("rarer", "array")).toBe("r(yellow) a(yellow) r(green) e(grey) r(grey)");
    expect(feedbackOf("llama", "hello")).toBe("l(yellow) l(yellow) a(grey) m(grey) a(grey)");
    expect(feedbackCode("crane", "crane")).toBe(SOLVED_CODE);
  });

  it("round-trips codes through marks and the observation text", () => {
    for (const code of [0, 1, 17, 100, SOLVED_CODE]) {
      expect(encodeFeedback(decodeFeedback(code))).toBe(code);
    }
    const code = feedbackCode("kebab", "abbey");
    const text = `Guess 1 of 6: kebab\nFeedback: ${feedbackOf("kebab", "abbey")}\nGuesses left: 5.`;
    expect(parseFeedback(text)).toEqual({ guess: "kebab", code });
    expect(parseFeedback("Invalid word")).toBeUndefined();
  });
});

describe("wordle env", () => {
  it("describes itself, its limits and its splits", () => {
    expect(info.name).toBe("wordle");
    expect(info.version).toBe("1.0.0");
    expect(info.maxSteps).toBe(MAX_ACTIONS);
    expect(MAX_GUESSES).toBe(6);
    expect(info.successThreshold).toBe(1);
    expect(info.splits).toEqual({ train: { start: 100, end: 500 }, test: { start: 0, end: 100 } });
    expect(info.instruction).toContain("green");
    expect(info.instruction).toContain(`limit of ${MAX_ACTIONS} actions`);
    for (const i of [0, 99, 100, 499]) expect(() => checkTaskIndex(info, i)).not.toThrow();
  });

  it("gives per-letter feedback for a valid guess and counts guesses down", async () => {
    const env = wordleEnv.create();
    const first = await env.reset(3);
    expect(first.text).toContain("Wordle game 3");
    expect(first.text).toContain("6 guesses");
    const { answer } = generateTask(3);
    const guess = wrongGuess(answer);
    const step = await env.step(guess);
    expect(step.done).toBe(false);
    expect(step.reward).toBe(0);
    expect(step.observation.text).toContain(`Guess 1 of 6: ${guess}`);
    expect(step.observation.text).toContain(`Feedback: ${feedbackOf(guess, answer)}`);
    expect(step.observation.text).toContain("Guesses left: 5.");
    expect(step.info).toMatchObject({ guess, guessesLeft: 5 });
    expect(step.info.feedback).toEqual(decodeFeedback(feedbackCode(guess, answer)));
  });

  it("rewards the right word, ignoring case and surrounding spaces", async () => {
    const env = wordleEnv.create();
    await env.reset(42);
    const { answer } = generateTask(42);
    await env.step(wrongGuess(answer));
    const step = await env.step(`  ${answer.toUpperCase()} \n`);
    expect(step).toMatchObject({ reward: 1, done: true, info: { success: true, answer } });
    expect(step.observation.text).toContain(`You found the word "${answer}" in 2 guesses.`);
    await expect(env.step(answer)).rejects.toBeInstanceOf(EpisodeDoneError);
    // A new reset starts a fresh episode.
    await env.reset(42);
    expect((await env.step(answer)).reward).toBe(1);
  });

  it("rejects invalid words without using a guess", async () => {
    const env = wordleEnv.create();
    await env.reset(0);
    const cases: Array<[string, string]> = [
      ["qxzvj", "not-in-word-list"],
      ["cat", "not-a-5-letter-word"],
      ["cr4ne", "not-a-5-letter-word"],
      ["crane slate", "not-a-5-letter-word"],
      ["", "not-a-5-letter-word"],
    ];
    for (const [action, reason] of cases) {
      const step = await env.step(action);
      expect(step).toMatchObject({ reward: 0, done: false, info: { invalid: true, reason } });
      expect(step.observation.text).toMatch(/^Invalid (word|guess)/);
      expect(step.observation.text).toContain("Guesses left: 6.");
    }
    const step = await env.step(wrongGuess(generateTask(0).answer));
    expect(step.observation.text).toContain("Guess 1 of 6");
    expect(step.observation.text).toContain(`Actions left: ${MAX_ACTIONS - cases.length - 1}.`);
  });

  it("ends with reward 0 after six wrong guesses", async () => {
    const env = wordleEnv.create();
    await env.reset(7);
    const { answer } = generateTask(7);
    const wrong = GUESS_WORDS.filter((w) => w !== answer).slice(0, MAX_GUESSES);
    let step: StepResult | undefined;
    for (const [i, word] of wrong.entries()) {
      step = await env.step(word);
      expect(step.done).toBe(i === MAX_GUESSES - 1);
    }
    expect(step).toMatchObject({ reward: 0, done: true, info: { success: false, answer } });
    expect(step?.observation.text).toContain(`Out of guesses. The word was "${answer}".`);
    await expect(env.step(answer)).rejects.toBeInstanceOf(EpisodeDoneError);
  });

  it("ends after maxSteps actions, counting invalid ones", async () => {
    const env = wordleEnv.create();
    await env.reset(5);
    for (let i = 1; i < MAX_ACTIONS; i++) expect((await env.step("zzzzz")).done).toBe(false);
    const last = await env.step("zzzzz");
    expect(last).toMatchObject({ reward: 0, done: true, info: { invalid: true, success: false } });
    expect(last.observation.text).toContain("Action limit");

    // The limit also ends an episode on a valid guess.
    await env.reset(5);
    const { answer } = generateTask(5);
    for (let i = 1; i < MAX_ACTIONS; i++) await env.step(i <= 4 ? wrongGuess(answer) : "zz");
    const valid = await env.step(wrongGuess(answer));
    expect(valid).toMatchObject({ reward: 0, done: true, info: { success: false } });
    expect(valid.observation.text).toContain("Action limit reached");
  });

  it("is deterministic per task and gives every task its own word", async () => {
    const run = async (index: number, seed: number) => {
      const env = wordleEnv.create();
      const texts = [(await env.reset(index, { seed })).text];
      for (const word of ["crane", "qqqqq", "moist", "plumb"]) {
        texts.push((await env.step(word)).observation.text);
      }
      return texts;
    };
    expect(await run(11, 0)).toEqual(await run(11, 0));
    expect(await run(11, 3)).toEqual(await run(11, 0));
    expect((await run(12, 0)).slice(1)).not.toEqual((await run(11, 0)).slice(1));
    const answers = Array.from({ length: 500 }, (_, i) => generateTask(i).answer);
    expect(new Set(answers).size).toBe(500);
    expect(answers.every((a) => ANSWER_WORDS.includes(a))).toBe(true);
    expect(generateTask(250, 9)).toEqual(generateTask(250, 0));
  });

  it("the seed leaves every task unchanged", async () => {
    for (let index = 0; index < info.splits.train.end; index++) {
      const task = generateTask(index, 0);
      for (const seed of [1, 17, 2024]) expect(generateTask(index, seed)).toEqual(task);
    }
    // The same holds for whole episodes: the reset text and the feedback to the same guesses.
    const transcript = async (seed: number) => {
      const env = wordleEnv.create();
      const texts = [(await env.reset(77, { seed })).text];
      for (const word of ["crane", "moist", "plumb"]) {
        texts.push((await env.step(word)).observation.text);
      }
      return texts;
    };
    const base = await transcript(0);
    for (const seed of [1, 17, 2024]) expect(await transcript(seed)).toEqual(base);
  });

  it("echoes at most about 60 characters of an invalid guess", async () => {
    const env = wordleEnv.create();
    await env.reset(0);
    const step = await env.step(`${"abc\n".repeat(250_000)}`);
    expect(step.info).toMatchObject({ invalid: true, reason: "not-a-5-letter-word" });
    expect(step.observation.text.length).toBeLessThan(250);
    expect(step.observation.text).toContain('"abc abc abc');
    expect(step.observation.text).toContain('..." is not a 5-letter word');
  });

  it("samples mostly valid actions", async () => {
    const env = wordleEnv.create();
    const rng = createRng(2024);
    let observation = await env.reset(0);
    let invalid = 0;
    const total = 300;
    for (let i = 0; i < total; i++) {
      const step = await env.step(wordleEnv.sampleAction(rng.next, observation));
      if (step.info.invalid) invalid++;
      observation = step.done ? await env.reset(i % 100) : step.observation;
    }
    expect(invalid).toBeGreaterThan(0);
    expect(invalid / total).toBeLessThan(0.2);
  });
});

describe("wordle reference solver", () => {
  it("opens with the best first guess for the answer list", () => {
    expect(chooseGuess(ANSWER_WORDS)).toBe(FIRST_GUESS);
  });

  // The seed does not change a Wordle task (see "the seed leaves every task unchanged"), so one
  // seed covers the solver.
  it("solves every test task", async () => {
    for (let index = info.splits.test.start; index < info.splits.test.end; index++) {
      const { reward, steps: history } = await runReferenceEpisode(
        wordleEnv,
        solveWordle,
        index,
        0,
      );
      expect(reward, `task ${index}`).toBeGreaterThanOrEqual(1);
      expect(history.length).toBeLessThanOrEqual(MAX_GUESSES);
      expect(history.every((turn) => !turn.observation.text.startsWith("Invalid"))).toBe(true);
    }
  });

  it("solves train tasks and writes Thought/Action messages", async () => {
    for (const index of [100, 101, 250, 377, 499]) {
      const { reward, steps: history } = await runReferenceEpisode(
        wordleEnv,
        solveWordle,
        index,
        0,
      );
      expect(reward).toBeGreaterThanOrEqual(info.successThreshold);
      for (const turn of history) {
        expect(turn.message).toMatch(/^Thought: .+\n\nAction: [a-z]{5}$/);
        expect(turn.message.endsWith(`Action: ${turn.action}`)).toBe(true);
      }
    }
  });

  it("finds every answer within six guesses from feedback alone", () => {
    let worst = 0;
    for (const answer of ANSWER_WORDS) {
      const texts: string[] = [];
      let guesses = 0;
      for (;;) {
        const { guess } = nodeAfter(texts);
        guesses++;
        if (guess === answer || guesses > MAX_GUESSES) break;
        texts.push(`Feedback: ${feedbackOf(guess, answer)}`);
      }
      expect(guesses, answer).toBeLessThanOrEqual(MAX_GUESSES);
      worst = Math.max(worst, guesses);
    }
    expect(worst).toBeGreaterThan(1);
  });
});
