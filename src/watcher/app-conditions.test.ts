import { describe, expect, it } from 'vitest';
import { AppStates } from './app-conditions.ts';

const app = (conditions: { type: string; status: string; reason?: string }[]) => ({ metadata: { name: 'x' }, status: { conditions } });

describe('AppStates', () => {
  it('counts Apps by alertable state, follows their changes, forgets deleted and unlisted ones', () => {
    const s = new AppStates();
    s.seen('App a/held', app([{ type: 'RolloutHeld', status: 'True' }]));
    s.seen(
      'App a/late',
      app([
        { type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' },
        { type: 'Aborted', status: 'True' },
      ]),
    );
    s.seen(
      'App a/fine',
      app([
        { type: 'RolloutHeld', status: 'False' },
        { type: 'Progressing', status: 'False', reason: 'RolloutComplete' },
      ]),
    );
    s.seen('App b/q', app([{ type: 'Quarantined', status: 'True' }]));
    expect(s.counts()).toEqual({ rollout_held: 1, aborted: 1, quarantined: 1, invalid_spec: 0, failed_create_pod: 0, progress_deadline_exceeded: 1 });
    s.seen('App a/held', app([{ type: 'RolloutHeld', status: 'False' }]));
    s.gone('App a/late');
    expect(s.counts()).toMatchObject({ rollout_held: 0, aborted: 0, progress_deadline_exceeded: 0, quarantined: 1 });
    s.retain((k) => !k.startsWith('App b/'));
    expect(s.counts().quarantined).toBe(0);
  });
});
