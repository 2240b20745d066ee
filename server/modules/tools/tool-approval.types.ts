import { registerEnumType } from 'type-graphql';
import { ToolApprovalStatus } from './tool-approval.entity';

/** What an OWNER or ADMIN answers to a paused tool call. */
export enum ToolApprovalDecision {
  ALLOW_ONCE = 'ALLOW_ONCE',
  ALLOW_ALWAYS = 'ALLOW_ALWAYS',
  DENY = 'DENY',
}
registerEnumType(ToolApprovalDecision, {
  name: 'ToolApprovalDecision',
  description: 'ALLOW_ONCE runs this call; ALLOW_ALWAYS also approves later calls of the tool by the same user; DENY refuses it.',
});

/** The status a decision leads to. */
export const STATUS_OF_DECISION = {
  [ToolApprovalDecision.ALLOW_ONCE]: ToolApprovalStatus.ALLOWED_ONCE,
  [ToolApprovalDecision.ALLOW_ALWAYS]: ToolApprovalStatus.ALLOWED_ALWAYS,
  [ToolApprovalDecision.DENY]: ToolApprovalStatus.DENIED,
} as const satisfies Record<ToolApprovalDecision, ToolApprovalStatus>;

/** Parses `allow_once`, `ALLOW-ALWAYS`, `deny`, … (chat `/approve`); null when it is none of them. */
export function parseToolApprovalDecision(value: string): ToolApprovalDecision | null {
  const norm = value.trim().toUpperCase().replace(/-/g, '_');
  return (Object.values(ToolApprovalDecision) as string[]).includes(norm) ? (norm as ToolApprovalDecision) : null;
}

/** True for the statuses that let the call run. */
export function isApproved(status: ToolApprovalStatus): boolean {
  return status === ToolApprovalStatus.ALLOWED_ONCE || status === ToolApprovalStatus.ALLOWED_ALWAYS;
}
