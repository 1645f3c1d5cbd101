import { describe, expect, it } from 'vitest';
import { NodeLabels } from './node-labels.ts';

const node = (name: string, labels: Record<string, string> = {}) => ({ metadata: { name, labels } });

describe('NodeLabels', () => {
  it('reports a node that joins, is relabelled or leaves; not a status or heartbeat update', () => {
    const labels = new NodeLabels();
    expect(labels.change(node('a', { pool: 'gpu' }))).toBe('added');
    expect(labels.change(node('a', { pool: 'gpu' }), 'MODIFIED')).toBe('none');
    expect(labels.change(node('a', { pool: 'cpu' }), 'MODIFIED')).toBe('relabelled');
    expect(labels.change(node('a', { pool: 'cpu' }), 'DELETED')).toBe('deleted');
    expect(labels.change(node('a', { pool: 'cpu' }), 'DELETED'), 'a node not known').toBe('none');
    expect(labels.change(node('a', { pool: 'cpu' }), 'ADDED')).toBe('added');
    expect(labels.size).toBe(1);
  });
});
