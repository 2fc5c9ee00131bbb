// The decision the agent queues, and what of it goes on the wire. A step-up adds two things the
// contract is gaining (issue 22): `stepUpFactor` (how an admission was reached) and the denial reason
// `step_up_failed`. The queue keeps them whatever the contract says; the upload sends them only once
// the contract's SyncItem knows them, so a cloud that validates strictly never rejects (and the
// agent never drops) a decision for a field it does not know yet.
import { DenialReason, SyncItem } from '@portico/contract';

/** The second factor that completed a step-up at this device. */
export type StepUpFactor = 'qr' | 'staff';

export type QueuedItem = Omit<SyncItem, 'reason'> & {
  reason: SyncItem['reason'] | 'step_up_failed';
  stepUpFactor?: StepUpFactor;
};

const CONTRACT_HAS_STEP_UP_FACTOR = 'stepUpFactor' in SyncItem.shape;
const CONTRACT_HAS_STEP_UP_FAILED = DenialReason.safeParse('step_up_failed').success;

/** The item as the contract the agent was built with accepts it. */
export function wireItem(item: QueuedItem): SyncItem {
  const { stepUpFactor, reason, ...rest } = item;
  return {
    ...rest,
    reason: reason === 'step_up_failed' && !CONTRACT_HAS_STEP_UP_FAILED ? 'not_recognised' : reason,
    ...(stepUpFactor && CONTRACT_HAS_STEP_UP_FACTOR && { stepUpFactor }),
  } as SyncItem;
}
