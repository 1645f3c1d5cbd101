/**
 * Durations as the CRD accepts them (Go-style, units h, m, s, ms, e.g. `90s`, `1h30m`, `1.5m`), for canary
 * pause steps: the same parser every ebb setting uses.
 */
export { parseDuration } from '../common/duration.ts';
