import { z } from 'zod';
import { getJob, GetJobResultSchema, renderJob } from '../domain/jobs.js';
import { hexId } from '../domain/fields.js';
import { defineOperation } from './operation.js';

export const getJobOp = defineOperation({
  name: 'devstream_get_job',
  title: 'Get job',
  description:
    "A background job's status (queued, running, succeeded, failed), progress, result or error. " +
    'repo {action: "analyze", path} starts one and answers with its jobId.',
  action: 'getting job',
  input: z.strictObject({ jobId: hexId.describe('The job id an action answered with') }),
  output: GetJobResultSchema,
  scope: 'read',
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  routes: [{ method: 'GET', path: '/jobs/:jobId' }],
  handler: getJob,
  render: renderJob,
});

export const jobOperations = [getJobOp];
