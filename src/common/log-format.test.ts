import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { formatLogLine, formatValue, prettyDestination } from './log-format.ts';

const TIME = Date.UTC(2026, 10, 26, 22, 5, 9, 123);

describe('formatLogLine', () => {
  it('turns a pino JSON line into HH:MM:SS level component msg key=value', () => {
    const line = JSON.stringify({ level: 30, time: TIME, pid: 7, hostname: 'h', component: 'worker', msg: 'reconcile finished', result: 'done', ms: 12 });
    expect(formatLogLine(line, { utc: true })).toBe('22:05:09 info  worker reconcile finished result=done ms=12');
  });

  it("names the child logger's process, quotes text with spaces and writes objects as JSON", () => {
    const line = JSON.stringify({
      level: 40,
      time: TIME,
      component: 'ebb',
      process: 'watcher',
      msg: 'watch restarted',
      reason: 'no events for 3m',
      err: { code: 'Gone', detail: 'too old' },
      ok: false,
    });
    expect(formatLogLine(line, { utc: true })).toBe(
      '22:05:09 warn  watcher watch restarted reason="no events for 3m" err={"code":"Gone","detail":"too old"} ok=false',
    );
  });

  it('keeps a line that is not a JSON object as it is, and an unknown level as its number', () => {
    expect(formatLogLine('plain text [1]')).toBe('plain text [1]');
    expect(formatLogLine('[1,2]')).toBe('[1,2]');
    expect(formatLogLine(JSON.stringify({ level: 35, time: TIME, msg: 'x' }), { utc: true })).toBe('22:05:09 35    - x');
  });

  it('formats values for key=value', () => {
    expect(formatValue('a-b')).toBe('a-b');
    expect(formatValue('a=b')).toBe('"a=b"');
    expect(formatValue(null)).toBe('null');
    expect(formatValue([1, 'x'])).toBe('[1,"x"]');
  });
});

describe('prettyDestination', () => {
  it("writes a pino logger's lines readable, redaction still applied", () => {
    const chunks: string[] = [];
    const out = new Writable({
      write(chunk: Buffer, _enc, done) {
        chunks.push(chunk.toString());
        done();
      },
    });
    const log = pino({ base: { component: 'ebb' }, redact: { paths: ['*.password'], censor: '[redacted]' } }, prettyDestination(out));
    log.child({ process: 'worker' }).info({ auth: { password: 'hunter2' }, key: 'App/ns/web' }, 'reconcile started');
    const text = chunks.join('');
    expect(text).toMatch(/^\d\d:\d\d:\d\d info {2}worker reconcile started auth=\{"password":"\[redacted\]"\} key=App\/ns\/web\n$/);
    expect(text).not.toContain('hunter2');
  });
});
