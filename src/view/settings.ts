/** The shared view's setting: read by the watcher (it writes the view) and by the worker (it reads it). */
import { table } from '../common/settings.ts';

export const VIEW_SETTINGS = table({
  view: {
    name: 'EBB_VIEW',
    type: 'switch',
    default: true,
    doc: "the watcher keeps each App and its pods (the fields ebb reads) in Redis from its watch events, and the workers' reconciles read them there instead of a GET of the App and a LIST of its pods, whenever the view is whole and has seen ebb's own last writes (else they read fresh); set the same in the watcher and the workers",
  },
});
