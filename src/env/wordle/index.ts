import { clipText } from "../echo.js";
import {
  activeEpisode,
  checkTaskIndex,
  type EnvInfo,
  type Observation,
  type SamplingEnvDefinition,
  type StepResult,
} from "../types.js";
import { GUESS_WORDS } from "./data.js";
import {
  decodeFeedback,
  feedbackCode,
  formatFeedback,
  SOLVED_CODE,
  WORD_LENGTH,
} from "./feedback.js";
import { generateTask, isAllowedGuess } from "./task.js";

export { generateTask } from "./task.js";

export const MAX_GUESSES = 6;
/** Invalid words do not use a guess, so a separate cap on all actions keeps episodes finite. */
export const MAX_ACTIONS = 12;

const INSTRUCTION = `You are playing Wordle. A hidden English word of ${WORD_LENGTH} letters has \
been chosen; find it.
Each turn, reply with exactly one guess: a ${WORD_LENGTH}-letter English word, for example: crane
(letters a-z only; case and surrounding spaces are ignored; nothing else on the line).
After each valid guess you get feedback for every letter of your guess, in order:
- green: this letter is in the hidden word at this position;
- yellow: this letter is in the hidden word, but at another position;
- grey: this letter is not in the hidden word (or not as many times as you used it).
Repeated letters are scored as in Wordle: greens are given first; then each remaining copy of a \
letter in the hidden word turns at most one more copy in your guess yellow, left to right; \
other copies are grey. Example: hidden "apple", guess "paper" gives \
p(yellow) a(yellow) p(green) e(yellow) r(grey).
You have ${MAX_GUESSES} guesses. A reply that is not a ${WORD_LENGTH}-letter word, or a word that \
is not in the word list, is rejected as invalid and does not use a guess, but every reply counts \
toward a limit of ${MAX_ACTIONS} actions per game.
The game ends when you guess the word (reward 1), or with reward 0 after ${MAX_GUESSES} wrong \
guesses or ${MAX_ACTIONS} actions.`;

const info: EnvInfo = {
  name: "wordle",
  version: "1.0.0",
  description:
    "Guess a hidden 5-letter word in 6 guesses from green/yellow/grey per-letter feedback " +
    "(AgentGym's Wordle). The seed does not change a task.",
  instruction: INSTRUCTION,
  splits: { train: { start: 100, end: 500 }, test: { start: 0, end: 100 } },
  successThreshold: 1,
  maxSteps: MAX_ACTIONS,
};

interface Episode {
  taskIndex: number;
  answer: string;
  guesses: number;
  actions: number;
  done: boolean;
}

class WordleEnv {
  readonly info = info;
  private episode: Episode | undefined;

  async reset(taskIndex: number): Promise<Observation> {
    checkTaskIndex(info, taskIndex);
    const { answer } = generateTask(taskIndex);
    this.episode = { taskIndex, answer, guesses: 0, actions: 0, done: false };
    return {
      text:
        `Wordle game ${taskIndex}: a hidden ${WORD_LENGTH}-letter word has been chosen. ` +
        `You have ${MAX_GUESSES} guesses (at most ${MAX_ACTIONS} actions). Make your first guess.`,
    };
  }

  async step(action: string): Promise<StepResult> {
    const episode = activeEpisode(info.name, this.episode);
    episode.actions++;
    const word = action.trim().toLowerCase();
    if (!/^[a-z]{5}$/.test(word) || !isAllowedGuess(word)) return invalidGuess(episode, word);
    return validGuess(episode, word);
  }
}

function guessesLeft(episode: Episode): number {
  return MAX_GUESSES - episode.guesses;
}

function invalidGuess(episode: Episode, word: string): StepResult {
  const wellFormed = /^[a-z]{5}$/.test(word);
  const reason = wellFormed ? "not-in-word-list" : "not-a-5-letter-word";
  const problem = wellFormed
    ? `Invalid word: "${word}" is not in the word list.`
    : `Invalid guess: "${clipText(word)}" is not a ${WORD_LENGTH}-letter word (use letters a-z only).`;
  const actionsLeft = MAX_ACTIONS - episode.actions;
  const base = { invalid: true, reason, guessesLeft: guessesLeft(episode) };
  if (actionsLeft === 0) {
    episode.done = true;
    const text = `${problem}\nAction limit of ${MAX_ACTIONS} reached. ${reveal(episode)}`;
    return end(text, 0, { ...base, success: false, answer: episode.answer });
  }
  const text =
    `${problem} This did not use a guess. ` +
    `Guesses left: ${guessesLeft(episode)}. Actions left: ${actionsLeft}.`;
  return { observation: { text }, reward: 0, done: false, info: base };
}

function validGuess(episode: Episode, word: string): StepResult {
  episode.guesses++;
  const code = feedbackCode(word, episode.answer);
  const feedback = decodeFeedback(code);
  const lines = [
    `Guess ${episode.guesses} of ${MAX_GUESSES}: ${word}`,
    `Feedback: ${formatFeedback(word, feedback)}`,
  ];
  const base = { guess: word, feedback, guessesLeft: guessesLeft(episode) };
  if (code === SOLVED_CODE) {
    episode.done = true;
    const count = episode.guesses === 1 ? "1 guess" : `${episode.guesses} guesses`;
    lines.push(`Correct! You found the word "${word}" in ${count}.`);
    return end(lines.join("\n"), 1, { ...base, success: true, answer: episode.answer });
  }
  if (episode.guesses === MAX_GUESSES || episode.actions === MAX_ACTIONS) {
    episode.done = true;
    const limit = episode.guesses === MAX_GUESSES ? "Out of guesses" : "Action limit reached";
    lines.push(`${limit}. ${reveal(episode)}`);
    return end(lines.join("\n"), 0, { ...base, success: false, answer: episode.answer });
  }
  const actionsLeft = MAX_ACTIONS - episode.actions;
  lines.push(`Guesses left: ${guessesLeft(episode)}. Actions left: ${actionsLeft}.`);
  return { observation: { text: lines.join("\n") }, reward: 0, done: false, info: base };
}

function reveal(episode: Episode): string {
  return `The word was "${episode.answer}".`;
}

function end(text: string, reward: number, stepInfo: Record<string, unknown>): StepResult {
  return { observation: { text }, reward, done: true, info: stepInfo };
}

const LETTERS = "abcdefghijklmnopqrstuvwxyz";

export const wordleEnv: SamplingEnvDefinition = {
  info,
  create: () => new WordleEnv(),
  // Mostly real words from the guess list; sometimes a random letter string (usually invalid).
  sampleAction: (random) => {
    if (random() < 0.9) return GUESS_WORDS[Math.floor(random() * GUESS_WORDS.length)] ?? "crane";
    let word = "";
    for (let i = 0; i < WORD_LENGTH; i++) word += LETTERS[Math.floor(random() * LETTERS.length)];
    return word;
  },
};
