/**
 * The episode page (`#/episodes/<id>`): one episode of an evaluation run turn by turn, as
 * `clade show RUN --episode` prints it: the instruction, then per turn the agent's reply, its
 * action, what it observed and the reward, with the model calls of that turn (tokens, latency,
 * waits, cost, cache, retries). A call's exact request and response are fetched only when asked
 * for, since each repeats the whole conversation so far.
 */
import { useState } from "preact/hooks";
import type { ChatMessage, ToolCall } from "../../../model/types.js";
import type { StepRecord } from "../../../rollout/episode.js";
import type { CallBodyResponse, CallSummary, EpisodeResponse } from "../../api/episodes.js";
import { apiPath } from "../api.js";
import { html } from "../html.js";
import { useApi } from "../live.js";
import type { PageProps } from "../main.js";
import { href } from "../router.js";
import { Card, cost, ErrorLine, Loaded, Section, when } from "../ui.js";
import "./episode.css";

/** Text longer than this is folded to its first lines until the reader opens it. */
const FOLD = { lines: 12, chars: 1200 } as const;
/** Turns drawn at first, and added by each "more turns" (a long episode stays quick to open). */
const TURNS_PER_PAGE = 200;

export function EpisodePage({ route }: PageProps) {
  const id = route.segments[1] ?? "";
  const valid = /^\d+$/.test(id);
  const state = useApi<EpisodeResponse>(valid ? apiPath(`/episodes/${id}`) : undefined);
  if (!valid) {
    return html`<${ErrorLine} message=${`not an episode address: #/episodes/${id} (the id is a number)`} />`;
  }
  return html`<${Loaded} state=${state}>${(data: EpisodeResponse) => html`<${Episode} data=${data} />`}<//>`;
}

const ms = (value: number | null | undefined): string =>
  value === null || value === undefined ? "–" : `${Math.round(value)} ms`;

function Episode({ data }: { data: EpisodeResponse }) {
  const { run, episode, totals, calls, steps } = data;
  const [shown, setShown] = useState(TURNS_PER_PAGE);
  // Calls of a turn that never became a step (the episode ended in it) are shown too.
  const turns = [...new Set([...steps.map((s) => s.turn), ...calls.map((c) => c.turn)])].sort(
    (a, b) => a - b,
  );
  const stepOf = new Map(steps.map((s) => [s.turn, s]));
  const callsOf = new Map<number, CallSummary[]>();
  for (const call of calls) callsOf.set(call.turn, [...(callsOf.get(call.turn) ?? []), call]);
  return html`<div class="episode-page" data-testid="episode">
    <p class="muted crumbs">
      <a href=${href(`/runs/${run.id}`)} data-testid="run-link">← run ${run.id}</a>
      · ${run.env} ${run.envVersion} · agent ${run.agent}
    </p>
    <h1>
      Episode ${episode.taskIndex}/${episode.sampleIndex}
      <span class=${`badge outcome-badge outcome-${episode.outcome}`} data-testid="outcome">${episode.outcome}</span>
      <small class="muted">id ${episode.id}</small>
    </h1>
    <div class="cards">
      <${Card} label="reward" value=${episode.reward} testId="reward" />
      <${Card} label="end reason" value=${episode.endReason} testId="end-reason" />
      <${Card} label="turns" value=${episode.turns} />
      <${Card} label="duration" value=${ms(episode.durationMs)} />
      ${episode.parseErrors > 0 ? html`<${Card} label="unusable replies" value=${episode.parseErrors} />` : null}
      <${Card} label="model calls" value=${totals.calls} testId="total-calls" />
      <${Card} label="tokens in / out" value=${`${totals.inputTokens} / ${totals.outputTokens}`} testId="total-tokens" />
      <${Card} label="cost" value=${totals.calls === 0 ? "–" : cost(totals.costUsd, totals.unpriced)} testId="total-cost" />
      ${totals.cacheHits > 0 ? html`<${Card} label="cache hits" value=${totals.cacheHits} />` : null}
      ${totals.retries > 0 ? html`<${Card} label="retries" value=${totals.retries} />` : null}
      ${totals.failedCalls > 0 ? html`<${Card} label="failed calls" value=${totals.failedCalls} />` : null}
    </div>
    <p class="muted">seed ${episode.seed} · started ${when(episode.startedAt)}</p>
    ${episode.error ? html`<p class="error" data-testid="episode-error">error: ${episode.error}</p>` : null}
    ${data.problems.map((problem) => html`<${ErrorLine} message=${`damaged: ${problem}`} />`)}
    ${
      data.instruction !== null
        ? html`<${Section} title="Instruction"><div data-testid="instruction"><${Folded} text=${data.instruction} /></div><//>`
        : null
    }
    ${
      episode.initialObservation
        ? html`<${Section} title="Initial observation">
            <${Folded} text=${episode.initialObservation.text} />
            <${Actions} list=${episode.initialObservation.availableActions} />
          <//>`
        : null
    }
    <${Section} title="Trajectory">
      ${turns.length === 0 ? html`<p class="muted">no turns stored</p>` : null}
      ${turns
        .slice(0, shown)
        .map(
          (turn) =>
            html`<${Turn} key=${turn} turn=${turn} step=${stepOf.get(turn)} calls=${callsOf.get(turn) ?? []} episodeId=${episode.id} />`,
        )}
      ${
        turns.length > shown
          ? html`<button class="more" onClick=${() => setShown(shown + TURNS_PER_PAGE)}>
              ${Math.min(TURNS_PER_PAGE, turns.length - shown)} more turns (of ${turns.length - shown} left)
            </button>`
          : null
      }
    <//>
  </div>`;
}

function Actions({ list }: { list: readonly string[] | undefined }) {
  if (!list?.length) return null;
  return html`<p class="muted actions">available actions: ${list.join(" | ")}</p>`;
}

/** Long text shown by its first lines, with a button to open it whole. */
function Folded({ text, testId }: { text: string; testId?: string }) {
  const [open, setOpen] = useState(false);
  const lines = text.split("\n");
  const long = lines.length > FOLD.lines || text.length > FOLD.chars;
  if (!long) return html`<pre data-testid=${testId}>${text.length === 0 ? "(empty)" : text}</pre>`;
  const head = lines.slice(0, FOLD.lines).join("\n").slice(0, FOLD.chars);
  return html`<div class="folded">
    <pre data-testid=${testId}>${open ? text : `${head}…`}</pre>
    <button class="fold" data-testid="fold" onClick=${() => setOpen(!open)}>
      ${open ? "fold" : `show all (${lines.length} lines, ${text.length} characters)`}
    </button>
  </div>`;
}

function Turn({
  turn,
  step,
  calls,
  episodeId,
}: {
  turn: number;
  step: StepRecord | undefined;
  calls: readonly CallSummary[];
  episodeId: number;
}) {
  return html`<article class="turn" data-testid="turn" data-turn=${turn}>
    <h3>
      Turn ${turn}
      ${
        step
          ? html`<span class="muted">
              · reward <b class="num" data-testid="step-reward">${step.reward}</b>
              ${step.done ? " · done" : ""} · ${ms(step.elapsedMs)}
              ${step.parseErrors ? ` · unusable replies ${step.parseErrors}` : ""}
            </span>`
          : html`<span class="muted"> · no step (the episode ended during this turn)</span>`
      }
    </h3>
    ${
      step
        ? html`
          ${
            step.message !== step.action
              ? html`<div class="part thought"><div class="label">thought</div><${Folded} text=${step.message} testId="thought" /></div>`
              : null
          }
          <div class="part action"><div class="label">action</div><pre class="action-text" data-testid="action">${step.action}</pre></div>
          <div class="part observation"><div class="label">observation</div><${Folded} text=${step.observation.text} testId="observation" /></div>
          ${
            Object.keys(step.info).length > 0
              ? html`<div class="part info"><div class="label">info</div><pre>${JSON.stringify(step.info, null, 2)}</pre></div>`
              : null
          }`
        : null
    }
    ${calls.length > 0 ? html`<${Calls} calls=${calls} episodeId=${episodeId} />` : null}
  </article>`;
}

function Calls({ calls, episodeId }: { calls: readonly CallSummary[]; episodeId: number }) {
  const [open, setOpen] = useState<number | undefined>(undefined);
  return html`<table class="calls" data-testid="calls">
    <thead><tr>
      <th>call</th>
      <th>model</th>
      <th class="num" title="input / output tokens">tokens</th>
      <th class="num" title="the provider's time, waiting excluded">latency</th>
      <th class="num" title="waiting for the model's rate limiter">queued</th>
      <th class="num" title="sleeping between attempts (backoff, Retry-After)">retry wait</th>
      <th class="num">cost</th>
      <th>cache</th>
      <th class="num" title="attempts beyond the first">retries</th>
      <th>outcome</th>
      <th></th>
    </tr></thead>
    <tbody>${calls.map(
      (call) => html`<tr key=${call.id} data-testid="call" data-call=${call.id}>
          <td class="num">${call.id}</td>
          <td>${call.model}</td>
          <td class="num">${call.usage.inputTokens} / ${call.usage.outputTokens}</td>
          <td class="num">${ms(call.latencyMs)}</td>
          <td class="num">${ms(call.queueMs)}</td>
          <td class="num">${ms(call.retryMs)}</td>
          <td class="num" data-testid="call-cost">${cost(call.costUsd, call.unpriced)}</td>
          <td data-testid="cache">${call.cacheHit ? html`<span class="badge cache-hit">hit</span>` : "miss"}</td>
          <td class="num" data-testid="retries">${Math.max(call.attempts - 1, 0)}</td>
          <td>
            ${call.error ? html`<span class="error">${call.error}</span>` : (call.finishReason ?? "")}
            ${(call.attemptErrors ?? []).map(
              (e, i) =>
                html`<div class="attempt-error" data-testid="attempt-error">attempt ${i + 1} failed: ${e}</div>`,
            )}
          </td>
          <td>
            <button data-testid="open-call" aria-expanded=${open === call.id}
              onClick=${() => setOpen(open === call.id ? undefined : call.id)}>
              ${open === call.id ? "hide" : "request / response"}
            </button>
          </td>
        </tr>
        ${
          open === call.id
            ? html`<tr class="call-body-row"><td colspan="11"><${CallBody} episodeId=${episodeId} callId=${call.id} /></td></tr>`
            : null
        }`,
    )}</tbody>
  </table>`;
}

/** One call's exact request and response: the messages to read, and the JSON as stored. */
function CallBody({ episodeId, callId }: { episodeId: number; callId: number }) {
  // A stored call never changes: no need to fetch it again when the store does.
  const state = useApi<CallBodyResponse>(apiPath(`/episodes/${episodeId}/calls/${callId}`), false);
  return html`<div class="call-body" data-testid="call-body">
    <${Loaded} state=${state}>${(body: CallBodyResponse) => {
      const { messages, ...settings } = body.request;
      return html`<div class="columns">
        <div class="request" data-testid="request">
          <h4>request · ${messages.length} messages</h4>
          ${messages.map((m, i) => html`<${Message} key=${i} message=${m} />`)}
          ${Object.keys(settings).length > 0 ? html`<div class="muted">settings</div><pre>${JSON.stringify(settings, null, 2)}</pre>` : null}
          <details><summary>request as JSON</summary><pre data-testid="request-json">${JSON.stringify(body.request, null, 2)}</pre></details>
        </div>
        <div class="response" data-testid="response">
          <h4>response</h4>
          ${body.error ? html`<p class="error">${body.error}</p>` : null}
          ${
            body.response
              ? html`<div class="message role-assistant">
                  <div class="role">assistant · ${body.response.model} · ${body.response.finishReason}</div>
                  <pre data-testid="response-content">${body.response.content}</pre>
                  <${ToolCalls} calls=${body.response.toolCalls} />
                </div>`
              : null
          }
          <details><summary>response as JSON</summary><pre data-testid="response-json">${JSON.stringify(body.response, null, 2)}</pre></details>
        </div>
      </div>`;
    }}<//>
  </div>`;
}

function Message({ message }: { message: ChatMessage }) {
  return html`<div class=${`message role-${message.role}`} data-testid="message">
    <div class="role">${message.role}${message.role === "tool" ? ` · ${message.toolCallId}` : ""}</div>
    <pre>${message.content}</pre>
    ${message.role === "assistant" ? html`<${ToolCalls} calls=${message.toolCalls} />` : null}
  </div>`;
}

function ToolCalls({ calls }: { calls: readonly ToolCall[] | undefined }) {
  if (!calls?.length) return null;
  return html`<ul class="tool-calls">${calls.map(
    (call) =>
      html`<li key=${call.id}><code>${call.name}(${call.arguments})</code> <span class="muted">${call.id}</span></li>`,
  )}</ul>`;
}
