import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { floorProblems, readFloors } from './floors.ts';

const SRC = fileURLToPath(new URL('../../../src/', import.meta.url));
const floors = readFloors(fileURLToPath(new URL('floors.json', import.meta.url)));
const problems = floorProblems(SRC, floors);

// The floors of src/, read from the code (floors.json holds the allow-list and the ratchet lists). A failure
// names the import or the read; a ratchet entry that became true is removed from the list, never added back.
describe('the floors of src/', () => {
  it('has no import cycle between its files but those listed, which only shrink', () => {
    expect(problems.cycles).toEqual([]);
  });

  it(`keeps the rooms of ${floors.rooms.folder}: only allowed room arrows, no new back-arrow to the roof`, () => {
    expect(problems.rooms).toEqual([]);
  });

  it(`allows no two rooms of ${floors.rooms.folder} to import each other`, () => {
    const arrows = new Set(floors.rooms.allowed);
    const twoWay = floors.rooms.allowed.filter((arrow) => {
      const [from, to] = arrow.split(' → ');
      return arrows.has(`${to} → ${from}`);
    });
    expect(twoWay).toEqual([]);
  });

  it(`lets files outside ${floors.reachIn.folder} import only its ground floor, but for the files listed, which only shrink`, () => {
    expect(problems.reachIn).toEqual([]);
  });

  it('lets only the plan loop, the reconcile and ebb rollout explain import the planner', () => {
    expect(problems.gates).toEqual([]);
  });

  it(`reads ${floors.direct.property} only in ${floors.direct.resolver}, but for the files listed, which only shrink`, () => {
    expect(problems.reads).toEqual([]);
  });
});
