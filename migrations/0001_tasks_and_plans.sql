-- Projects → phases → tasks, after DevStream's intervention_plans / phases / micro_tasks
-- (same columns, CHECKs and indexes), with the fixes of design.md §9:
--   * updated_at on every table (kept by a trigger), created_by (the caller's key name);
--   * one plan status set, shared by the tool and the schema;
--   * plan titles unique case-insensitively, phase names unique per plan case-insensitively,
--     so concurrent auto-creation makes exactly one row (INSERT … ON CONFLICT DO NOTHING);
--   * ids are 12 lowercase hex characters.

CREATE FUNCTION devstream_set_updated_at() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.updated_at := now();
  RETURN NEW;
END $$;

CREATE TABLE intervention_plans (
  id               varchar(32) PRIMARY KEY CHECK (id ~ '^[0-9a-f]{12}$'),
  title            varchar(200) NOT NULL CHECK (btrim(title) <> ''),
  description      text,
  objectives       jsonb NOT NULL DEFAULT '[]',
  technical_specs  jsonb,
  expected_outcome text NOT NULL,
  status           varchar(20) NOT NULL DEFAULT 'active'
                   CHECK (status IN ('draft', 'active', 'completed', 'paused', 'archived', 'cancelled')),
  priority         integer NOT NULL DEFAULT 5 CHECK (priority BETWEEN 1 AND 10),
  estimated_hours  double precision,
  actual_hours     double precision,
  tags             jsonb,
  metadata         jsonb,
  created_by       text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  completed_at     timestamptz
);
CREATE UNIQUE INDEX intervention_plans_title_key ON intervention_plans (lower(title));
CREATE INDEX idx_intervention_plans_status ON intervention_plans (status);
CREATE INDEX idx_intervention_plans_priority ON intervention_plans (priority DESC);
CREATE INDEX idx_intervention_plans_created_at ON intervention_plans (created_at DESC);
CREATE TRIGGER intervention_plans_updated_at BEFORE UPDATE ON intervention_plans
  FOR EACH ROW EXECUTE FUNCTION devstream_set_updated_at();

CREATE TABLE phases (
  id                  varchar(32) PRIMARY KEY CHECK (id ~ '^[0-9a-f]{12}$'),
  plan_id             varchar(32) NOT NULL REFERENCES intervention_plans (id) ON DELETE CASCADE,
  name                varchar(200) NOT NULL CHECK (btrim(name) <> ''),
  description         text,
  sequence_order      integer NOT NULL,
  is_parallel         boolean,
  dependencies        jsonb,
  status              varchar(20) NOT NULL DEFAULT 'pending'
                      CHECK (status IN ('pending', 'active', 'completed', 'blocked', 'skipped')),
  estimated_minutes   integer,
  actual_minutes      integer,
  blocking_reason     text,
  completion_criteria text,
  created_by          text,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now(),
  started_at          timestamptz,
  completed_at        timestamptz
);
CREATE UNIQUE INDEX phases_plan_name_key ON phases (plan_id, lower(name));
CREATE INDEX idx_phases_plan_id ON phases (plan_id);
CREATE INDEX idx_phases_status ON phases (status);
CREATE INDEX idx_phases_sequence_order ON phases (plan_id, sequence_order);
CREATE TRIGGER phases_updated_at BEFORE UPDATE ON phases
  FOR EACH ROW EXECUTE FUNCTION devstream_set_updated_at();

CREATE TABLE micro_tasks (
  id                      varchar(32) PRIMARY KEY CHECK (id ~ '^[0-9a-f]{12}$'),
  phase_id                varchar(32) NOT NULL REFERENCES phases (id) ON DELETE CASCADE,
  title                   varchar(200) NOT NULL CHECK (btrim(title) <> ''),
  description             text NOT NULL,
  max_duration_minutes    integer CHECK (max_duration_minutes <= 10),
  max_context_tokens      integer,
  assigned_agent          varchar(50),
  task_type               varchar(20) NOT NULL
                          CHECK (task_type IN ('analysis', 'coding', 'documentation', 'testing', 'review', 'research')),
  status                  varchar(20) NOT NULL DEFAULT 'pending'
                          CHECK (status IN ('pending', 'active', 'completed', 'failed', 'skipped')),
  priority                integer NOT NULL CHECK (priority BETWEEN 1 AND 10),
  input_files             jsonb,
  output_files            jsonb,
  generated_code          text,
  documentation           text,
  error_log               text,
  actual_duration_minutes double precision,
  context_tokens_used     integer,
  retry_count             integer,
  parent_task_id          varchar(32) REFERENCES micro_tasks (id) ON DELETE SET NULL,
  created_by              text,
  created_at              timestamptz NOT NULL DEFAULT now(),
  updated_at              timestamptz NOT NULL DEFAULT now(),
  started_at              timestamptz,
  completed_at            timestamptz,
  last_retry_at           timestamptz
);
CREATE INDEX idx_micro_tasks_phase_id ON micro_tasks (phase_id);
CREATE INDEX idx_micro_tasks_status ON micro_tasks (status);
CREATE INDEX idx_micro_tasks_assigned_agent ON micro_tasks (assigned_agent);
CREATE INDEX idx_micro_tasks_priority ON micro_tasks (priority DESC);
CREATE INDEX idx_micro_tasks_parent_task_id ON micro_tasks (parent_task_id);
-- The task list's order (most important first, then newest), so a page is an index scan, also
-- under a status filter; counts of matches are index-only scans of the same indexes.
CREATE INDEX idx_micro_tasks_listing ON micro_tasks (priority DESC, created_at DESC, id);
CREATE INDEX idx_micro_tasks_status_listing ON micro_tasks (status, priority DESC, created_at DESC, id);
-- Per-phase task counts for plan progress: an index-only scan per phase.
CREATE INDEX idx_micro_tasks_phase_status ON micro_tasks (phase_id, status);
CREATE TRIGGER micro_tasks_updated_at BEFORE UPDATE ON micro_tasks
  FOR EACH ROW EXECUTE FUNCTION devstream_set_updated_at();

CREATE TABLE task_status_history (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  task_id     varchar(32) NOT NULL REFERENCES micro_tasks (id) ON DELETE CASCADE,
  from_status varchar(20) NOT NULL,
  to_status   varchar(20) NOT NULL,
  notes       text,
  created_by  text,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX idx_task_status_history_task ON task_status_history (task_id, created_at);
