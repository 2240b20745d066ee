import type { ToolApprovalDecision } from '../../gql/graphql';

/** Allow once / always / deny: the three decisions on a tool approval. */
export function DecisionButtons({ busy, onDecide }: { busy: boolean; onDecide(decision: ToolApprovalDecision): void }) {
  return (
    <div className="row">
      <button className="primary small" disabled={busy} onClick={() => onDecide('ALLOW_ONCE')}>
        Allow once
      </button>
      <button className="small" disabled={busy} onClick={() => onDecide('ALLOW_ALWAYS')}>
        Always allow
      </button>
      <button className="danger small" disabled={busy} onClick={() => onDecide('DENY')}>
        Deny
      </button>
    </div>
  );
}
