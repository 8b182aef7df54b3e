import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderSlots } from './render-slots.js';

describe('render slots', () => {
  it('runs at most `size` at once, the others in the order they asked, and frees a slot whether the work resolves or fails', async () => {
    const inSlot = renderSlots(2);
    const gates = new Map<string, { resolve: () => void; reject: (error: Error) => void }>();
    const started: string[] = [];
    const work = (name: string) => () => {
      started.push(name);
      return new Promise<void>((resolve, reject) => gates.set(name, { resolve, reject }));
    };
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    const done = ['a', 'b', 'c', 'd'].map((name) => inSlot(work(name)));
    await turn();
    assert.deepEqual(started, ['a', 'b']);
    gates.get('b')!.reject(new Error('render failed'));
    await assert.rejects(done[1], /render failed/);
    await turn();
    assert.deepEqual(started, ['a', 'b', 'c'], 'the failed one gave its slot to the oldest waiting');
    gates.get('a')!.resolve();
    await turn();
    assert.deepEqual(started, ['a', 'b', 'c', 'd']);
    gates.get('c')!.resolve();
    gates.get('d')!.resolve();
    await Promise.all([done[0], done[2], done[3]]);
    // Every slot is free again: two start at once.
    const later = [inSlot(work('e')), inSlot(work('f'))];
    await turn();
    assert.deepEqual(started.slice(4), ['e', 'f']);
    for (const name of ['e', 'f']) gates.get(name)!.resolve();
    await Promise.all(later);
  });
});
