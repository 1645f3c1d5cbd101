/** Whether `labels` carry every key of `selector` with its value (an equality-only label selector; empty or absent: all). */
export function matchesLabels(labels: Readonly<Record<string, string>>, selector: Readonly<Record<string, string>> | undefined): boolean {
  return Object.entries(selector ?? {}).every(([k, v]) => labels[k] === v);
}
