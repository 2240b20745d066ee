import { useState } from 'react';
import { DecideToolApprovalDocument, type ToolApprovalDecision } from '../../gql/graphql';
import { useMutation } from '../../lib/use-graphql';
import { ErrorBox } from '../../components/ui';
import { DecisionButtons } from '../approvals/decision-buttons';

/** An approval request inside the chat, decided in place (ADMIN and above; the server checks who may). */
export function InlineApproval({ id, text, status: known }: { id: string; text: string; status: string | null }) {
  const decide = useMutation(DecideToolApprovalDocument);
  const [decided, setStatus] = useState<string | null>(null);
  const status = decided ?? (known && known !== 'PENDING' ? known : null);
  const go = async (decision: ToolApprovalDecision) => {
    const r = await decide.run({ id, decision });
    if (r) setStatus(r.decideToolApproval.status);
  };
  return (
    <div className="approval" role="group" aria-label="Tool approval">
      <div style={{ marginBottom: 8 }}>{text.split('\n')[0]}</div>
      {status ? (
        <div className="small">Decided: {status}</div>
      ) : (
        <DecisionButtons busy={decide.busy} onDecide={(d) => void go(d)} />
      )}
      <ErrorBox error={decide.error} />
    </div>
  );
}
