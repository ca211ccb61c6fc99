import type { Job } from 'bullmq';

// TRANSITIONAL: replaced by the webhook delivery implementation (issue 6).
export async function deliverWebhookJob(job: Job): Promise<void> {
  throw new Error(`webhook delivery not implemented yet (job ${job.id})`);
}
