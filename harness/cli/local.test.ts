import { afterEach, describe, expect, it, vi } from 'vitest';
import { devLogger } from './local.ts';

describe('devLogger', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  const written = (env: Record<string, string | undefined>): string => {
    const lines: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    devLogger('ebb', env).child({ process: 'worker' }).info({ result: 'done' }, 'reconcile finished');
    vi.restoreAllMocks();
    return lines.join('');
  };

  it('prints readable lines by default, as make run and the sandbox do', () => {
    expect(written({})).toMatch(/^\d\d:\d\d:\d\d info {2}worker reconcile finished result=done\n$/);
  });

  it('prints JSON lines when EBB_LOG_FORMAT says json', () => {
    expect(JSON.parse(written({ EBB_LOG_FORMAT: 'json' }))).toMatchObject({ level: 30, component: 'ebb', process: 'worker', msg: 'reconcile finished' });
  });
});
