/** What a process runs (`muninn serve --role`, DESIGN §8). */
export type Role = 'all' | 'api' | 'worker';

export interface RolePlan {
  /** GraphQL, webhooks, health checks. */
  api: boolean;
  /** Queue workers: turns, model calls, deliveries, summarizer, maintenance. */
  workers: boolean;
  /** Channel transports (pollers, sockets) whose cluster-wide lease this process takes (`channels.run_on`), and their deliveries. */
  channels: boolean;
}

export const ROLES: Record<Role, RolePlan> = {
  all: { api: true, workers: true, channels: true },
  api: { api: true, workers: false, channels: true },
  worker: { api: false, workers: true, channels: true },
};

export function isRole(value: string): value is Role {
  return value in ROLES;
}
