import { describe, expect, it } from 'vitest';
import { errorFirstLine, errorMessage, errorSummary } from './errors.ts';

describe('error summaries', () => {
  it('keep the message of an Error and the text of anything else', () => {
    expect(errorMessage(new Error('boom'))).toBe('boom');
    expect(errorMessage('plain')).toBe('plain');
    expect(errorFirstLine(new Error('first\nsecond'))).toBe('first');
  });
  it('keep only a string code and the message, never the rest of a client exception', () => {
    const err = Object.assign(new Error('refused'), { code: 'ECONNREFUSED', request: { headers: { authorization: 'Bearer x' } } });
    expect(errorSummary(err)).toEqual({ code: 'ECONNREFUSED', message: 'refused' });
    expect(errorSummary(Object.assign(new Error('grpc'), { code: 14 }))).toEqual({ message: 'grpc' });
    expect(errorSummary(42)).toEqual({ message: '42' });
  });
});
