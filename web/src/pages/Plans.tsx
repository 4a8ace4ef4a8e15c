import { useState } from 'react';
import { ErrorAlert } from '../ErrorAlert';
import { SelectField } from '../SelectField';
import { api, type Plan } from '../api';
import { useLoad } from '../load';

const STATUSES = ['draft', 'active', 'completed', 'paused', 'archived', 'cancelled'] as const;
type Status = (typeof STATUSES)[number];

/** A labelled progress bar: `done` of `total`. */
function Progress({ label, done, total }: { label: string; done: number; total: number }) {
  const percent = total === 0 ? 0 : Math.round((done / total) * 100);
  return (
    <div className="progress">
      <span>
        {label}: {done} of {total}
      </span>
      <progress aria-label={`${label} done`} max={Math.max(total, 1)} value={done}>
        {percent} %
      </progress>
    </div>
  );
}

/** Hours spent (of the estimate); nothing for a plan without either, as auto-created ones are. */
function hours(plan: Plan): string | null {
  if (plan.estimated_hours == null) return plan.actual_hours == null ? null : `${plan.actual_hours} h spent`;
  return `${plan.actual_hours ?? 0} of ${plan.estimated_hours} h`;
}

/** Every plan (project) with its status, priority, phase and task progress and hours; filtered by status. */
export function Plans() {
  const [status, setStatus] = useState<Status | ''>('');
  const { data, error } = useLoad(
    () => api.GET('/api/v1/plans', { params: { query: { limit: 500, ...(status ? { status } : {}) } } }),
    [status],
  );
  const plans = data?.plans ?? null;

  return (
    <section aria-labelledby="plans-title">
      <div className="toolbar">
        <h1 id="plans-title">Plans</h1>
        <SelectField<Status | ''> label="Status" value={status} options={STATUSES} onChange={setStatus} empty="any" />
      </div>
      <ErrorAlert error={error} />
      {plans === null && !error && <p className="status">Loading…</p>}
      {plans?.length === 0 && <p className="status">No plans{status ? ` with status ${status}` : ''} yet.</p>}
      <ul className="cards">
        {plans?.map((plan) => (
          <li key={plan.id} className="card" aria-label={`Plan ${plan.title}`}>
            <h2>{plan.title}</h2>
            <p className="meta">
              <span className={`badge status-${plan.status}`}>{plan.status}</span> priority {plan.priority}
              {hours(plan) && ` · ${hours(plan)}`}
            </p>
            {plan.description && <p>{plan.description}</p>}
            <Progress label="Phases" done={plan.phases_completed} total={plan.phases_total} />
            <Progress label="Tasks" done={plan.tasks_completed} total={plan.tasks_total} />
          </li>
        ))}
      </ul>
    </section>
  );
}
