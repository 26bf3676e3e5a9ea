/**
 * Schema migrations, applied in order; PRAGMA user_version records how many have run.
 * Never edit a shipped migration: append a new one.
 */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE clade_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  INSERT INTO clade_meta (key, value) VALUES ('app', 'clade');

  CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    env TEXT NOT NULL,
    env_version TEXT NOT NULL,
    agent TEXT NOT NULL,
    config TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('running', 'interrupted', 'complete')),
    -- Why a run stopped before finishing: 'signal', 'budget', 'error'.
    stop_reason TEXT,
    -- The process that last ran it, so a run left 'running' by a killed process can be told apart.
    owner_pid INTEGER,
    owner_host TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );

  CREATE TABLE episodes (
    id INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    task_index INTEGER NOT NULL,
    sample_index INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    -- not_run: planned but never started (e.g. the budget ran out); run again on resume.
    outcome TEXT NOT NULL CHECK (outcome IN ('success', 'failure', 'error', 'not_run')),
    reward REAL NOT NULL,
    end_reason TEXT NOT NULL,
    error TEXT,
    initial_observation TEXT,
    initial_actions TEXT,
    turns INTEGER NOT NULL,
    -- Model replies without a usable action, fed back to the model (LLM agents).
    parse_errors INTEGER NOT NULL DEFAULT 0,
    started_at TEXT NOT NULL,
    duration_ms REAL NOT NULL,
    UNIQUE (run_id, task_index, sample_index)
  );

  -- One JSON document of steps per episode (see trajectory-codec.ts).
  CREATE TABLE trajectories (
    episode_id INTEGER PRIMARY KEY REFERENCES episodes(id) ON DELETE CASCADE,
    steps TEXT NOT NULL
  );

  -- Every model call, linked to the episode and turn that made it. Never holds keys or headers.
  CREATE TABLE model_calls (
    id INTEGER PRIMARY KEY,
    episode_id INTEGER NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
    turn INTEGER NOT NULL,
    model TEXT NOT NULL,
    request TEXT NOT NULL,
    response TEXT,
    error TEXT,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cost_usd REAL NOT NULL,
    latency_ms REAL,
    cache_hit INTEGER NOT NULL,
    attempts INTEGER NOT NULL,
    started_at TEXT NOT NULL
  );
  CREATE INDEX model_calls_by_episode ON model_calls (episode_id, turn);

  -- Model responses by request key (model, messages, parameters, sample index).
  CREATE TABLE model_cache (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    response TEXT NOT NULL,
    created_at TEXT NOT NULL
  );
  `,
  `
  -- Why each failed attempt of a call failed (JSON array of messages, in order); NULL when none.
  -- A call retried into success keeps its failed attempts here; error stays the call's verdict.
  ALTER TABLE model_calls ADD COLUMN attempt_errors TEXT;
  `,
  `
  -- Requests by difference: a long episode's calls repeat the whole conversation each time, so a
  -- call stores only what its request adds to the call before it in the same episode.
  -- base_call NULL: request holds the whole request (every row written before this migration).
  -- Otherwise request holds it with messages = the messages after the first base_messages of
  -- base_call's whole request, and "tools": null when base_call's tools are the same.
  -- base_call is always an earlier row of the same episode, so deleting an episode deletes both.
  ALTER TABLE model_calls RENAME TO model_call_rows;
  ALTER TABLE model_call_rows ADD COLUMN base_call INTEGER;
  ALTER TABLE model_call_rows ADD COLUMN base_messages INTEGER;

  -- The calls as before, whole requests included (rebuilt along each episode's chain), for SQL.
  CREATE VIEW model_calls AS
  WITH RECURSIVE whole(id, request) AS (
    SELECT id, request FROM model_call_rows WHERE base_call IS NULL
    UNION ALL
    SELECT c.id, json_replace(c.request,
      '$.messages', json((
        SELECT json_group_array(json(m.value) ORDER BY m.position) FROM (
          SELECT key AS position, value FROM json_each(w.request, '$.messages')
          WHERE key < c.base_messages
          UNION ALL
          SELECT key + c.base_messages, value FROM json_each(c.request, '$.messages')
        ) m
      )),
      '$.tools', json(CASE WHEN json_type(c.request, '$.tools') = 'null'
        THEN json_extract(w.request, '$.tools') ELSE json_extract(c.request, '$.tools') END))
    FROM model_call_rows c JOIN whole w ON w.id = c.base_call
  )
  SELECT r.id, r.episode_id, r.turn, r.model, w.request, r.response, r.error, r.input_tokens,
    r.output_tokens, r.cost_usd, r.latency_ms, r.cache_hit, r.attempts, r.started_at,
    r.attempt_errors
  FROM model_call_rows r JOIN whole w ON w.id = r.id;
  `,
  `
  -- Costs that can be trusted, latency apart from waiting.
  -- unpriced: 1 when the model had no price at call time (its cost is unknown, not 0; cost_usd
  -- holds 0), 0 when priced. NULL on rows written before: readers take a call as unpriced when
  -- it used tokens, cost 0 and was no cache hit (UNPRICED_CALL in run-store.ts).
  -- latency_ms is now the provider's time alone; queue_ms is the time spent waiting for the
  -- model's limiter and retry_ms the sleeps between attempts. Both NULL for cache hits and on
  -- rows written before, whose latency_ms includes them.
  ALTER TABLE model_call_rows ADD COLUMN unpriced INTEGER;
  ALTER TABLE model_call_rows ADD COLUMN queue_ms REAL;
  ALTER TABLE model_call_rows ADD COLUMN retry_ms REAL;

  -- The view of migration 3 with the new columns (unpriced as readers take it, never NULL).
  DROP VIEW model_calls;
  CREATE VIEW model_calls AS
  WITH RECURSIVE whole(id, request) AS (
    SELECT id, request FROM model_call_rows WHERE base_call IS NULL
    UNION ALL
    SELECT c.id, json_replace(c.request,
      '$.messages', json((
        SELECT json_group_array(json(m.value) ORDER BY m.position) FROM (
          SELECT key AS position, value FROM json_each(w.request, '$.messages')
          WHERE key < c.base_messages
          UNION ALL
          SELECT key + c.base_messages, value FROM json_each(c.request, '$.messages')
        ) m
      )),
      '$.tools', json(CASE WHEN json_type(c.request, '$.tools') = 'null'
        THEN json_extract(w.request, '$.tools') ELSE json_extract(c.request, '$.tools') END))
    FROM model_call_rows c JOIN whole w ON w.id = c.base_call
  )
  SELECT r.id, r.episode_id, r.turn, r.model, w.request, r.response, r.error, r.input_tokens,
    r.output_tokens, r.cost_usd, r.latency_ms, r.cache_hit, r.attempts, r.started_at,
    r.attempt_errors,
    COALESCE(r.unpriced, r.cost_usd = 0 AND r.cache_hit = 0
      AND r.input_tokens + r.output_tokens > 0) AS unpriced,
    r.queue_ms, r.retry_ms
  FROM model_call_rows r JOIN whole w ON w.id = r.id;
  `,
  `
  -- What each episode's agent was told (AgentState.instruction), so that exports give the
  -- instruction the model saw, not the one of the built-in env that shares the run's name: a
  -- remote env's is often empty, and a run under a name clade has no env for has no other.
  -- Each distinct text is kept once; rows are never deleted. instruction_id is NULL on episodes
  -- written before this migration (readers fall back to the built-in env of the run's name) and
  -- on episodes never started (not_run). The first observation was already kept per episode.
  CREATE TABLE instructions (id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE);
  ALTER TABLE episodes ADD COLUMN instruction_id INTEGER REFERENCES instructions(id);
  `,
  `
  -- Self-improvement searches (src/improve/search, docs/search.md): one row per search and its
  -- append-only event log. The tree is a fold of the log; events are never changed or deleted.
  -- config: the method, its hyperparameters, budget, workers, seed and what is searched (JSON).
  -- stop_reason: why a 'stopped' search stopped early ('budget-usd', 'signal').
  CREATE TABLE searches (
    id TEXT PRIMARY KEY,
    config TEXT NOT NULL CHECK (json_valid(config)),
    status TEXT NOT NULL CHECK (status IN ('running', 'stopped', 'complete')),
    stop_reason TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  -- seq: 0, 1, 2, ... per search, in the order written. work: the improvement or evaluation the
  -- event belongs to, numbered at dispatch. node: the node evaluated, or the child an
  -- improvement made (ids count from the root, 0). parent: the node an improvement started
  -- from. task: the task index evaluated; attempt: 1, then 2 after an error, ... outcome and
  -- reason: how an evaluation ended ('error' with its reason is never a fail) or why an
  -- improvement gave no child. Tokens, cost and duration: what the finished work used. data:
  -- the improver's record of a child (JSON). at: when the event was written.
  CREATE TABLE search_events (
    search_id TEXT NOT NULL REFERENCES searches(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    type TEXT NOT NULL CHECK (type IN ('improvement_started', 'improvement_finished',
      'improvement_failed', 'evaluation_dispatched', 'evaluation_finished')),
    work INTEGER NOT NULL,
    node INTEGER,
    parent INTEGER,
    task INTEGER,
    attempt INTEGER,
    outcome TEXT CHECK (outcome IN ('pass', 'fail', 'error')),
    reason TEXT,
    input_tokens INTEGER,
    output_tokens INTEGER,
    cost_usd REAL,
    duration_ms REAL,
    data TEXT CHECK (data IS NULL OR json_valid(data)),
    at TEXT NOT NULL,
    PRIMARY KEY (search_id, seq)
  ) WITHOUT ROWID;
  `,
  `
  -- Searches whose models have no price. unpriced: 1 when some of the finished work's model
  -- calls had no price (its cost is unknown, not 0; cost_usd holds the priced part), 0 when all
  -- were priced, NULL for events without usage. NULL on rows written before: readers take a
  -- search over real agents' work as unpriced when it used tokens and cost 0 (parseEvent in
  -- search-log.ts); a simulation's work is always priced.
  ALTER TABLE search_events ADD COLUMN unpriced INTEGER;
  `,
  `
  -- Training runs of the embedded policy (src/improve/rl/train): one row per run, its metrics
  -- step by step, and its checkpoints. config: what the trainer was started with (JSON).
  -- stop_reason: why a 'stopped' run stopped before its last step ('signal', 'budget', ...).
  CREATE TABLE training_runs (
    id TEXT PRIMARY KEY,
    config TEXT NOT NULL CHECK (json_valid(config)),
    status TEXT NOT NULL CHECK (status IN ('running', 'stopped', 'complete')),
    stop_reason TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  -- One row per optimiser step, a column per metric so that curves are plain SQL (NULL: no
  -- value, such as a success rate over no finished episode). A resumed run that writes step k
  -- again replaces its row. env_steps: environment steps so far; seconds: wall clock so far;
  -- errors: episodes of the step that ended in an error. extra: metrics beyond these (JSON
  -- object), NULL when none. at: when the row was written.
  CREATE TABLE training_steps (
    run_id TEXT NOT NULL REFERENCES training_runs(id) ON DELETE CASCADE,
    step INTEGER NOT NULL CHECK (step >= 0),
    mean_reward REAL,
    success_rate REAL,
    horizon INTEGER,
    entropy REAL,
    kl REAL,
    clip_fraction REAL,
    grad_norm REAL,
    env_steps INTEGER,
    seconds REAL,
    errors INTEGER,
    extra TEXT CHECK (extra IS NULL OR json_valid(extra)),
    at TEXT NOT NULL,
    PRIMARY KEY (run_id, step)
  ) WITHOUT ROWID;
  -- The policy files a run saved (safetensors), one per step at most: where, and their sha256.
  CREATE TABLE training_checkpoints (
    run_id TEXT NOT NULL REFERENCES training_runs(id) ON DELETE CASCADE,
    step INTEGER NOT NULL CHECK (step >= 0),
    path TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    at TEXT NOT NULL,
    PRIMARY KEY (run_id, step)
  ) WITHOUT ROWID;
  `,
  `
  -- CycleQD runs (src/improve/qd): one row per run and one per generation. config: tasks, score
  -- ranges, bins, variant, seed and the genomes' provenance (JSON). The archives are not stored
  -- per generation: they are a fold of the generations' offers (generation 0: the experts; then
  -- one child each), replayed in order, so any generation's archives can be rebuilt exactly.
  CREATE TABLE qd_runs (
    id TEXT PRIMARY KEY,
    config TEXT NOT NULL CHECK (json_valid(config)),
    status TEXT NOT NULL CHECK (status IN ('running', 'stopped', 'complete')),
    stop_reason TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  -- generation: 0 for the experts, then 1, 2, ... quality_task: the archive parents came from
  -- (NULL for generation 0). record: the generation's record (parents, the offered genomes with
  -- their scores, add statuses or error, and each archive's statistics after it; JSON). Columns
  -- for the statistics most asked for: coverage (mean over archives), QD-score (summed), and whether
  -- the child errored (an errored child is never scored). at: when the row was written.
  CREATE TABLE qd_generations (
    run_id TEXT NOT NULL REFERENCES qd_runs(id) ON DELETE CASCADE,
    generation INTEGER NOT NULL CHECK (generation >= 0),
    quality_task INTEGER,
    coverage REAL NOT NULL,
    qd_score REAL NOT NULL,
    errored INTEGER NOT NULL CHECK (errored IN (0, 1)),
    record TEXT NOT NULL CHECK (json_valid(record)),
    at TEXT NOT NULL,
    PRIMARY KEY (run_id, generation)
  ) WITHOUT ROWID;
  `,
  `
  -- Goal-oriented evaluation (src/eval/goals): one row per job. config: the source (format, file
  -- and its sha256, or run id), the judges' model specs, the rubric and taxonomy (as used), the
  -- answer attempts (JSON); a resume must match it.
  CREATE TABLE goal_runs (
    id TEXT PRIMARY KEY,
    config TEXT NOT NULL CHECK (json_valid(config)),
    status TEXT NOT NULL CHECK (status IN ('running', 'stopped', 'complete')),
    stop_reason TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  -- The job's conversations, all written when it starts (position: import order). status:
  -- pending (no verdict yet), judged (every judge labelled it: labels holds the vote, queue the
  -- fields left to a reviewer) or errored (a judge failed; error says which and why; asked
  -- again on resume, only the judges without a label).
  CREATE TABLE goal_conversations (
    run_id TEXT NOT NULL REFERENCES goal_runs(id) ON DELETE CASCADE,
    position INTEGER NOT NULL CHECK (position >= 0),
    conversation_id TEXT NOT NULL,
    conversation TEXT NOT NULL CHECK (json_valid(conversation)),
    status TEXT NOT NULL CHECK (status IN ('pending', 'judged', 'errored')),
    labels TEXT CHECK (labels IS NULL OR json_valid(labels)),
    queue TEXT CHECK (queue IS NULL OR json_valid(queue)),
    error TEXT,
    judged_at TEXT,
    PRIMARY KEY (run_id, position),
    UNIQUE (run_id, conversation_id)
  ) WITHOUT ROWID;
  -- One judge's judgement of one conversation, written as soon as it is made: labelled (labels,
  -- reasoning) or errored (error). A labelled one is never asked again. rejected: why earlier
  -- answers of the same judgement were sent back (JSON array). Usage and cost over its calls.
  CREATE TABLE goal_judgements (
    run_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    judge INTEGER NOT NULL CHECK (judge >= 0),
    model TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('labelled', 'errored')),
    labels TEXT CHECK (labels IS NULL OR json_valid(labels)),
    reasoning TEXT,
    error TEXT,
    rejected TEXT NOT NULL CHECK (json_valid(rejected)),
    answers INTEGER NOT NULL,
    calls INTEGER NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cost_usd REAL NOT NULL,
    unpriced INTEGER NOT NULL CHECK (unpriced IN (0, 1)),
    latency_ms REAL,
    cache_hits INTEGER NOT NULL,
    -- Requests that reached the provider (the model layer's retries included; cache hits none).
    provider_attempts INTEGER NOT NULL,
    at TEXT NOT NULL,
    PRIMARY KEY (run_id, position, judge),
    FOREIGN KEY (run_id, position) REFERENCES goal_conversations(run_id, position) ON DELETE CASCADE
  ) WITHOUT ROWID;
  -- A reviewer's label of one field of one turn (is_new_goal, quality or rcof), with who and
  -- when; value is JSON (true/false, "success"/"failure", a code or null). Kept, never
  -- overwritten: the latest per field is the one in force.
  CREATE TABLE goal_reviews (
    id INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    turn_number INTEGER NOT NULL CHECK (turn_number >= 1),
    field TEXT NOT NULL CHECK (field IN ('is_new_goal', 'quality', 'rcof')),
    value TEXT NOT NULL CHECK (json_valid(value)),
    reviewer TEXT NOT NULL,
    note TEXT,
    at TEXT NOT NULL,
    FOREIGN KEY (run_id, position) REFERENCES goal_conversations(run_id, position) ON DELETE CASCADE
  );
  CREATE INDEX goal_reviews_by_turn ON goal_reviews (run_id, position, turn_number, field);
  `,
  `
  -- The viewer's pages of one run (clade view): filtered and sorted by outcome and reward, and
  -- per-task outcomes across samples, read from the indexes alone on runs of 100k episodes.
  CREATE INDEX episodes_by_outcome ON episodes (run_id, outcome, reward);
  CREATE INDEX episodes_by_task_outcome ON episodes (run_id, task_index, outcome, reward);
  `,
];
