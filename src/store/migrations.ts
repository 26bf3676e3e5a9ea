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
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );

  CREATE TABLE episodes (
    id INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    task_index INTEGER NOT NULL,
    sample_index INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    outcome TEXT NOT NULL CHECK (outcome IN ('success', 'failure', 'error')),
    reward REAL NOT NULL,
    end_reason TEXT NOT NULL,
    error TEXT,
    initial_observation TEXT,
    initial_actions TEXT,
    turns INTEGER NOT NULL,
    started_at TEXT NOT NULL,
    duration_ms REAL NOT NULL,
    UNIQUE (run_id, task_index, sample_index)
  );

  -- One JSON document of steps per episode (see trajectory-codec.ts).
  CREATE TABLE trajectories (
    episode_id INTEGER PRIMARY KEY REFERENCES episodes(id) ON DELETE CASCADE,
    steps TEXT NOT NULL
  );
  `,
];
